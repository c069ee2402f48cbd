"""The server's only door into the engine. Everything here runs in the engine worker thread.

`Evaluator` keeps the workspace checked between changes
(`moor_engine.grounding.live.LiveCheck`: only what changed is read, observed and
re-derived) and the editor's view of each memory: where each reference is written, and
where the code it names is now. It returns plain data — no
protocol types, no event loop. Actions and hovers open their own `Session` (so a lock
rewritten by `moor reaffirm` in a terminal, a `git checkout` or an agent is read fresh).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from moor_engine.anchors.cadence import Clock, Slot, Stalled
from moor_engine.anchors.machine import is_custom
from moor_engine.grounding.about import AboutResult, about
from moor_engine.grounding.actions import bind, follow, reaffirm
from moor_engine.grounding.atlas import assemble
from moor_engine.grounding.live import KEEP_TREE_BYTES, LiveCheck, Refreshed
from moor_engine.grounding.observe import FileView, Found
from moor_engine.grounding.trust import AnchorReport, LinkFinding, MemoryReport, State
from moor_engine.grounding.verdicts import reaffirm_verdict
from moor_engine.memory.history import AnchorDiff, memory_diff, memory_log
from moor_engine.memory.latch_actions import forget, restore, supersede
from moor_engine.session import Session
from moor_engine.workspace.config import ConfigError
from moor_engine.written import Written
from moor_store.inside import read_inside
from moor_store.journal import Entry, JournalError
from moor_store.lockfile import LockError
from moor_store.refusal import RefusalError

from moor_lsp import heap
from moor_lsp.positions import Span, span_in_lines, span_of_bytes, split_lines

logger = logging.getLogger(__name__)

# The start of a file: where a quiet memory's view points (one object shared by all of them).
START = Span(0, 0, 0, 0)
# Anchor states whose reference gets a diagnostic; `current` is the only quiet one.
QUIET_ANCHOR_STATES = frozenset({State.CURRENT})
# Where a problem that stops the whole workspace from being checked is shown.
PROBLEM_FILES: tuple[tuple[type[Exception], str], ...] = (
    (LockError, "moor.lock"),
    (JournalError, "moor.toml"),
    (ConfigError, "moor.toml"),
)


class EngineProblem(Exception):
    """The workspace cannot be evaluated as it is (bad moor.toml, a newer journal, …)."""

    def __init__(self, message: str, where: str = "moor.toml") -> None:
        super().__init__(message)
        self.where = where


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
    preview: bool = False  # observed in an unsaved editor buffer, not in the file


@dataclass(frozen=True)
class MemoryView:
    path: str
    report: MemoryReport
    span: Span  # where a memory-level finding points
    anchors: tuple[AnchorView, ...] = ()
    # Each finding of its `links:` (report.link_findings) and where its target is written.
    links: tuple[tuple[LinkFinding, Span], ...] = ()

    @property
    def reaffirmable(self) -> bool:
        """Whether `reaffirm` would succeed now (it refuses when any anchor blocks it)."""
        if any(anchor.preview for anchor in self.anchors):
            return False  # it would accept the file on disk, not what the editor shows
        return reaffirm_verdict(self.report).allowed


@dataclass(frozen=True)
class Snapshot:
    """The workspace as one evaluation left it."""

    generation: int
    root: Path
    memories: dict[str, MemoryView] = field(default_factory=dict)
    # Workspace-level problems: (workspace-relative file, message), e.g. a broken moor.toml.
    problems: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    # Memories whose view may differ from the previous snapshot's (deleted ones included);
    # None: any of them (a full check, or the first).
    dirty: frozenset[str] | None = None
    reobserved: int = 0  # anchors observed for this evaluation
    overlaid: frozenset[str] = frozenset()  # code files seen in unsaved editor buffers
    # Code files seen while they were being written (`file_changing`): to evaluate again
    # after `moor_engine.grounding.live.RECHECK_CHANGING_S` if no change reported brings them back.
    changing: frozenset[str] = frozenset()
    # Command anchors: seconds until the next is due (None: none is scheduled), and the
    # ones that stalled in this evaluation (`moor_engine.anchors.cadence`).
    cadence_wait: float | None = None
    stalled: tuple[Stalled, ...] = ()
    observed_commands: tuple[str, ...] = ()  # command anchors this evaluation's round observed
    # Each scheduled command anchor's place in the cadence, by name, as of `clock_at`.
    schedule: dict[str, Slot] = field(default_factory=dict)
    clock_at: float = 0.0
    # The memories whose reports name each canonical reference (a hover's "also bound
    # here" without a walk over every memory: ~13 ms at 10,000 on the event loop).
    naming: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def naming_reports(self, canonical: str) -> list[MemoryReport]:
        """The reports of the memories that name `canonical` (and maybe a few more)."""
        views = (self.memories.get(path) for path in self.naming.get(canonical, ()))
        return [view.report for view in views if view is not None]


def find_root(start: Path) -> Path:
    """The engine's workspace root for an editor folder (it may be a parent of it)."""
    from moor_engine.workspace.workspace import find_root as engine_find_root

    return engine_find_root(start)


