"""A workspace kept checked while an editor watches it (docs/editors.md).

`Session.check` reads the lock and every memory and observes every anchor: right for a CLI
run, far too slow to answer each save in an editor. `LiveCheck` keeps one session open and,
told which paths changed, re-reads only those memory files (and the lock, if it changed),
re-observes only the anchors in the changed code files — plus the anchors whose code is
gone, since any change to code may be where it went — and re-derives only the reports of
the memories that use an anchor whose observation changed. What it journals for those
anchors is what `moor check` would have journalled. `refresh(None)` is a full check, and
`verify()` compares the live reports with a check from scratch (the "paranoid" mode).

Unsaved editor buffers are *overlays*: observed instead of the file, and never journalled,
cached or written to moor.lock — a preview of the drift that saving them would cause.

Journalling and the parse cache are written by `commit()`, which an editor may run after
it has shown the result; the next `refresh` commits first, so nothing is lost or reordered.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from moor_extractors.model import Failure, Reason
from moor_extractors.reference import ANCHOR_PREFIX
from moor_store.lockfile import Lock, LockError

from moor_engine.anchors.cadence import Cadence, Clock, Stalled
from moor_engine.grounding.check import Checker, Evaluation
from moor_engine.grounding.dependents import Dependents
from moor_engine.grounding.links import annotate
from moor_engine.grounding.memories import LoadedMemory, load_memories
from moor_engine.grounding.observe import Found, NotFound, Observation
from moor_engine.grounding.trust import MemoryReport, Report, State
from moor_engine.session import Session, read_lock_bytes
from moor_engine.workspace.filestat import RACY_WINDOW_NS, StatKey, stat_key, unstatted
from moor_engine.workspace.gitignore import IGNORE_FILE
from moor_engine.workspace.workspace import LOCK_FILE

# Changes that can change what every memory means or where code may be: check everything.
# (`.git/HEAD` moves on a branch switch, which can rewrite any number of files at once.)
RESCAN_FILES = frozenset({"moor.toml", "pyproject.toml", ".git/HEAD"})
# Syntax trees kept between checks: those of the files edited last, which are the likeliest
# to be edited again (and then re-parse incrementally). Others are let go after a check.
KEEP_TREES = 8
# ... within this many bytes of source, the newest file's always: a tree costs ~18 times its
# file's bytes (8 standard-library files' trees held ~35 MiB of an editor's heap, issue 22).
KEEP_TREE_BYTES = 256 * 1024
# When an editor looks again at a file it saw being written, if nothing else made it: past
# the racy window, when even an emptied file counts as settled (`FileObserver._settle`).
RECHECK_CHANGING_S = RACY_WINDOW_NS / 1e9 + 0.1
# The lock's stat when the bytes under it are not known to be the ones read (no file has it).
UNREAD = unstatted(-1)


@dataclass
class Refreshed:
    """What one refresh found."""

    reports: dict[str, MemoryReport]  # every memory's, by path
    # Memory paths whose report may differ from the previous refresh's (deleted memories
    # included); None after a full check: all of them.
    dirty: frozenset[str] | None
    overlaid: frozenset[str]  # code paths observed from unsaved editor buffers
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def full(self) -> bool:
        return self.dirty is None

    @property
    def report(self) -> Report:
        """Every memory's report, in path order (sorted only when asked for)."""
        return Report([self.reports[path] for path in sorted(self.reports)])


@dataclass
class _Pending:
    """What a refresh learnt that `commit` writes: journal entries, lock, parse cache."""

    evaluation: Evaluation
    changed: set[str]


def _stat(path: Path) -> StatKey | None:
    try:
        return stat_key(path.stat())
    except OSError:
        return None


def _stat_of_own(session: Session) -> StatKey:
    """moor.lock's stat just after this session wrote it, if the file still holds what it
    wrote: stat first, then compare the bytes (by digest: the session keeps no bytes), so
    a write by another in between (or after) gives a stat other than the one kept. Else a
    stat no file has: the next change event for the lock reads it again."""
    lock_stat = _stat(session.workspace.lock_path)
    try:
        now = read_lock_bytes(session.workspace)
    except LockError:
        return UNREAD
    return lock_stat if lock_stat is not None and session.reads_as_seen(now) else UNREAD


