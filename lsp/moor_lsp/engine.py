"""The server's only door into the engine. Everything here runs in the engine worker thread.

Each call opens its own `Session` (so a lock rewritten by `moor reaffirm` in a terminal, a
`git checkout` or an agent is always read fresh) and returns plain data: no protocol types,
no event loop. `evaluate` is one `moor check` of the whole workspace (journal recorded),
plus what the editor needs on top of the report: where each reference is written and where
the code it names is now.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from moor_engine.actions import Outcome, bind, follow, reaffirm
from moor_engine.config import ConfigError
from moor_engine.history import AnchorDiff, memory_diff, memory_log
from moor_engine.observe import FileView, Found
from moor_engine.session import Session, UsageError
from moor_engine.trust import AnchorReport, MemoryReport, State
from moor_extractors.memory import AboutEntry, parse_memory
from moor_store.journal import Entry, JournalError

from moor_lsp.positions import Span, span_in_lines, span_of_bytes, split_lines

logger = logging.getLogger(__name__)

# Anchor states whose reference gets a diagnostic; `current` is the only quiet one.
QUIET_ANCHOR_STATES = frozenset({State.CURRENT})
# States a reaffirmation accepts: anything else blocks it (all or nothing, see actions.py).
REAFFIRMABLE = frozenset({State.CURRENT, State.DRIFTED, State.UNBOUND})


class EngineProblem(Exception):
    """The workspace cannot be evaluated as it is (bad moor.toml, a newer journal, …)."""


@dataclass(frozen=True)
class Spot:
    """Where some code is now: a workspace-relative file and the span of the definition
    (the start of the file for a whole-file reference)."""

    path: str
    span: Span


@dataclass(frozen=True)
class AnchorView:
    report: AnchorReport
    span: Span  # where the reference is written in the memory file
    target: Spot | None  # where the code it names is now, when it can be found


@dataclass(frozen=True)
class MemoryView:
    path: str
    report: MemoryReport
    span: Span  # where a memory-level finding points
    anchors: tuple[AnchorView, ...] = ()

    @property
    def reaffirmable(self) -> bool:
        """Whether `reaffirm` would succeed now (it refuses when any anchor blocks it)."""
        if self.report.state == State.INVALID and not self.report.anchors:
            return False
        return all(a.state in REAFFIRMABLE for a in self.report.anchors)


@dataclass(frozen=True)
class Snapshot:
    """One evaluation of the whole workspace."""

    generation: int
    root: Path
    memories: dict[str, MemoryView] = field(default_factory=dict)
    # Workspace-level problems: (workspace-relative file, message), e.g. a broken moor.toml.
    problems: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0


def find_root(start: Path) -> Path:
    """The engine's workspace root for an editor folder (it may be a parent of it)."""
    from moor_engine.workspace import find_root as engine_find_root

    return engine_find_root(start)


def open_session(root: Path) -> Session:
    try:
        return Session.open(root)
    except (ConfigError, JournalError, UsageError, OSError) as error:
        raise EngineProblem(str(error)) from error


def evaluate(root: Path, generation: int, record: bool = True) -> Snapshot:
    """`moor check` of every memory, plus editor positions; `record` journals the check
    (and adopts re-derived addresses in moor.lock) as the CLI does, else nothing is written."""
    started = time.perf_counter()
    try:
        session = open_session(root)
    except EngineProblem as problem:
        return Snapshot(generation, root, problems=(("moor.toml", str(problem)),))
    with session:
        paths = session.select([])
        report = session.check(paths, record=record)
        views: dict[str, MemoryView] = {}
        for memory in report.memories:
            views[memory.path] = _memory_view(session, memory)
        return Snapshot(
            generation,
            session.workspace.root,
            views,
            warnings=tuple(session.warnings),
            seconds=time.perf_counter() - started,
        )


def _needs_positions(memory: MemoryReport) -> bool:
    return memory.state != State.CURRENT or any(
        a.state not in QUIET_ANCHOR_STATES for a in memory.anchors
    )


def _memory_view(session: Session, memory: MemoryReport) -> MemoryView:
    if not _needs_positions(memory):
        return MemoryView(memory.path, memory, Span(0, 0, 0, 0))
    try:
        data = (session.workspace.root / memory.path).read_bytes()
    except OSError:
        return MemoryView(memory.path, memory, Span(0, 0, 0, 0))
    text = data.decode("utf-8", "replace")
    lines = split_lines(text)
    parsed = parse_memory(memory.path, data)
    entries: dict[tuple[int, int], AboutEntry] = {}
    if parsed.memory is not None:
        entries = {(e.line, e.column): e for e in parsed.memory.about}
    anchors = []
    for anchor in memory.anchors:
        entry = entries.get((anchor.line, anchor.column))
        if entry is not None and entry.end_line:
            span = span_in_lines(lines, entry.line, entry.column, entry.end_line, entry.end_column)
        else:
            span = span_in_lines(lines, anchor.line, anchor.column)
        target = None
        if anchor.state not in QUIET_ANCHOR_STATES:
            target = _locate_quietly(session, anchor.moved_to or anchor.canonical)
        anchors.append(AnchorView(anchor, span, target))
    return MemoryView(
        memory.path,
        memory,
        span_in_lines(lines, memory.line, memory.column),
        tuple(anchors),
    )


def _locate_quietly(session: Session, canonical: str | None) -> Spot | None:
    if canonical is None:
        return None
    try:
        return locate_in(session, canonical)
    except Exception:  # a position is a nicety: never lose the diagnostics over it
        logger.exception("cannot locate %s", canonical)
        return None


def locate_in(session: Session, canonical: str) -> Spot | None:
    """Where the code a canonical reference names is now, if it is found."""
    observation = session.observer.observe_canonical(canonical)
    if not isinstance(observation, Found):
        return None
    if observation.site is None:
        return Spot(observation.path, Span(0, 0, 0, 0))
    view = session.observer.view(observation.path)
    if not isinstance(view, FileView):
        return None
    site = observation.site
    return Spot(observation.path, span_of_bytes(view.source(), site.start_byte, site.end_byte))


@dataclass(frozen=True)
class History:
    """An anchor's journal and its code's diff since it was bound, for a hover card."""

    entries: tuple[Entry, ...]
    diff: AnchorDiff | None


def history(root: Path, memory_path: str, canonical: str | None, raw: str) -> History:
    with open_session(root) as session:
        absolute = str(root / memory_path)
        try:
            _path, entries = memory_log(session, absolute)
            _path, diffs = memory_diff(session, absolute)
        except UsageError as error:
            raise EngineProblem(str(error)) from error
        session.observer.flush()
    mine = tuple(
        e for e in entries if e.anchor == canonical or (e.anchor == f"memory:{memory_path}")
    )
    diff = next((d for d in diffs if d.ref == raw), None)
    return History(mine, diff)


ACTIONS: dict[str, Callable[[Session, str, list[str]], Outcome]] = {
    "reaffirm": lambda session, path, args: reaffirm(session, path, args[0]),
    "follow": lambda session, path, _args: follow(session, path),
    "bind": lambda session, path, _args: bind(session, [path]),
}


def act(root: Path, action: str, memory_path: str, args: list[str]) -> Outcome:
    """Run one engine action on one memory (reaffirm, follow, bind)."""
    with open_session(root) as session:
        try:
            return ACTIONS[action](session, str(root / memory_path), args)
        except UsageError as error:
            raise EngineProblem(str(error)) from error
