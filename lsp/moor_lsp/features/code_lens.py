"""Code lenses on code: on each symbol (or whole file) that memories are about.

A lens reads "2 memories · 1 drifted" (or "1 memory · current") and runs `moor.showMemory`
with the memories' absolute paths (root-relative ones are taken too, see
`MoorLanguageServer.locate`): one is opened with `window/showDocument`; among several the
person picks one (`window/showMessageRequest`). The counts come from the last check
(memory → anchors → canonical reference → `path#qname`; a moved anchor counts where its
code is now); retired memories are left out. Symbols are found in the editor's copy of the
file, parsed in the engine thread. After a check that changed any count, clients that
support it are asked to `workspace/codeLens/refresh`. Code files get no diagnostics.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from moor_engine.grounding.trust import State
from moor_extractors.model import Failure
from moor_extractors.reference import ANCHOR_PREFIX, normalise_path
from pygls.exceptions import JsonRpcInvalidParams

from moor_lsp.code import CodeFile, read_code
from moor_lsp.documents import is_memory
from moor_lsp.engine import MemoryView, Snapshot
from moor_lsp.features import Feature
from moor_lsp.features.diagnostics import to_range

if TYPE_CHECKING:
    from moor_lsp.folder import Folder

SHOW_MEMORY = "moor.showMemory"
# Most pressing first: the order states are named in a lens title.
ORDER = (
    State.INVALID,
    State.GONE,
    State.DRIFTED,
    State.MOVED,
    State.REWRITTEN,
    State.UNVERIFIED,
    State.UNBOUND,
)


def about(memory: MemoryView) -> dict[tuple[str, str | None], State]:
    """What one memory adds to the index: (path, symbol) -> its worst anchor state there."""
    found: dict[tuple[str, str | None], State] = {}
    if memory.report.state == State.RETIRED:
        return found
    for anchor in memory.report.anchors:
        canonical = anchor.canonical
        if anchor.state == State.MOVED and anchor.moved_to:
            canonical = anchor.moved_to
        if canonical is None or canonical.startswith(ANCHOR_PREFIX):
            continue  # no reference, or a named anchor: in no code file
        # A canonical reference is `PATH` or `PATH#SYMBOL` already normalised (the engine's
        # `Reference.canonical`): split, not parsed again — 10,000 of them on a first scan.
        path, _, symbol = canonical.partition("#")
        key = (path, symbol or None)
        previous = found.get(key)
        if previous is None or _rank(anchor.state) < _rank(previous):
            found[key] = anchor.state
    return found


class LensIndex:
    """Which memories are about each code file, kept up to date one memory at a time; the
    lenses of one file (symbol -> memory -> state) are made when that file asks for them."""

    def __init__(self) -> None:
        # memory -> (code path, symbol, state) for each place it is about; code path -> the
        # memories about it. Tuples and a set per code file, not a dict per memory and per
        # symbol: at 10,000 memories those dicts held ~6 MiB for lenses asked per open file.
        self._about: dict[str, tuple[tuple[str, str | None, State], ...]] = {}
        self._by_path: dict[str, set[str]] = {}

    def update(self, snapshot: Snapshot) -> bool:
        """Take in a snapshot; True when any lens would read differently."""
        paths = set(self._about) | set(snapshot.memories) if snapshot.dirty is None else None
        changed = False
        for path in paths if paths is not None else snapshot.dirty or ():
            memory = snapshot.memories.get(path)
            fresh = _entries(about(memory)) if memory is not None else ()
            old = self._about.get(path, ())
            if fresh == old:
                continue
            changed = True
            for code in {entry[0] for entry in old} - {entry[0] for entry in fresh}:
                memories = self._by_path.get(code)
                if memories is not None:
                    memories.discard(path)
                    if not memories:
                        del self._by_path[code]
            for code, _symbol, _state in fresh:
                self._by_path.setdefault(code, set()).add(path)
            if fresh:
                self._about[path] = fresh
            else:
                self._about.pop(path, None)
        return changed

    def lenses(self, code: str) -> dict[str | None, dict[str, State]]:
        """The lenses of code file `code`: symbol (None: the whole file) -> memory -> state."""
        found: dict[str | None, dict[str, State]] = {}
        for memory in self._by_path.get(code, ()):
            for path, symbol, state in self._about[memory]:
                if path == code:
                    found.setdefault(symbol, {})[memory] = state
        return found


def _entries(
    found: dict[tuple[str, str | None], State],
) -> tuple[tuple[str, str | None, State], ...]:
    # Interned: every memory about a file names it, and a symbol is named by each memory
    # about it; one string each, not one per anchor.
    return tuple(
        (sys.intern(path), None if symbol is None else sys.intern(symbol), state)
        for (path, symbol), state in found.items()
    )


def _rank(state: State) -> int:
    return ORDER.index(state) if state in ORDER else len(ORDER)


def lens_title(states: dict[str, State]) -> str:
    count = len(states)
    title = f"{count} memory" if count == 1 else f"{count} memories"
    tally = Counter(s for s in states.values() if s in ORDER)
    if not tally:
        return f"{title} · current"
    return f"{title} · " + ", ".join(f"{tally[s]} {s.value}" for s in ORDER if tally[s])


class CodeLens(Feature):
    name = "code_lens"

    def __init__(self, server: Any) -> None:
        super().__init__(server)
        self.lenses: dict[Path, LensIndex] = {}  # per root

    def register(self) -> None:
        self.handle(
            types.TEXT_DOCUMENT_CODE_LENS,
            self.code_lens,
            None,
            types.CodeLensOptions(resolve_provider=False),
        )
        self.command(SHOW_MEMORY, self.show_memory)

    async def on_snapshot(self, folder: Folder, snapshot: Snapshot) -> None:
        changed = self.lenses.setdefault(folder.root, LensIndex()).update(snapshot)
        if changed:
            self._refresh()

    async def on_folder_removed(self, folder: Folder) -> None:
        if self.lenses.pop(folder.root, None) is not None:
            self._refresh()

    def _refresh(self) -> None:
        if self.server.capability("workspace.code_lens.refresh_support"):
            self.server.workspace_code_lens_refresh(None)

    async def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        uri = params.text_document.uri
        folder = self.server.folder_for(uri)
        if folder is None:
            return None
        await folder.ready()
        root = folder.root
        rel = folder.relative(uri)
        if rel is None or is_memory(folder, rel):
            return None
        lenses_here = self.lenses.get(root)
        about = lenses_here.lenses(rel) if lenses_here is not None else None
        if not about:
            return []
        code: CodeFile | None = None
        if any(symbol is not None for symbol in about):
            source = self.server.workspace.get_text_document(uri).source
            code = await self.server.in_reader(_parse, root, rel, source)
        encoding = self.server.position_encoding
        lenses: list[types.CodeLens] = []
        for symbol, states in sorted(about.items(), key=lambda item: item[0] or ""):
            if symbol is None:
                start = types.Position(line=0, character=0)
                ranges = [types.Range(start=start, end=start)]
            elif code is not None:
                ranges = [to_range(code.head(site), encoding) for site in code.named(symbol)]
            else:
                ranges = []
            title = lens_title(states)
            for where in ranges:
                lenses.append(
                    types.CodeLens(
                        range=where,
                        command=types.Command(
                            title=title,
                            command=SHOW_MEMORY,
                            arguments=[str(root / memory) for memory in sorted(states)],
                        ),
                    )
                )
        return lenses

    async def show_memory(self, *memories: object) -> object:
        found: dict[str, str] = {}  # the title a person picks (root-relative) -> its URI
        for memory in memories:
            if not isinstance(memory, str) or not memory:
                continue
            try:
                folder, path = self.server.locate(memory)
            except ValueError:
                folder, path = None, memory
            if (
                folder is None
                or isinstance(normalise_path(path), Failure)
                or not is_memory(folder, path)
            ):
                raise JsonRpcInvalidParams(f"{SHOW_MEMORY}: {memory!r} is not a memory file")
            found[path if path not in found else str(folder.root / path)] = folder.uri(path)
        if not found:
            return {"shown": None}
        chosen: str | None = next(iter(found))
        if len(found) > 1:
            answer = await self.server.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Info,
                    message="moor: which memory?",
                    actions=[types.MessageActionItem(title=p) for p in found],
                )
            )
            chosen = answer.title if answer is not None else None
        if chosen is None or chosen not in found:
            return {"shown": None}
        uri = found[chosen]
        if self.server.capability("window.show_document.support"):
            await self.server.window_show_document_async(
                types.ShowDocumentParams(uri=uri, take_focus=True)
            )
        return {"shown": uri}


def _parse(root: Path, rel: str, source: str) -> CodeFile | None:
    return read_code(root, rel, source.encode("utf-8", "surrogatepass"))