def _same(old: Observation | None, new: Observation) -> bool:
    """Whether a report built on `new` says what one built on `old` said (positions aside)."""
    if old is None or type(old) is not type(new):
        return False
    if isinstance(new, Failure):
        assert isinstance(old, Failure)
        return (old.reason, old.code, old.detail) == (new.reason, new.code, new.detail)
    assert isinstance(old, Found | NotFound)
    return old.address == new.address and old.path == new.path


class LiveCheck:
    """One workspace, checked incrementally. Not thread-safe: use it from one thread."""

    def __init__(self, root: Path, *, record: bool = True, clock: Clock = time.monotonic) -> None:
        self.root = root
        self.record = record  # journal checks and adopt re-derived addresses (moor check)
        # The editor's word on running the workspace's declared commands (Session.open).
        self.trust: bool | None = None
        self.overlays: dict[str, bytes] = {}
        self.session: Session | None = None
        self._checker: Checker | None = None
        self._lock_stat: StatKey | None = None
        self._loaded: dict[str, LoadedMemory] = {}
        self._reports: dict[str, MemoryReport] = {}
        self._observations: dict[str, Observation] = {}
        self._missing: set[str] = set()  # canonicals observed NotFound
        self._changing: set[str] = set()  # canonicals whose file was being written
        self._unsettled: set[str] = set()  # memories whose report is not `current`
        self._graph = Dependents()  # file -> references into it -> memories using them
        self._pending: _Pending | None = None
        self._stale: set[str] = set()  # memories whose report a commit made out of date
        self.last_reobserved = 0  # anchors the last refresh observed (for tests, benchmarks)
        self._opened = False  # a session opened by `glance`, for the full check to use
        self._recent: list[str] = []  # code files edited lately, whose trees are kept
        # When each command anchor is observed again (trusted workspaces only), and the
        # `stalled` events not yet taken by the editor.
        self.cadence = Cadence(clock)
        self.stalled: list[Stalled] = []
        self.last_round: list[str] = []  # what the last refresh's round observed, as said

    # --- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        self.commit()
        if self.session is not None:
            self.session.close()
            self.session = None

    def set_overlay(self, rel: str, data: bytes | None) -> bool:
        """Observe `rel` from `data` (an unsaved buffer) instead of the file; None: from the
        file again. True when this changes what is observed (the caller refreshes `rel`)."""
        if data is None:
            return self.overlays.pop(rel, None) is not None
        if self.overlays.get(rel) == data:
            return False
        self.overlays[rel] = data
        return True

    def watches(self, rel: str) -> bool:
        """Whether some memory's anchor is in code file `rel`."""
        return bool(self._graph.by_path.get(rel))

    def memories_about(self, rels: Iterable[str]) -> set[str]:
        """The memories with an anchor in any of these code files."""
        return self._graph.memories_using(self._graph.in_files(rels))

    def prepare(self, changed: Iterable[str]) -> int:
        """Parse the changed code files that anchors are in, as they are now, so that the
        refresh for this change need not (an editor calls this while it waits for the
        change to settle). Returns how many files were parsed."""
        if self.session is None:
            return 0
        observer = self.session.observer
        count = 0
        for rel in changed:
            canonicals = self._graph.by_path.get(rel)
            if canonicals:
                symbols = {self._graph.refs[c].symbol for c in canonicals}
                named = {s for s in symbols if s is not None}
                count += observer.prepare(rel, named, whole=None in symbols)
        return count

    # --- refreshing --------------------------------------------------------------------

    def glance(self, paths: Iterable[str]) -> dict[str, MemoryReport]:
        """Before the first full check: the reports of these memories only (those open in
        an editor, shown first), as `moor check PATH` makes them; nothing is recorded and
        the live state is not touched. The session opened for them — reading moor.lock is
        the check's longest single step — and what they observed serve the full check
        that follows. Paths that are no memory are left out."""
        if self.session is None:
            self._open()
        session, checker = self.session, self._checker
        assert session is not None and checker is not None
        wanted = set(paths)
        chosen = sorted(wanted & set(session.workspace.memory_paths())) if wanted else []
        if not chosen:
            return {}
        return {report.path: report for report in checker.evaluate(chosen).report.memories}

    def refresh(self, changed: Iterable[str] | None = None, *, due: bool = False) -> Refreshed:
        """Bring every report up to date with the paths in `changed` (workspace-relative);
        None (or a change to a file in RESCAN_FILES, or to a .gitignore) checks everything.
        `due`: also observe again the command anchors the cadence says are due (a full
        check observes every one anyway)."""
        self.last_round = []
        return self._refresh(changed, due)

    def _refresh(self, changed: Iterable[str] | None, due: bool) -> Refreshed:
        self.commit()
        started = time.perf_counter()
        paths = None if changed is None else set(changed)
        dirty: frozenset[str] | None
        try:
            if self.session is None or self._opened or paths is None or _rescans(paths):
                self._full()
                dirty = None
            else:
                dirty = frozenset(self._incremental(paths, due))
        except BaseException:
            self._drop()  # half-updated state is never served: the next refresh is full
            raise
        assert self.session is not None
        return Refreshed(
            dict(self._reports),
            dirty,
            frozenset(self.overlays),
            list(self.session.warnings),
            time.perf_counter() - started,
        )

    def _drop(self) -> None:
        old, self.session, self._pending = self.session, None, None
        self._opened = False
        if old is not None:
            old.close()

    def _open(self) -> None:
        self._drop()
        # The lock's stat is taken before it is read: a write in between then differs from
        # it, and the next change event reads the lock again. Raises when the workspace
        # cannot be checked.
        lock_stat = _stat(self.root / LOCK_FILE)
        session = Session.open(self.root, trust=self.trust)
        session.let_go_of_lock_bytes()  # kept open for as long as the editor runs
        session.observer.overlays = self.overlays
        self.session = session
        self._checker = Checker(session.workspace, session.lock, session.journal, session.observer)
        self._lock_stat = lock_stat
        self._opened = True

    def _full(self) -> None:
        if not self._opened:
            self._open()
        self._opened = False
        session, checker = self.session, self._checker
        assert session is not None and checker is not None
        evaluation = checker.evaluate(session.select([]))
        self._loaded = {path: _without_body(loaded) for path, loaded in evaluation.loaded.items()}
        self._observations = dict(evaluation.observations)
        self._missing = {c for c, o in self._observations.items() if isinstance(o, NotFound)}
        self._changing = {c for c, o in self._observations.items() if _changing(o)}
        self._reports = {report.path: report for report in evaluation.report.memories}
        self._unsettled = {p for p, r in self._reports.items() if r.state != State.CURRENT}
        self._graph = evaluation.dependents()
        self._stale.clear()
        self.last_reobserved = len(self._observations)
        self._pending = _Pending(evaluation, set(session.observer.changed))
        self._track_commands()

    def _track_commands(self) -> None:
        """Schedule the command anchors memories use (none when the workspace's commands may
        not run: nothing would), and count what the full check just saw of each."""
        session = self.session
        assert session is not None
        declared = session.workspace.config.anchors
        names = {
            ref.anchor
            for canonical, ref in self._graph.refs.items()
            if ref.anchor is not None
            and ref.anchor in declared
            and canonical not in session.lock.closed
        }
        if names and session.commands is not None and not session.commands.trust.trusted:
            names = set()
        self.cadence.track({name: declared[name].every_s for name in names})
        for name in sorted(names):
            observation = self._observations.get(ANCHOR_PREFIX + name)
            if observation is not None:
                self._count_command(name, observation)

    def _count_command(self, name: str, observation: Observation) -> None:
        failed = observation if isinstance(observation, Failure) else None
        event = self.cadence.record(
            name,
            failed.code if failed else None,
            unevaluable=failed is not None and failed.reason == Reason.UNEVALUABLE,
        )
        if event is not None:
            self.stalled.append(event)

    def _observe_due_commands(self) -> dict[str, Observation]:
        """One round of the cadence: the due command anchors, observed again in turn while
        the round's budget lasts."""
        session, checker = self.session, self._checker
        assert session is not None and checker is not None
        if session.commands is None:
            return {}
        fresh: dict[str, Observation] = {}
        self.last_round = []
        for name in self.cadence.round():
            canonical = ANCHOR_PREFIX + name
            session.commands.forget([name])
            fresh[canonical] = checker.observe(self._graph.refs[canonical])
            self._count_command(name, fresh[canonical])
            failed = fresh[canonical]
            code = f" ({failed.code})" if isinstance(failed, Failure) else ""
            self.last_round.append(canonical + code)
        return fresh

    def take_stalled(self) -> list[Stalled]:
        """The `stalled` events since the last call (each is said once)."""
        events, self.stalled = self.stalled, []
        return events

    def _incremental(self, changed: set[str], due: bool = False) -> set[str]:
        session, checker = self.session, self._checker
        assert session is not None and checker is not None
        workspace, observer = session.workspace, session.observer
        observer.changed = set()
        dirty = set(self._stale)
        self._stale.clear()
        relocked: set[str] = set()
        latched = (
            self._latched()
            if LOCK_FILE in changed or in_memories_changed(changed, workspace.config.memory_roots)
            else None
        )
        lock_stat = _stat(workspace.lock_path) if LOCK_FILE in changed else self._lock_stat
        if lock_stat != self._lock_stat:
            data, lock = session.read_lock()  # stat before read, as in `_open`
            session.saw_lock(data)
            relocked = self._reload_lock(lock, lock_stat)
            dirty |= relocked
        roots = tuple(root.rstrip("/") for root in workspace.config.memory_roots)
        in_memories = {
            rel for rel in changed if any(rel == r or rel.startswith(r + "/") for r in roots)
        }
        # A file under a memory root can be code too: a memory another memory is about,
        # or a file kept beside the memories. What counts as code is what anchors watch.
        code = self._with_contents(
            {
                rel
                for rel in changed
                if rel != LOCK_FILE and (rel not in in_memories or rel in self._graph.by_path)
            }
        )
        # A file seen while it was being written is read again by the next refresh,
        # whatever changed: its writer may have finished without another event.
        code |= self.changing_files()
        if in_memories:
            dirty |= self._reload_memories(in_memories)
        if latched is not None:
            # Retired or forgotten elsewhere (a write, an old lock checked out, a memory
            # that now declares `supersedes:`): the memories whose latch changed.
            checker.refresh_latches(self._loaded.values())
            now = self._latched()
            dirty |= {p for p in set(latched) | set(now) if latched.get(p) != now.get(p)}
        if code:
            observer.forget(code)
            self._forget_code_paths(code)
            self._recent = [*[r for r in self._recent if r not in code], *sorted(code)][
                -KEEP_TREES:
            ]
        again = self._graph.in_files(code)
        # What code near a syntax error is believed to be depends on what it is bound to.
        again |= {c for path in relocked for c in self._graph.uses.get(path, ())}
        again |= self._graph.refs.keys() - self._observations.keys()  # new references
        commands = self._observe_due_commands() if due else {}
        again |= commands.keys()
        for event in self.stalled:  # its memories now say it stalled, though it failed alike
            dirty.update(self._graph.users.get(ANCHOR_PREFIX + event.name, ()))
        if code:
            # Gone code may have gone to any changed file: look for it again.
            again |= self._missing
        for canonical in again:
            checker.forget_relocation(canonical)
            new = (
                commands[canonical]
                if canonical in commands
                else checker.observe(self._graph.refs[canonical])
            )
            old = self._observations.get(canonical)
            self._observations[canonical] = new
            if _changing(new):
                self._changing.add(canonical)
            else:
                self._changing.discard(canonical)
            if isinstance(new, NotFound):
                self._missing.add(canonical)
                dirty.update(self._graph.users.get(canonical, ()))
            else:
                self._missing.discard(canonical)
                if not _same(old, new):
                    dirty.update(self._graph.users.get(canonical, ()))
        # Memories that show where their code is now: the code moved within its file.
        for path in self._unsettled - dirty:
            if _touches(self._reports[path], code):
                dirty.add(path)
        for path in dirty:
            loaded = self._loaded.get(path)
            if loaded is None:
                self._reports.pop(path, None)
                self._unsettled.discard(path)
                continue
            report = self._reports[path] = checker.memory_report(loaded, self._observations)
            if report.state == State.CURRENT:
                self._unsettled.discard(path)
            else:
                self._unsettled.add(path)
        # A link's finding follows the other memory's state: a memory whose target turned
        # current (or stopped being) is dirty though nothing of its own changed.
        every = self._loaded
        annotated = annotate(self._reports, every, every.__contains__, every.keys)
        self._reports.update(annotated)
        dirty |= annotated.keys()
        self.last_reobserved = len(again)
        keys = again | {c for path in dirty for c in self._graph.uses.get(path, ())}
        evaluation = Evaluation(
            Report([self._reports[p] for p in sorted(dirty) if p in self._reports]),
            {p: self._loaded[p] for p in dirty if p in self._loaded},
            {c: self._observations[c] for c in keys if c in self._observations},
        )
        self._pending = _Pending(evaluation, set(observer.changed))
        return dirty

    def evaluated(self) -> tuple[list[MemoryReport], dict[str, LoadedMemory]]:
        """Every memory's report and loaded memory as the last refresh left them (for a
        view of the whole corpus, the atlas, without another check)."""
        return list(self._reports.values()), dict(self._loaded)

    def _latched(self) -> dict[str, tuple[object, object]]:
        checker = self._checker
        assert checker is not None
        latches = checker.latches()
        return {
            path: (checker.retirement(path), latches.tombstone(loaded.memory.value))
            for path, loaded in self._loaded.items()
            if loaded.memory is not None
        }

    def changing_files(self) -> set[str]:
        """Code files last seen while they were being written (`file_changing`): what an
        editor re-checks once they may have settled (`RECHECK_CHANGING_S`), even when no
        further change is reported."""
        refs = self._graph.refs
        return {p for c in self._changing if c in refs and (p := refs[c].path) is not None}

    def _with_contents(self, code: set[str]) -> set[str]:
        """A folder that changed (deleted, renamed) stands for every watched file in it."""
        watched = self._graph.by_path
        folders = [rel.rstrip("/") + "/" for rel in code if rel not in watched]
        if folders:
            code |= {path for path in watched if path.startswith(tuple(folders))}
        return code

    def _reload_lock(self, lock: Lock, lock_stat: StatKey | None) -> set[str]:
        session, checker = self.session, self._checker
        assert session is not None and checker is not None
        old = session.lock
        session.lock = checker.lock = lock
        self._lock_stat = lock_stat
        return {
            path
            for path in set(old.memories) | set(lock.memories)
            if old.memories.get(path) != lock.memories.get(path)
        }

    def _reload_memories(self, changed: set[str]) -> set[str]:
        """Memory files created, edited or deleted (or whole folders of them)."""
        assert self.session is not None
        workspace = self.session.workspace
        listed = set(workspace.memory_paths())
        gone = set(self._loaded) - listed
        again = (listed - set(self._loaded)) | (changed & listed)
        for path in gone:
            self._unindex(path)
            del self._loaded[path]
        # Never from the stat-keyed cache: these files are known to have changed, maybe
        # within one timestamp tick.
        for path, loaded in load_memories(workspace, sorted(again), None).items():
            self._unindex(path)
            self._loaded[path] = _without_body(loaded)
            self._index(path)
        return gone | again

    def _forget_code_paths(self, code: set[str]) -> None:
        """A created or deleted file changes where moved code may be found."""
        assert self.session is not None
        workspace = self.session.workspace
        known = workspace.__dict__.get("code_paths")
        if known is None:
            return
        listed = set(known)
        if any((rel in listed) != os.path.isfile(self.root / rel) for rel in code):
            del workspace.__dict__["code_paths"]

    def _index(self, path: str) -> None:
        self._graph.add(path, self._loaded[path])

    def _unindex(self, path: str) -> None:
        for canonical in self._graph.remove(path):
            self._observations.pop(canonical, None)
            self._missing.discard(canonical)
            self._changing.discard(canonical)

    # --- writing -----------------------------------------------------------------------

    def commit(self) -> None:
        """Journal what the last refresh saw and persist the parse cache (`moor check`'s
        writes). Observations of unsaved buffers are never written anywhere."""
        pending, self._pending = self._pending, None
        session, checker = self.session, self._checker
        if pending is None or session is None or checker is None:
            return
        if self.record:
            evaluation = pending.evaluation
            if self.overlays:
                kept = {
                    canonical: observation
                    for canonical, observation in evaluation.observations.items()
                    if not self._overlaid(canonical)
                }
                evaluation = Evaluation(evaluation.report, evaluation.loaded, kept)
            if session.record(evaluation, pending.changed):
                checker.lock = session.lock
                self._lock_stat = _stat_of_own(session)
                self._stale |= {m.path for m in evaluation.report.memories}
        session.observer.flush()
        session.observer.trim(self._kept_trees())

    def _kept_trees(self) -> set[str]:
        """The recently edited files whose trees are kept: newest first, within
        KEEP_TREE_BYTES of source (the newest one whatever its size)."""
        kept: set[str] = set()
        total = 0
        for rel in reversed(self._recent):
            buffer = self.overlays.get(rel)
            try:
                size = len(buffer) if buffer is not None else (self.root / rel).stat().st_size
            except OSError:
                continue
            total += size
            if kept and total > KEEP_TREE_BYTES:
                break
            kept.add(rel)
        return kept

    def _overlaid(self, canonical: str) -> bool:
        ref = self._graph.refs.get(canonical)
        return ref is not None and ref.path in self.overlays

    # --- checking the checker ----------------------------------------------------------

    def verify(self) -> list[str]:
        """Differences between the live reports and a check from scratch (no journal, no
        parse cache, the same overlays): empty when the incremental path is right."""
        with Session.open(self.root, use_journal=False, trust=self.trust) as session:
            session.observer.overlays = dict(self.overlays)
            checker = session.checker
            # Sealed snapshots are what the bound code was, not a cache: candidates for
            # gone code are ranked by them, from scratch as live.
            checker.snapshots = self.session.journal if self.session is not None else None
            # So are latch events: what this clone saw retired stays retired.
            checker.latch_journal = checker.snapshots
            fresh = {
                report.path: report
                for report in checker.evaluate(session.select([])).report.memories
            }
        problems = []
        for path in sorted(set(fresh) | set(self._reports)):
            live, scratch = self._reports.get(path), fresh.get(path)
            if _saw_changing(live) or _saw_changing(scratch):
                # Said of a moment, not of bytes: an emptied file settles when the racy
                # window has passed, which may fall between the two checks.
                continue
            if live != scratch:
                problems.append(f"{path}: live {_brief(live)} != from scratch {_brief(scratch)}")
        return problems