def problem(error: Exception) -> EngineProblem:
    for kind, where in PROBLEM_FILES:
        if isinstance(error, kind):
            return EngineProblem(str(error), where)
    return EngineProblem(str(error))


def open_session(root: Path, buffers: Mapping[str, bytes] | None = None) -> Session:
    """A session of its own (for an action, a hover, a diff); `buffers`: the editor's
    unsaved code buffers, observed instead of their files (as the live check does). It runs
    no declared anchor command (`trust=False`): a hover must not start one; the live
    check observes them."""
    try:
        session = Session.open(root, trust=False)
    except (RefusalError, OSError) as error:
        raise problem(error) from error
    if buffers:
        session.observer.overlays = dict(buffers)
    return session


# The views of unsaved buffers the reader thread's sessions made, by root, newest last:
# the next read of the same buffer need not parse it again, and one of a later version
# re-parses from its tree (during a burst of edits a hover parsed the buffer of the code
# it names each time: most of its time). Kept while their source is within
# KEEP_TREE_BYTES (the newest whatever its size), as the live check keeps its trees. Only
# the reader thread (`MoorLanguageServer.in_reader`, one thread) touches this.
_read_buffers: dict[Path, dict[str, FileView]] = {}


@contextlib.contextmanager
def reading(root: Path, buffers: Mapping[str, bytes] | None) -> Iterator[Session]:
    """`open_session` for a read in the reader thread, carrying the buffers' views from
    one read to the next."""
    with open_session(root, buffers) as session:
        carried = _read_buffers.get(root, {})
        if buffers:
            session.observer.carry_overlays(carried)
        try:
            yield session
        finally:
            made = session.observer.overlay_views()
            if made:
                newest = {**{r: v for r, v in carried.items() if r not in made}, **made}
                _read_buffers[root] = _within(newest, KEEP_TREE_BYTES)


def _within(views: dict[str, FileView], budget: int) -> dict[str, FileView]:
    """The newest of `views` (the last ones) whose sources add up to `budget` bytes at
    most, and the newest one whatever its size."""
    kept: list[tuple[str, FileView]] = []
    total = 0
    for rel, view in reversed(views.items()):
        total += len(view.held_source() or b"")
        if kept and total > budget:
            break
        kept.append((rel, view))
    return dict(reversed(kept))


