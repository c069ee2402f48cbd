"""`about:` references: parsing their grammar (docs/memories.md) and confining paths to the
workspace.

Grammar (one string): ``PATH``, ``PATH#SYMBOL`` or ``anchor:NAME``.

* ``PATH`` is workspace-relative with ``/`` separators. ``.`` segments and empty segments
  are dropped (``./a//b.py`` → ``a/b.py``). Absolute paths (``/x``, ``//host/x``, ``C:\\x``,
  ``C:/x``, ``~/x``) and any ``..`` segment are refused. A ``#`` cannot occur in a path: the
  first ``#`` always starts the symbol.
* ``SYMBOL`` in a code file is a qualified name with dots between levels (``Class.method``);
  no level may be empty or contain whitespace. It may end in one parenthesised, balanced
  list that picks one of several same-named definitions (`moor_extractors.resolve`):
  parameter types in Java and TypeScript (``Registry.lookup(String, int)``), the trait in
  Rust (``Pattern.fmt(Display)``). Inside it whitespace is allowed and normalised
  (`canonical_spelling`), so ``lookup(Map<String,Integer> , int)`` is
  ``lookup(Map<String, Integer>, int)``. In a Markdown file (``.md``/``.markdown``,
  any case) it is a heading breadcrumb; levels are separated by ``>``, whitespace around
  and inside each level is collapsed, so ``A>B`` and ``A  >  B`` both become ``A > B``.
  A heading that itself contains ``>`` cannot be referenced.
* ``anchor:NAME`` names a custom anchor declared in ``moor.toml``; NAME is made of letters,
  digits, ``_``, ``-`` and ``.``. The lowercase prefix ``anchor:`` is reserved: a file
  literally called ``anchor:x`` cannot be referenced.

Refusals are `Failure` values (never exceptions), all with ``Reason.UNEVALUABLE``:

* ``bad_reference`` — the string is malformed (empty, empty symbol, whitespace-only or
  padded parts, backslashes, control or bidi characters, ``..`` that stays inside, URLs).
* ``outside_workspace`` — the reference would leave the workspace (absolute path, a ``..``
  that climbs above the root, or — in `resolve_path` — a symlink whose target is outside).

Neither is an observation (docs/memories.md): the engine must not journal them as attempts. A
refused reference makes its memory ``invalid`` (docs/memories.md); `moor_extractors.memory`
reports parse-time refusals as problems at the reference's position.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from .model import Failure, Reason

if TYPE_CHECKING:
    from .lang_base import LanguageSpec

ANCHOR_PREFIX = "anchor:"
MARKDOWN_SUFFIXES: tuple[str, ...] = (".md", ".markdown")
BREADCRUMB_SEPARATOR = " > "

BAD_REFERENCE = "bad_reference"
OUTSIDE_WORKSPACE = "outside_workspace"

_ANCHOR_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
# C0/C1 controls and DEL, Unicode line/paragraph separators, and the bidi controls that
# can make a reference display differently from what it is ("Trojan Source").
_FORBIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]"
)
_DRIVE = re.compile(r"[A-Za-z]:")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_WHITESPACE_RUN = re.compile(r"\s+")
# Spaces that carry no meaning in a type: inside brackets (`Map< K >`), before a comma or
# an opening bracket (`int []`), around `::` and `.`. Others stay (`dyn Error + 'a`).
_LOOSE_SPACE = re.compile(r"(?<=[<(\[{.]) | (?=[>)\]},<(\[.])|(?<=::) | (?=::)")
_COMMA = re.compile(r", ?")


@dataclass(frozen=True)
class Reference:
    """One parsed `about:` reference. Exactly one of `path` and `anchor` is set."""

    path: str | None
    symbol: str | None
    anchor: str | None

    def canonical(self) -> str:
        """The anchor key: ``PATH``, ``PATH#SYMBOL`` or ``anchor:NAME``.

        Two spellings of the same reference (``./a.py#X`` and ``a.py#X``; ``A>B`` and
        ``A > B`` in Markdown) give the same string, and `parse_reference` of it gives this
        reference back.
        """
        if self.anchor is not None:
            return ANCHOR_PREFIX + self.anchor
        path = self.path or ""
        return path if self.symbol is None else f"{path}#{self.symbol}"

    @property
    def is_markdown(self) -> bool:
        return self.path is not None and is_markdown_path(self.path)


def is_markdown_path(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_SUFFIXES)


def _bad(detail: str) -> Failure:
    return Failure(Reason.UNEVALUABLE, BAD_REFERENCE, detail)


def _outside(detail: str) -> Failure:
    return Failure(Reason.UNEVALUABLE, OUTSIDE_WORKSPACE, detail)


def _forbidden_char(text: str) -> str | None:
    match = _FORBIDDEN.search(text)
    return None if match is None else f"U+{ord(match.group()):04X}"


def normalise_path(raw: str) -> str | Failure:
    """Check and normalise a workspace-relative path (no ``#`` handling).

    Returns the normalised path (``/`` separators, no ``.`` or empty segments) or a
    `Failure` (``bad_reference`` / ``outside_workspace``). Purely lexical: no file system
    access; `resolve_path` adds the symlink check.
    """
    if raw == "":
        return _bad("the path is empty")
    char = _forbidden_char(raw)
    if char is not None:
        return _bad(f"the path {raw!r} contains the control character {char}")
    if raw.startswith("/"):
        return _outside(f"{raw!r} is absolute; write it relative to the workspace root")
    if _DRIVE.match(raw):
        return _outside(f"{raw!r} is a Windows drive path; write it relative to the workspace")
    if raw.startswith("\\"):
        return _outside(f"{raw!r} is an absolute Windows path; write it relative to the workspace")
    if "\\" in raw:
        return _bad(f"{raw!r} contains a backslash; use '/' as the path separator")
    if raw.strip() == "":
        return _bad("the path is only whitespace")
    if _URL.match(raw):
        return _bad(f"{raw!r} is a URL, not a workspace path")
    segments = [segment for segment in raw.split("/") if segment not in ("", ".")]
    depth = 0
    for segment in segments:
        if segment[0].isspace() or segment[-1].isspace():
            if segment.isspace():
                return _bad(f"{raw!r} has a path segment that is only whitespace")
            return _bad(f"the path segment {segment!r} starts or ends with whitespace")
        depth += -1 if segment == ".." else 1
        if depth < 0:
            return _outside(f"{raw!r} climbs above the workspace root with '..'")
    if ".." in segments:
        return _bad(f"{raw!r} contains a '..' segment; write the path without it")
    if not segments:
        return _bad(f"{raw!r} names the workspace root, not a file")
    if segments[0] == "~":
        return _outside(f"{raw!r} is relative to a home directory, not to the workspace")
    return "/".join(segments)


def split_spelling(symbol: str) -> tuple[str, str | None]:
    """`A.m(String, int)` -> (`A.m`, `String, int`); a symbol without a final balanced
    parenthesised list -> (symbol, None)."""
    if not symbol.endswith(")"):
        return symbol, None
    depth = 0
    for index in range(len(symbol) - 1, -1, -1):
        char = symbol[index]
        if char == ")":
            depth += 1
        elif char == "(":
            depth -= 1
            if depth == 0:
                return symbol[:index], symbol[index + 1 : -1]
    return symbol, None


def canonical_spelling(inside: str) -> str | None:
    """The one way to write a parenthesised list: every comma followed by one space, each
    item's whitespace runs collapsed and dropped inside brackets and before them
    (`Map< K ,V >` -> `Map<K, V>`, `String []` -> `String[]`; `keyof T` and
    `From<&str> for Box<str>` stay). None when its brackets do not balance."""
    items: list[str] = []
    start = 0
    closing = {")": "(", "]": "[", ">": "<", "}": "{"}
    stack: list[str] = []
    for index, char in enumerate(inside):
        if char in "([<{":
            stack.append(char)
        elif char in closing:
            if char == ">" and index > 0 and inside[index - 1] == "=":
                continue  # `=>` of a function type, not a closing bracket
            if not stack or stack.pop() != closing[char]:
                return None
        elif char == "," and not stack:
            items.append(inside[start:index])
            start = index + 1
    if stack:
        return None
    items.append(inside[start:])
    normal = [_tight(item) for item in items]
    if normal == [""]:
        return ""
    return None if "" in normal else ", ".join(normal)


def _tight(text: str) -> str:
    text = _WHITESPACE_RUN.sub(" ", text).strip()
    return _COMMA.sub(", ", _LOOSE_SPACE.sub("", text))


def _code_symbol(path: str, symbol: str) -> str | Failure:
    head, inside = split_spelling(symbol)
    head = _moors_spelling(path, head)
    if inside is None:  # a pasted form may bring its own (`<T as Trait>::m` is `T.m(Trait)`)
        head, inside = split_spelling(head)
    if inside is not None:
        spelling = canonical_spelling(inside)
        if spelling is None:
            return _bad(
                f"the symbol {symbol!r} has unbalanced brackets or an empty item in its '(…)'"
            )
        levels = _code_levels(head, symbol)
        return levels if isinstance(levels, Failure) else f"{head}({spelling})"
    return _code_levels(head, symbol)


def _moors_spelling(path: str, head: str) -> str:
    """A qualified name pasted in another tool's spelling (`Client::send`, `(*T).Method`,
    `Class/method`) as moor spells it (`Client.send`), as the path's language reads it:
    two spellings of one symbol are one reference, so one lock key."""
    language_for_path, spec_for = _spelling_parts()
    language = language_for_path(path)
    if language is None:
        return head
    return spec_for(language).pasted(head) or head


@cache
def _spelling_parts() -> tuple[Callable[[str], str | None], Callable[[str], LanguageSpec]]:
    """What `_moors_spelling` asks, imported on the first reference that needs it (the
    grammar modules only when needed) and then kept: an import statement run for every
    reference was a tenth of parsing 10,000 of them."""
    from .languages import language_for_path
    from .symbols import spec_for

    return language_for_path, spec_for


def _code_levels(head: str, symbol: str) -> str | Failure:
    levels = head.split(".")
    for level in levels:
        if level == "":
            return _bad(f"the symbol {symbol!r} has an empty level; write 'Class.method'")
        if _WHITESPACE_RUN.search(level):
            return _bad(f"the symbol {symbol!r} contains whitespace")
    return head


def _markdown_symbol(symbol: str) -> str | Failure:
    levels = [_WHITESPACE_RUN.sub(" ", level).strip() for level in symbol.split(">")]
    if any(level == "" for level in levels):
        return _bad(f"the heading breadcrumb {symbol!r} has an empty level; write 'A > B'")
    return BREADCRUMB_SEPARATOR.join(levels)


def parse_reference(raw: str) -> Reference | Failure:
    """Parse one reference string; a `Failure` (codes above) if it is refused.

    Never raises and never touches the file system.
    """
    if not isinstance(raw, str):  # defensive: callers outside the type checker
        return _bad("a reference must be a string")
    if raw.strip() == "":
        return _bad("the reference is empty")
    char = _forbidden_char(raw)
    if char is not None:
        return _bad(f"the reference {raw!r} contains the control character {char}")
    if raw != raw.strip():
        return _bad(f"the reference {raw!r} starts or ends with whitespace")
    if raw.startswith(ANCHOR_PREFIX):
        name = raw[len(ANCHOR_PREFIX) :]
        if not _ANCHOR_NAME.fullmatch(name):
            return _bad(
                f"the anchor name {name!r} is not valid: use letters, digits, '_', '-' or '.'"
            )
        return Reference(path=None, symbol=None, anchor=name)
    raw_path, hash_sign, raw_symbol = raw.partition("#")
    if raw_path == "":
        return _bad(f"the reference {raw!r} has a symbol but no path; write 'PATH#SYMBOL'")
    path = normalise_path(raw_path)
    if isinstance(path, Failure):
        return path
    if not hash_sign:
        return Reference(path=path, symbol=None, anchor=None)
    if raw_symbol.strip() == "":
        return _bad(f"the reference {raw!r} has an empty symbol after '#'")
    symbol = (
        _markdown_symbol(raw_symbol) if is_markdown_path(path) else _code_symbol(path, raw_symbol)
    )
    if isinstance(symbol, Failure):
        return symbol
    return Reference(path=path, symbol=symbol, anchor=None)


def resolve_path(root: Path, rel: str) -> Path | Failure:
    """The real location of workspace-relative `rel`, or a refusal; never reads the target.

    `rel` is first checked lexically (`normalise_path`). Then symlinks are followed with
    ``os.path.realpath`` (``lstat``/``readlink`` only — the target is never opened, so a
    FIFO, a device or an unreadable file cannot block or fail here) and the result must lie
    inside the real workspace root. A symlink leaving the root gives ``outside_workspace``.

    A missing target is not a failure: the resolved (non-existent) path is returned and
    observing it gives ``NotFound``. A symlink loop is left unresolved; opening it later fails
    with an ``io_error`` attempt, never drift. Returns the resolved absolute path, which is
    the one that should be read (what was checked is what is read).
    """
    normal = normalise_path(rel)
    if isinstance(normal, Failure):
        return normal
    try:
        real_root = os.path.realpath(root)
        target = os.path.realpath(os.path.join(real_root, *normal.split("/")))
    except (OSError, ValueError, RuntimeError) as exc:
        return _bad(f"{rel!r} cannot be resolved: {exc}")
    inside = target == real_root or target.startswith(real_root.rstrip(os.sep) + os.sep)
    if not inside:
        return _outside(f"{rel!r} leads outside the workspace (to {target!r}) through a symlink")
    if target == real_root:
        return _bad(f"{rel!r} resolves to the workspace root, not a file")
    return Path(target)