def _without_body(loaded: LoadedMemory) -> LoadedMemory:
    """A memory as the live check keeps it: without its body, which no trust state reads
    and which a long-lived check would otherwise hold for every memory (~2.4 kB each in
    moor's own memories: ~24 MB at 10,000). In place: the evaluation that loaded it reads
    no body either."""
    if loaded.memory is not None and loaded.memory.body:
        loaded.memory = dataclasses.replace(loaded.memory, body="")
    return loaded


def in_memories_changed(changed: set[str], roots: Iterable[str]) -> bool:
    tops = tuple(root.rstrip("/") for root in roots)
    return any(rel == r or rel.startswith(r + "/") for rel in changed for r in tops)


def _changing(observation: Observation) -> bool:
    return isinstance(observation, Failure) and observation.code == "file_changing"


def _saw_changing(report: MemoryReport | None) -> bool:
    return report is not None and any(a.code == "file_changing" for a in report.anchors)


def _rescans(paths: set[str]) -> bool:
    # A .gitignore, in any folder, changes which files git lists: where moved code may be.
    return bool(paths & RESCAN_FILES) or any(posixpath.basename(p) == IGNORE_FILE for p in paths)


def _touches(report: MemoryReport, code: set[str]) -> bool:
    for anchor in report.anchors:
        for canonical in (anchor.canonical, anchor.moved_to):
            if canonical and canonical.split("#", 1)[0] in code:
                return True
    return False


def _brief(report: MemoryReport | None) -> str:
    if report is None:
        return "(none)"
    anchors = ", ".join(f"{a.ref}={a.state.value}/{a.code}" for a in report.anchors)
    return f"{report.state.value} [{anchors}]"