class Evaluator:
    """The engine thread's state for one workspace: a live check and the memory views."""

    def __init__(
        self,
        root: Path,
        *,
        record: bool = True,
        paranoid: bool = False,
        clock: Clock = time.monotonic,
    ) -> None:
        self.root = root
        self.live = LiveCheck(root, record=record, clock=clock)
        self.paranoid = paranoid  # verify every incremental check against a full one
        self.views: dict[str, MemoryView] = {}
        self.naming: dict[str, tuple[str, ...]] = {}  # `Snapshot.naming`, kept up to date
        self.disagreements: list[str] = []  # what the last paranoid verification found
        self._full = False  # the last evaluation checked everything (see `commit`)

    def evaluate(
        self, generation: int, changed: Iterable[str] | None, due: bool = False
    ) -> Snapshot:
        """Bring the workspace up to date with `changed` (None: check everything); `due`:
        also observe the command anchors the cadence says are due."""
        before = frozenset(self.live.overlays)
        try:
            refreshed = self.live.refresh(changed, due=due)
        except (RefusalError, OSError) as error:
            self.views, self.naming = {}, {}
            found = problem(error)
            return Snapshot(generation, self.root, problems=((found.where, str(found)),))
        session = self.live.session
        assert session is not None
        dirty = refreshed.dirty
        self._full = dirty is None
        if dirty is None:
            self.views, self.naming = {}, {}
            paths: Iterable[str] = refreshed.reports
        else:
            # A buffer that began or stopped being a preview re-labels its memories.
            flipped = self.live.memories_about(before ^ refreshed.overlaid)
            dirty = dirty | flipped
            paths = dirty
        for path in paths:
            report = refreshed.reports.get(path)
            old = self.views.get(path)
            if report is None:
                self.views.pop(path, None)
            else:
                self.views[path] = _memory_view(session, report, refreshed.overlaid)
            _rename(self.naming, path, old.report if old else None, report)
        self.disagreements = self._verify(refreshed)
        return Snapshot(
            generation,
            session.workspace.root,
            dict(self.views),
            warnings=tuple(refreshed.warnings),
            seconds=refreshed.seconds,
            dirty=dirty,
            reobserved=self.live.last_reobserved,
            overlaid=refreshed.overlaid,
            changing=frozenset(self.live.changing_files()),
            cadence_wait=self.live.cadence.wait(),
            stalled=tuple(self.live.take_stalled()),
            observed_commands=tuple(self.live.last_round),
            schedule={n: dataclasses.replace(s) for n, s in self.live.cadence.slots.items()},
            clock_at=self.live.cadence.clock(),
            naming=dict(self.naming),
        )

    def glance(self, generation: int, paths: Iterable[str]) -> Snapshot | None:
        """Before the first full check: a snapshot of these memories only (those open in
        the editor), to show first (`LiveCheck.glance`); None when there is nothing to show
        or the workspace cannot be checked (the full check says why)."""
        try:
            reports = self.live.glance(paths)
        except (RefusalError, OSError):
            return None
        session = self.live.session
        if not reports or session is None:
            return None
        overlaid = frozenset(self.live.overlays)
        views = {path: _memory_view(session, report, overlaid) for path, report in reports.items()}
        naming: dict[str, tuple[str, ...]] = {}
        for path, report in reports.items():
            _rename(naming, path, None, report)
        return Snapshot(
            generation, session.workspace.root, views, dirty=frozenset(views), naming=naming
        )

    def prepare(
        self, changed: list[str], wanted: Callable[[str], bool] = lambda _rel: True
    ) -> None:
        """Parse changed code files now, while the change settles, so that the evaluation
        after it need not — those still `wanted` when the engine thread gets to them (typing
        in a buffer: only its newest text is worth a parse)."""
        changed = [rel for rel in changed if wanted(rel)]
        if not changed:
            return
        started = time.perf_counter()
        try:
            count = self.live.prepare(changed)
        except Exception:  # a head start is a nicety: the evaluation parses what it must
            logger.exception("could not parse %s ahead of the check", ", ".join(changed))
            return
        if count:
            logger.debug("parsed %d files ahead in %.3f s", count, time.perf_counter() - started)

    def _verify(self, refreshed: Refreshed) -> list[str]:
        if not self.paranoid or refreshed.full:
            return []
        found = self.live.verify()
        for line in found:
            logger.error("paranoid: incremental check differs from a full one: %s", line)
        return found

    def commit(self) -> None:
        """Journal the last evaluation and persist the parse cache (after publishing);
        after a full check, settle the heap, after another trim it (`moor_lsp.heap`)."""
        self.live.commit()
        if self._full:
            self._full = False
            heap.settle()
        else:
            heap.trim()

    def set_buffer(self, rel: str, text: str | None) -> bool:
        """An editor buffer of code file `rel` (None: closed). It overlays the file while it
        differs from it; True when that changes what is observed."""
        if text is None:
            return self.live.set_overlay(rel, None)
        data = text.encode("utf-8", "surrogatepass")
        if rel not in self.live.overlays and not self.live.watches(rel):
            return False  # no anchor is in it: nothing to preview
        try:
            on_disk = read_inside(self.root, rel)
        except OSError:  # missing, or not a file moor reads (a FIFO, a link out)
            on_disk = None
        return self.live.set_overlay(rel, None if data == on_disk else data)

    def close(self) -> None:
        self.live.close()


def _named(report: MemoryReport | None) -> set[str]:
    if report is None:
        return set()
    return {a.canonical for a in report.anchors if a.canonical is not None}


def _rename(
    naming: dict[str, tuple[str, ...]],
    path: str,
    old: MemoryReport | None,
    new: MemoryReport | None,
) -> None:
    """`naming` with memory `path`'s report `old` replaced by `new`. Each entry is a new
    tuple when it changes: a snapshot's shallow copy never sees a later change."""
    before, after = _named(old), _named(new)
    for canonical in before - after:
        rest = tuple(p for p in naming.get(canonical, ()) if p != path)
        if rest:
            naming[canonical] = rest
        else:
            naming.pop(canonical, None)
    for canonical in after - before:
        naming[canonical] = (*naming.get(canonical, ()), path)


def _needs_positions(memory: MemoryReport) -> bool:
    return (
        memory.state != State.CURRENT
        or bool(memory.link_findings)
        or any(a.state not in QUIET_ANCHOR_STATES for a in memory.anchors)
    )


