"""Completion of `about:` references in a memory's frontmatter: paths, then symbols.

Inside the `about:` list (block items `- …`, `- ref: …`, or a flow list `[…, …]`), a
partial reference is completed one step at a time:

* `src/ne` — the entries of the folder `src/` that start with `ne` (folders first, then
  files), skipping `.git`, `.moor`, virtualenvs, `node_modules` and the engine's `ignore`
  globs.
* `src/net/client.py#Cl` — the file's qualified names (`Client`, `Client.send`, …;
  heading breadcrumbs for Markdown) that start with `Cl`.

Each item's edit replaces the word at the cursor (`filtered_from`: `src/net/ne`, or `se`
of `Client.se`), and its `filterText` and `insertText` are the completed reference from
there, so a client filtering on the word (eglot) and one filtering on the edit's range (VS
Code, Neovim) both match; the label is the segment offered.

The editor's copy of the memory is read line by line (it is often not valid YAML while it
is typed); folder listing and parsing run in the engine thread.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from moor_engine.workspace.config import BUILTIN_IGNORES, ConfigError
from moor_engine.workspace.workspace import Workspace
from moor_extractors.languages import language_for_path
from moor_extractors.model import Failure
from moor_extractors.reference import normalise_path, resolve_path

from moor_lsp.code import read_code
from moor_lsp.documents import is_memory
from moor_lsp.features import Feature
from moor_lsp.positions import from_client_character, split_lines, to_client_character

TRIGGERS = ["/", "#", "."]
LIMIT = 500
KINDS: dict[str, types.CompletionItemKind] = {
    "class": types.CompletionItemKind.Class,
    "struct": types.CompletionItemKind.Struct,
    "record": types.CompletionItemKind.Struct,
    "interface": types.CompletionItemKind.Interface,
    "trait": types.CompletionItemKind.Interface,
    "enum": types.CompletionItemKind.Enum,
    "function": types.CompletionItemKind.Function,
    "method": types.CompletionItemKind.Method,
    "constructor": types.CompletionItemKind.Constructor,
    "module": types.CompletionItemKind.Module,
    "constant": types.CompletionItemKind.Constant,
    "variable": types.CompletionItemKind.Variable,
    "field": types.CompletionItemKind.Field,
    "property": types.CompletionItemKind.Property,
    "type": types.CompletionItemKind.TypeParameter,
    "macro": types.CompletionItemKind.Function,
    "section": types.CompletionItemKind.Reference,
}

_TOP_LEVEL_KEY = re.compile(r"^([^\s#\-][^:]*):")
_OTHER_KEY = re.compile(r"^\s*(?:-\s+)?([A-Za-z_][\w-]*)\s*:(?:\s|$)")
_PARTIAL = re.compile(
    r"(?:^\s*-\s+(?:ref:\s+)?|^\s+ref:\s+|^about:\s*\[?\s*|[\[,]\s*)"
    r"[\"']?(?P<token>[^\s\"',\[\]#]*(?:#[^\"',\[\]]*)?)$"
)


@dataclass(frozen=True)
class Partial:
    """The reference being typed: its text before the cursor and where it starts."""

    start: int  # 0-based code-point column
    text: str


def partial_reference(lines: list[str], line: int, column: int) -> Partial | None:
    """The partial `about:` reference ending at (line, column), if the cursor is in the
    frontmatter's `about:` list at a place where a reference is written."""
    if not lines or lines[0].rstrip() != "---" or not 0 < line < len(lines):
        return None
    for index in range(1, line + 1):
        if lines[index].rstrip() in ("---", "..."):
            return None  # the cursor is past the end of the frontmatter
    if not _in_about(lines, line):
        return None
    before = lines[line][:column]
    key = _OTHER_KEY.match(before)
    if key is not None and key.group(1) not in ("about", "ref"):
        return None  # `watch: [...]` inside an item, or another key
    match = _PARTIAL.search(before)
    if match is None:
        return None
    return Partial(match.start("token"), match.group("token"))


def _in_about(lines: list[str], line: int) -> bool:
    for index in range(line, 0, -1):
        key = _TOP_LEVEL_KEY.match(lines[index])
        if key is not None:
            return key.group(1).strip() == "about"
    return False


# --- the engine-thread side ---------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    name: str
    folder: bool


