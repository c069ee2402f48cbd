"""A long-lived process's session and verdicts, kept while nothing they rest on moved.

A warm MCP server opened a session per tool call (moor.toml parsed, the journal opened,
~5 MB of moor.lock read and compared at 10,000 memories) and checked every recall
candidate again: ~35 ms of a `memory_search`. `KeptSession` keeps both, by the same stat
keys as a kept check (`kept_check`, `filestat`):

* the session, while the settings' (moor.toml, pyproject.toml) and moor.lock's keys and
  the journal's identity hold, no interrupted action waits and the session was opened
  without a warning; each call gets its own observer (never older than the call);
* each memory's verdict (its `MemoryReport`), while the keys of its memory file and of
  every file its anchors name hold, its moor.lock entry is the same, and so are what
  every memory declaring `supersedes:` declares (their files' keys), the superseded
  memories' texts (their files' keys) and the latches in moor.lock. Only verdicts that
  rest on those alone are kept (`kept_check.keepable_memory`), each with the memory it
  read (`memories`: what a search shows beside the verdict, not read again).

The first verdicts asked of an empty memo are those of every memory, evaluated at once
(~1 s at 10,000): a warm server then re-evaluates only what moved (memory:
a-warm-check-answers-from-its-kept-report).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from moor_store import intent
from moor_store.inside import has_stray_temporaries

from moor_engine.grounding.check import Evaluation, bound_addresses
from moor_engine.grounding.memories import LoadedMemory, load_memories
from moor_engine.grounding.observe import FileObserver
from moor_engine.grounding.trust import MemoryReport
from moor_engine.kept_check import SETTINGS, Keys, file_keys, journal_identity, keepable_memory
from moor_engine.session import Session
from moor_engine.workspace.filestat import RACY_WINDOW_NS
from moor_engine.workspace.roots import STATE_DIR


@dataclass(frozen=True)
class _Verdict:
    report: MemoryReport
    files: Keys  # the memory file's and its anchors' files' keys
    locked: object  # its moor.lock entry (None: none) when it was evaluated
    # Every address moor.lock bound its anchors to, in any memory: what an observation
    # near a syntax error is believed for (`Checker._bound_addresses`).
    bound: dict[str, frozenset[str]]
    # The memory as the verdict read it: what a search shows beside the verdict, not read
    # again while the verdict is kept (its file's key is in `files`).
    loaded: LoadedMemory


class KeptSession:
    """One workspace's session and memory verdicts, for a process answering many calls."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # The SDK runs each tool call in a worker thread: one call at a time uses the session.
        self._lock = threading.RLock()
        self._session: Session | None = None
        self._keys: tuple[Keys, list[int]] | None = None
        self._verdicts: dict[str, _Verdict] = {}
        self._resting: tuple[object, ...] | None = None
        # The session this call was given and the settings' keys and journal identity taken
        # for it: what its verdicts rest on (not stat-ed again within the call).
        self._called: tuple[Session, tuple[Keys, list[int]]] | None = None
        self.opened = 0  # sessions opened: for tests and the benchmark
        self.evaluated = 0  # memories evaluated

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        """The kept session if nothing it rests on moved, else a new one (kept if it may be)."""
        with self._lock:
            kept = self._session
            now = self._settings()
            if kept is None or now != self._keys:
                self.close()
                opened = self._open()
                if opened is not self._session:  # not kept: this call's alone
                    with opened:
                        yield opened
                    return
                kept = opened
                now = self._keys
            given = replace(
                kept,
                observer=FileObserver(
                    kept.workspace.root, kept.workspace.config.max_file_size, kept.journal
                ),
                warnings=[],
                last_evaluation=None,
            )
            self._called = None if now is None else (given, now)
            try:
                yield given
            finally:
                self._called = None

    def _settings(self) -> tuple[Keys, list[int]] | None:
        if intent.pending(self.root) or has_stray_temporaries(self.root, STATE_DIR):
            return None  # `Session.open` completes or sweeps first
        return (file_keys(self.root, SETTINGS), journal_identity(self.root))

    def _open(self) -> Session:
        """A new session, kept (`self._session`) unless it told something or what it
        rests on moved while it opened."""
        keys = self._settings()
        session = Session.open(self.root)
        self.opened += 1
        journal = session.journal
        if not (
            keys is None
            or session.told()
            or journal is None
            or journal.read_only
            or keys != self._settings()
            or _racy(keys[0], session.opened_ns)
        ):
            self._session, self._keys = session, keys
        return session

    def close(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.close()
            self._session, self._keys = None, None

    # --- verdicts ------------------------------------------------------------------------

    def verdicts(
        self, session: Session, paths: Sequence[str], declaring: Sequence[str]
    ) -> Mapping[str, MemoryReport]:
        """The trust state of each of `paths` (as `recall_index.session_verdicts` gives
        it): kept ones whose keys hold, the rest evaluated (every memory, the first time)."""
        with self._lock:
            settings, journal = self._settings_of(session)
            resting = (
                tuple(declaring),
                file_keys(self.root, declaring),
                # A memory saying what a superseded one said is retired by that one's text.
                file_keys(self.root, sorted(session.lock.retired)),
                settings,
                journal,
                _latch_records(session),
            )
            if resting != self._resting:
                self._verdicts.clear()
                self._resting = resting
            found: dict[str, MemoryReport] = {}
            missing: list[str] = []
            vouched = file_keys(
                self.root,
                {rel for p in paths if (v := self._verdicts.get(p)) for rel in v.files},
            )
            memories = session.lock.memories
            bound = bound_addresses(session.lock)
            for path in paths:
                kept = self._verdicts.get(path)
                if (
                    kept is not None
                    and kept.locked == memories.get(path)
                    and all(vouched.get(rel) == key for rel, key in kept.files.items())
                    and all(bound.get(c, set()) == held for c, held in kept.bound.items())
                ):
                    found[path] = kept.report
                else:
                    missing.append(path)
            if missing:
                every = not self._verdicts
                wanted = session.workspace.memory_paths() if every else [*missing, *declaring]
                found.update(self._evaluate(session, list(dict.fromkeys(wanted)), paths))
            return found

    def _settings_of(self, session: Session) -> tuple[Keys, list[int]]:
        """moor.toml's and pyproject.toml's keys and the journal's identity as `session` was
        given on (not moor.lock's: each verdict rests on its own entry); stat-ed now for a
        session not given by `session()` in this call."""
        called = self._called
        if called is not None and called[0] is session:
            keys, journal = called[1]
            return {rel: keys[rel] for rel in SETTINGS[:2]}, journal
        return file_keys(self.root, SETTINGS[:2]), journal_identity(self.root)

    def memories(
        self, session: Session, reports: Sequence[MemoryReport]
    ) -> dict[str, LoadedMemory]:
        """The memory each of `reports` judged, as `load_memories` reads it: the one its
        verdict read while `verdicts` just answered that verdict from what it keeps (every
        key it rests on held, its memory file's too), the others read now."""
        with self._lock:
            found: dict[str, LoadedMemory] = {}
            for report in reports:
                kept = self._verdicts.get(report.path)
                if kept is not None and kept.report is report:
                    found[report.path] = kept.loaded
            rest = [report.path for report in reports if report.path not in found]
            if rest:
                found.update(load_memories(session.workspace, rest, session.journal))
            return found

    def _evaluate(
        self, session: Session, paths: list[str], asked: Sequence[str]
    ) -> dict[str, MemoryReport]:
        started = time.time_ns()
        evaluation = session.evaluate(paths)
        self.evaluated += len(paths)
        self._keep(session, evaluation, started)
        reports = {memory.path: memory for memory in evaluation.report.memories}
        return {path: reports[path] for path in asked if path in reports}

    def _keep(self, session: Session, evaluation: Evaluation, started: int) -> None:
        memories = session.lock.memories
        bound = bound_addresses(session.lock)
        for report in evaluation.report.memories:
            files = keepable_memory(session, evaluation, report, started)
            if files is not None:
                anchors = {a.canonical for a in report.anchors if a.canonical is not None}
                self._verdicts[report.path] = _Verdict(
                    report,
                    files,
                    memories.get(report.path),
                    {c: frozenset(bound.get(c, ())) for c in anchors},
                    evaluation.loaded[report.path],
                )


def _racy(keys: Keys, opened_ns: int) -> bool:
    return any(key and key[1] >= opened_ns - RACY_WINDOW_NS for key in keys.values())


def _latch_records(session: Session) -> tuple[object, ...]:
    lock = session.lock
    return (dict(lock.retired), dict(lock.restored), frozenset(lock.tombstones))