def _memory_view(session: Session, memory: MemoryReport, overlaid: frozenset[str]) -> MemoryView:
    if not _needs_positions(memory):
        return MemoryView(memory.path, memory, START)
    try:
        data = read_inside(
            session.workspace.root, memory.path, limit=session.workspace.config.max_file_size
        )
    except OSError:
        return MemoryView(memory.path, memory, START)
    lines = split_lines(data.decode("utf-8", "replace"))
    anchors = []
    for anchor in memory.anchors:
        if anchor.end_line:
            span = span_in_lines(
                lines, anchor.line, anchor.column, anchor.end_line, anchor.end_column
            )
        else:
            span = span_in_lines(lines, anchor.line, anchor.column)
        target = None
        if anchor.state not in QUIET_ANCHOR_STATES:
            target = _locate_quietly(session, anchor.moved_to or anchor.canonical)
        path = (anchor.canonical or "").split("#", 1)[0]
        anchors.append(AnchorView(anchor, span, target, preview=path in overlaid))
    links = tuple(
        (finding, span_in_lines(lines, finding.line, finding.column))
        for finding in memory.link_findings
    )
    return MemoryView(
        memory.path,
        memory,
        span_in_lines(lines, memory.line, memory.column),
        tuple(anchors),
        links,
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
    """Where the code a canonical reference names is now, if it is found; a command anchor
    (`anchor:NAME`) has no place in a file, so none."""
    if is_custom(canonical):
        return None
    observation = session.observer.observe_canonical(canonical)
    if not isinstance(observation, Found):
        return None
    if observation.site is None:
        return Spot(observation.path, START)
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


def history(
    root: Path,
    memory_path: str,
    canonical: str | None,
    raw: str,
    buffers: Mapping[str, bytes] | None = None,
) -> History:
    with reading(root, buffers) as session:
        absolute = str(root / memory_path)
        try:
            _path, entries = memory_log(session, absolute)
            _path, diffs = memory_diff(session, absolute)
        except RefusalError as error:
            raise EngineProblem(str(error)) from error
        session.observer.flush()
    mine = tuple(
        e for e in entries if e.anchor == canonical or (e.anchor == f"memory:{memory_path}")
    )
    diff = next((d for d in diffs if d.ref == raw), None)
    return History(mine, diff)


ACTIONS: dict[str, Callable[[Session, str, list[str]], Written]] = {
    "reaffirm": lambda session, path, args: reaffirm(session, path, args[0]),
    "follow": lambda session, path, args: follow(session, path, *args),
    "bind": lambda session, path, _args: bind(session, [path]),
}


@dataclass(frozen=True)
class Acted:
    """An action's write result, and what its session tells the person, as the CLI prints it
    after the same action (`Session.told`: a journal it could not open recorded nothing)."""

    written: Written
    told: tuple[str, ...]


def act(root: Path, action: str, memory_path: str, args: list[str]) -> Acted:
    """Run one engine action on one memory (reaffirm, follow, bind)."""
    with open_session(root) as session:
        try:
            written = ACTIONS[action](session, str(root / memory_path), args)
        except (RefusalError, OSError) as error:
            raise EngineProblem(str(error)) from error
        return Acted(written, tuple(session.told()))


# The latch actions (moor_engine.memory.latch_actions), the same functions `moor forget`,
# `moor supersede` and `moor restore` call; args end with the reason.
ACTIONS["forget"] = lambda session, path, args: forget(session, path, args[0])
ACTIONS["supersede"] = lambda session, path, args: supersede(session, path, args[0], args[1])
ACTIONS["restore"] = lambda session, path, args: restore(session, path, args[0])


def atlas_data(evaluator: Evaluator) -> dict[str, object] | None:
    """The atlas (`moor_engine.grounding.atlas`) of the memories as the live check last left
    them: no check of its own. None before the first evaluation. Runs in the engine thread,
    which owns the live check."""
    session = evaluator.live.session
    if session is None:
        return None
    reports, loaded = evaluator.live.evaluated()
    return assemble(session, reports, loaded).as_json()


def about_line(
    root: Path, rel: str, line: int, buffers: Mapping[str, bytes] | None = None
) -> AboutResult | None:
    """The memories about the definition at `line` (1-based) of the code file `rel`
    (`moor_engine.grounding.about`: it checks only the memories about that file, recording
    nothing); None when `rel` is a memory. The editor is a person's whole view: every
    agent's memories are listed, each marked with its owner."""
    with reading(root, buffers) as session:
        if session.workspace.is_memory_path(rel):
            return None
        try:
            return about(session, f"{rel}:{line}", everyone=True)
        except (RefusalError, OSError) as error:
            raise EngineProblem(str(error)) from error