def list_folder(root: Path, folder: str) -> list[Entry] | None:
    """The entries of a workspace folder worth referencing, folders first, then by name."""
    if folder:
        normal = normalise_path(folder)
        if isinstance(normal, Failure):
            return None
        base = resolve_path(root, normal)
        if isinstance(base, Failure):
            return None
        prefix = normal + "/"
    else:
        base, prefix = root, ""
    try:
        workspace: Workspace | None = Workspace.open(root)
    except ConfigError:
        workspace = None
    entries: list[Entry] = []
    try:
        scan = list(os.scandir(base))
    except OSError:
        return None
    for item in scan:
        name = item.name
        if name in BUILTIN_IGNORES:
            continue
        try:
            is_folder = item.is_dir()
        except OSError:
            continue
        rel = prefix + name
        if workspace is not None and not workspace.counts(rel, folder=is_folder):
            continue  # the rule every other listing follows (Workspace.counts)
        if is_folder and os.path.exists(os.path.join(item.path, "pyvenv.cfg")):
            continue  # a virtualenv under another name
        entries.append(Entry(name, is_folder))
    entries.sort(key=lambda e: (not e.folder, e.name.lower(), e.name))
    return entries


def list_symbols(root: Path, rel: str) -> list[tuple[str, str]]:
    """(symbol, kind) for each symbol that names definitions of the file exactly — what
    `moor symbols` lists."""
    normal = normalise_path(rel)
    if isinstance(normal, Failure):
        return []
    code = read_code(root, normal)
    if code is None:
        return []
    return [(symbol.symbol, symbol.kind) for symbol in code.symbols()]


# A word as Markdown editors read one (markdown-mode's symbol characters): letters, digits,
# `_`, `-` and `/`; `.`, `#`, quotes and spaces end it.
_WORD = re.compile(r"[\w/-]*\Z")


def filtered_from(typed: str, segment: int, completed: list[str]) -> int:
    """Where, in the reference typed so far, the text the client filters the items on
    starts: the word at the cursor (eglot filters on the symbol at point, whatever the
    edit's range; VS Code and Neovim on the edit's range, which then starts there too), so
    `src/flask/sess` is matched as a whole and `Client.se` from `se`. Where a completed
    reference does not repeat the typed text before that (a case or spacing the match
    forgave), the segment being completed (`segment`) is the start, as before."""
    match = _WORD.search(typed)
    start = match.start() if match is not None else segment
    if all(whole.startswith(typed[:start]) for whole in completed):
        return start
    return segment


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


class Completion(Feature):
    name = "completion"

    def register(self) -> None:
        self.handle(
            types.TEXT_DOCUMENT_COMPLETION,
            self.completion,
            None,
            types.CompletionOptions(trigger_characters=TRIGGERS, resolve_provider=False),
        )

    async def completion(self, params: types.CompletionParams) -> types.CompletionList | None:
        uri = params.text_document.uri
        served = self.server.folder_for(uri)
        rel = served.relative(uri) if served is not None else None
        if served is None or rel is None or not is_memory(served, rel):
            return None
        root = served.root
        lines = split_lines(self.server.workspace.get_text_document(uri).source)
        line = params.position.line
        if line >= len(lines):
            return None
        encoding = self.server.position_encoding
        text = lines[line]
        column = from_client_character(text, params.position.character, encoding)
        partial = partial_reference(lines, line, column)
        if partial is None:
            return None

        def edit_range(start: int) -> types.Range:
            return types.Range(
                start=types.Position(
                    line=line, character=to_client_character(text, start, encoding)
                ),
                end=params.position,
            )

        # (label, kind, detail, sort text, the reference as it reads once completed)
        found: list[tuple[str, types.CompletionItemKind, str | None, str | None, str]] = []
        if "#" in partial.text:
            path, _, typed = partial.text.partition("#")
            segment = len(path) + 1
            wanted = _squash(typed)
            for name, kind in await self.server.in_reader(list_symbols, root, path):
                if _squash(name).startswith(wanted):
                    kinded = KINDS.get(kind, types.CompletionItemKind.Reference)
                    found.append((name, kinded, kind, None, f"{path}#{name}"))
        else:
            folder, slash, typed = partial.text.rpartition("/")
            segment = len(folder) + len(slash)
            entries = await self.server.in_reader(list_folder, root, folder)
            for entry in entries or []:
                if entry.name.startswith(".") and not typed.startswith("."):
                    continue
                if not entry.name.lower().startswith(typed.lower()):
                    continue
                new_text = entry.name + "/" if entry.folder else entry.name
                found.append(
                    (
                        new_text,
                        types.CompletionItemKind.Folder
                        if entry.folder
                        else types.CompletionItemKind.File,
                        None if entry.folder else language_for_path(entry.name),
                        f"{0 if entry.folder else 1}{len(found):05d}",
                        partial.text[:segment] + new_text,
                    )
                )
        start = filtered_from(partial.text, segment, [whole for *_, whole in found])
        where = edit_range(partial.start + start)
        items = [
            types.CompletionItem(
                label=label,
                kind=kind,
                detail=detail,
                sort_text=sort_text,
                text_edit=types.TextEdit(range=where, new_text=whole[start:]),
                filter_text=whole[start:],
                insert_text=whole[start:],
            )
            for label, kind, detail, sort_text, whole in found
        ]
        incomplete = len(items) > LIMIT
        return types.CompletionList(is_incomplete=incomplete, items=items[:LIMIT])
