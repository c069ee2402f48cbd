"""One workspace root the server serves: its evaluator, snapshot, settings and the
machinery that keeps its snapshot fresh. The server holds one `Folder` per root and routes
every document, event and command to one of them (`moor_lsp.server`).

Any change — a save, a file watcher event, `workspace/didChangeWatchedFiles`, an edit in
an open code buffer, an action — calls `schedule` with the root-relative paths that
changed; changes are coalesced over a quiet window (200 ms) and then evaluated in the
server's engine thread, off the event loop, by an `Evaluator` that re-reads and
re-observes only what those paths touch (`moor_engine.grounding.live`). Each evaluation carries a
generation number (one counter per folder); a result that a newer change has overtaken is
not published (the memories it changed are carried into the next one). Journal and cache
writes run after the diagnostics are out.

A folder that is closed (its workspace folder was removed, or the server shuts down)
stops: its timer is cancelled, nothing it evaluates any more is published, and its
journal is closed in the engine thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote_from_bytes

from lsprotocol import types
from moor_engine.grounding.live import RECHECK_CHANGING_S

from moor_lsp import engine
from moor_lsp.engine import Snapshot
from moor_lsp.positions import uri_to_path
from moor_lsp.settings import Settings

if TYPE_CHECKING:
    from moor_engine.anchors.cadence import Stalled

    from moor_lsp.server import MoorLanguageServer

logger = logging.getLogger("moor_lsp")
PROGRESS_TIMEOUT = 5.0
# A change of more files than this (a branch switch) is parsed by the evaluation only.
PREPARE_AT_MOST = 16
# Changed files are parsed ahead of their evaluation once changes paused this long (a
# quarter of the debounce at most): a parse holds the interpreter's lock throughout
# (tree-sitter does not release it), and parsing each version of a buffer during a burst
# of edits starved the requests answered meanwhile — a hover during a flood of edits at
# 10,000 memories spent most of its time waiting for parses of versions no check would
# read (issue 22).
PREPARE_QUIET_S = 0.05
# A root-relative path with nothing for a path to normalise away (no `.`/`..` parts, no
# empty ones, no leading or trailing slash).
_PLAIN = re.compile(r"(?!\.\.?(?:/|$))[^/]+(?:/(?!\.\.?(?:/|$))[^/]+)*")


def contains(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


class Folder:
    """The state of one workspace root."""

    def __init__(self, server: MoorLanguageServer, root: Path) -> None:
        self.server = server
        self.root = root
        # The URI of a path inside the root is this and the quoted path (not for `/`).
        self._uri_base = root.as_uri() + "/" if root.parent != root else None
        self.snapshot: Snapshot | None = None
        self.settings = Settings()
        self.evaluator: engine.Evaluator | None = None
        self.closed = False
        # Paths changed since the last evaluation began (None: check everything).
        self._changed: set[str] | None = None
        # The newest change of each path since the last evaluation began (see `schedule`).
        self._last_change: dict[str, int] = {}
        # Memories changed by evaluations that were overtaken, for the next snapshot.
        self._carried: frozenset[str] | None = frozenset()
        self.generation = 0
        self._timer: asyncio.TimerHandle | None = None
        self._prepare_timer: asyncio.TimerHandle | None = None  # see `schedule`
        # Buffer texts not yet handed to the engine, and the call that will hand them over.
        self._pending_buffers: dict[str, str | None] = {}
        self._buffers_applied: asyncio.Future[None] | None = None
        self._ready = asyncio.Event()
        self._glanced: frozenset[str] = frozenset()  # memories shown before the first scan
        self._published = asyncio.Event()  # set (and replaced) whenever a snapshot is out
        # Command anchors (moor_engine.anchors.cadence): the engine decides what is due; the
        # folder only wakes when it says and asks for a round.
        self._due = False  # the next evaluation observes the due command anchors
        self._cadence_timer: asyncio.TimerHandle | None = None
        self._looked_at: float | None = None  # the fake clock's last time logged
        # What rounds of evaluations that were overtaken observed, said with the next one.
        self._carried_round: tuple[tuple[str, ...], tuple[Stalled, ...]] = ((), ())

    def __repr__(self) -> str:
        return f"Folder({self.root})"

    # --- paths -------------------------------------------------------------------------

    def relative(self, uri: str) -> str | None:
        """The root-relative path of a document URI, or None outside this root."""
        path = uri_to_path(uri)
        if path is None:
            return None
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    def relative_path(self, path: Path) -> str | None:
        """A filesystem path inside this root as a root-relative one."""
        try:
            return Path(os.path.normpath(path)).relative_to(self.root).as_posix()
        except ValueError:
            try:
                return path.resolve().relative_to(self.root).as_posix()
            except ValueError:
                return None

    def uri(self, rel: str) -> str:
        if self._uri_base is not None and _PLAIN.fullmatch(rel):
            # What `as_uri` makes of it, without building a path: ~25 µs a memory, and a
            # check of 10,000 memories names every one of them.
            return self._uri_base + quote_from_bytes(os.fsencode(rel))
        return (self.root / rel).as_uri()

    def owns(self, uri: str) -> bool:
        """Whether the server routes `uri` here (this is the innermost root holding it)."""
        return self.server.folder_for(uri) is self

    def owns_relative(self) -> Callable[[str], bool]:
        """`owns` for root-relative paths as the engine lists them (normalised, inside this
        root), decided without the file system: each is this root's unless it lies in a
        served root nested inside this one. Built once for a whole snapshot."""
        nested = tuple(
            f"{folder.root.relative_to(self.root).as_posix()}/"
            for folder in self.server.folders.values()
            if folder is not self and contains(self.root, folder.root)
        )
        if not nested:
            return lambda _rel: True
        return lambda rel: not f"{rel}/".startswith(nested)

    @property
    def buffers(self) -> dict[str, bytes]:
        """The unsaved code buffers the live check observes (read it in the engine thread,
        which is the only one that changes it)."""
        return self.evaluator.live.overlays if self.evaluator is not None else {}

    def buffers_now(self) -> dict[str, bytes]:
        """A copy of `buffers` as they are now, for a call in the reader thread (the copy is
        made here, on the event loop, in one step the engine thread cannot interleave)."""
        return dict(self.buffers)

    # --- evaluating --------------------------------------------------------------------

    def _evaluator(self) -> engine.Evaluator:
        if self.evaluator is None:
            self.evaluator = engine.Evaluator(
                self.root, paranoid=self.server.paranoid, clock=self.server.clock.now
            )
        # An untrusted workspace is only read: checks are not recorded.
        self.evaluator.live.record = self.settings.trusted
        self.evaluator.live.trust = self.settings.said_trusted  # declared anchor commands
        return self.evaluator

    def schedule(self, reason: str, paths: Iterable[str] | None) -> None:
        """Re-evaluate once changes have been quiet for `debounce` seconds; `paths` are the
        root-relative paths that changed (None: anything may have)."""
        if self.closed:
            return
        paths = None if paths is None else list(paths)
        self._note_changed(paths)
        self.generation += 1
        generation = self.generation
        logger.debug("%s: change #%d: %s", self.root, generation, reason)
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(
            self.server.debounce, lambda: self.server.spawn(self._evaluate(generation))
        )
        if paths and len(paths) <= PREPARE_AT_MOST and self.evaluator is not None:
            # The quiet window is for coalescing, not idling: parse what changed meanwhile,
            # once the changes paused (see `PREPARE_QUIET_S`).
            self._last_change.update(dict.fromkeys(paths, generation))
            if self._prepare_timer is not None:
                self._prepare_timer.cancel()
            self._prepare_timer = loop.call_later(
                min(PREPARE_QUIET_S, self.server.debounce / 4), self._prepare
            )

    def _prepare(self) -> None:
        """Parse, in the engine thread, the paths changed since the last evaluation began
        (unless a path changed again by the time the engine thread gets to it)."""
        self._prepare_timer = None
        if self.closed or self.evaluator is None or not self._last_change:
            return
        newest = dict(self._last_change)
        self.server.spawn(
            self.server.in_engine(
                self.evaluator.prepare,
                list(newest),
                lambda rel: self._last_change.get(rel) == newest[rel],
            )
        )

    def _note_changed(self, paths: Iterable[str] | None) -> None:
        if paths is None or self._changed is None:
            self._changed = None
        else:
            self._changed.update(paths)

    async def recompute(self, reason: str, paths: Iterable[str] | None) -> Snapshot | None:
        """Evaluate now (after an action), and return the snapshot if it was published."""
        if self.closed:
            return None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._note_changed(paths)
        self.generation += 1
        logger.debug("%s: change #%d: %s (now)", self.root, self.generation, reason)
        await self._evaluate(self.generation)
        return (
            self.snapshot if self.snapshot and self.snapshot.generation == self.generation else None
        )

    async def ready(self, timeout: float = 60.0) -> Snapshot | None:
        """The latest snapshot, waiting for the first evaluation if it is still running."""
        if self.snapshot is None and not self.closed:
            try:
                await asyncio.wait_for(self._ready.wait(), timeout)
            except TimeoutError:
                logger.warning("%s: no evaluation finished within %.0f s", self.root, timeout)
        return self.snapshot

    async def ready_for(self, rel: str | None, timeout: float = 60.0) -> None:
        """Until the first snapshot, or a glance before it that holds the memory `rel`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.snapshot is None and not self.closed and rel not in self._glanced:
            published = self._published
            remaining = deadline - loop.time()
            if remaining <= 0:
                logger.warning("%s: no evaluation finished within %.0f s", self.root, timeout)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(published.wait(), remaining)

    async def settled(self, timeout: float = 60.0) -> Snapshot | None:
        """The snapshot once every change seen so far is in it (a result overtaken by a
        newer change is not published: wait for the newer one)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            published = self._published
            snapshot = self.snapshot
            if self.closed or (snapshot is not None and snapshot.generation == self.generation):
                return snapshot
            remaining = deadline - loop.time()
            if remaining <= 0:
                logger.warning("%s: changes did not settle within %.0f s", self.root, timeout)
                return self.snapshot
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(published.wait(), remaining)

    async def buffer_changed(self, uri: str, closed: bool = False) -> None:
        """An open code buffer changed (or closed): preview the drift its unsaved edits
        would cause, without writing the journal or the lock. Returns once the buffer's
        newest text is what the engine observes."""
        rel = self.relative(uri)
        if rel is None or self.closed:
            return
        text = None if closed else self.server.workspace.get_text_document(uri).source
        # Coalesced: a burst of edits costs one engine call with the newest text of each
        # buffer, not one per keystroke queued ahead of every hover (see `_apply_buffers`).
        self._pending_buffers[rel] = text
        if self._buffers_applied is None:
            self._buffers_applied = asyncio.ensure_future(self._apply_buffers())
        await asyncio.shield(self._buffers_applied)

    async def _apply_buffers(self) -> None:
        pending, self._pending_buffers = self._pending_buffers, {}
        self._buffers_applied = None  # an edit from now on waits for the next call
        evaluator = self._evaluator()

        def apply() -> list[str]:
            return [rel for rel, text in pending.items() if evaluator.set_buffer(rel, text)]

        changed = await self.server.in_engine(apply)
        if changed:
            self.schedule(f"edited the buffer of {', '.join(changed)}", changed)

    async def _evaluate(self, generation: int) -> None:
        if generation != self.generation or self.closed:
            return  # overtaken while waiting for the quiet window
        changed, self._changed = self._changed, set()
        due, self._due = self._due, False
        self._last_change.clear()  # the evaluation reads what a pending prepare would
        evaluator = self._evaluator()
        server = self.server
        try:
            snapshot = await server.in_engine(evaluator.evaluate, generation, changed, due)
        except Exception as error:
            self._note_changed(None)  # the engine's state is unknown: check everything next
            server.show_once(
                f"moor could not check the workspace {self.root}: {error}", types.MessageType.Error
            )
            logger.exception("%s: evaluation #%d failed", self.root, generation)
            return
        if generation != self.generation or self.closed:
            logger.debug("%s: evaluation #%d dropped: a newer change came", self.root, generation)
            self._carried = _union(self._carried, snapshot.dirty)
            observed, stalled = self._carried_round
            self._carried_round = (
                observed + snapshot.observed_commands,
                stalled + snapshot.stalled,
            )
            return
        observed, stalled = self._carried_round
        snapshot = dataclasses.replace(
            snapshot,
            dirty=_union(self._carried, snapshot.dirty),
            observed_commands=observed + snapshot.observed_commands,
            stalled=stalled + snapshot.stalled,
        )
        self._carried, self._carried_round = frozenset(), ((), ())
        logger.info(
            "%s: evaluation #%d: %d memories in %.3f s (%d anchors observed)",
            self.root,
            generation,
            len(snapshot.memories),
            snapshot.seconds,
            snapshot.reobserved,
        )
        self.snapshot = snapshot
        self._ready.set()
        self._published.set()
        self._published = asyncio.Event()
        for warning in snapshot.warnings:
            server.show_once(f"moor: {warning}", types.MessageType.Warning)
        for problem in snapshot.problems:
            server.show_once(f"moor: {problem[0]}: {problem[1]}", types.MessageType.Error)
        self._after_round(snapshot)
        for disagreement in evaluator.disagreements:
            server.show_once(
                f"moor (paranoid): the incremental check differs from a full one: {disagreement}",
                types.MessageType.Error,
            )
        for feature in server.features:
            try:
                await feature.on_snapshot(self, snapshot)
            except Exception as error:
                feature.report("updating after a check failed", error)
        server.spawn(self._commit(evaluator))
        if snapshot.changing:
            # A file seen mid-save is `file_changing`: look again once it may have settled,
            # even if nothing else changes (the live check re-reads such files).
            loop = asyncio.get_running_loop()
            paths = sorted(snapshot.changing)
            loop.call_later(
                RECHECK_CHANGING_S,
                lambda: self.schedule("a file was being written", paths),
            )

    # --- the cadence of command anchors ---------------------------------------------------

    def _after_round(self, snapshot: Snapshot) -> None:
        server = self.server
        if snapshot.observed_commands:
            server.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Log,
                    message=f"moor: observed {', '.join(snapshot.observed_commands)} "
                    f"at {server.clock.now():g} s",
                )
            )
        for event in snapshot.stalled:
            server.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"moor: anchor:{event.name} stalled: {event.failures} failed "
                    f"attempts in a row (last: {event.code}); moor keeps trying, backing off",
                )
            )
        if snapshot.problems:
            return  # the workspace cannot be checked: nothing is scheduled until it can
        self._arm_cadence(snapshot.cadence_wait)

    def _arm_cadence(self, wait: float | None) -> None:
        if self._cadence_timer is not None:
            self._cadence_timer.cancel()
            self._cadence_timer = None
        clock = self.server.clock
        if self.closed or (wait is None and not clock.fake):
            return  # no command anchor to observe (a fake clock is looked at regardless)
        delay = min(float("inf") if wait is None else wait, clock.longest_wait)
        self._cadence_timer = asyncio.get_running_loop().call_later(
            delay, lambda: self.server.spawn(self._wake())
        )

    async def _wake(self) -> None:
        self._cadence_timer = None
        evaluator = self.evaluator
        if self.closed or evaluator is None:
            return
        cadence = evaluator.live.cadence
        due = await self.server.in_engine(cadence.due)
        if due:
            self.observe_commands(f"anchors due: {', '.join(due)}")
            return
        clock = self.server.clock
        if clock.fake and (now := clock.now()) != self._looked_at:
            self._looked_at = now
            self.server.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Log, message=f"moor: nothing due at {now:g} s"
                )
            )
        self._arm_cadence(await self.server.in_engine(cadence.wait))

    async def observe_now(self, reason: str) -> Snapshot | None:
        """Evaluate now, observing the command anchors that are due (a person asked)."""
        self._due = True
        return await self.recompute(reason, [])

    def observe_commands(self, reason: str) -> None:
        """Evaluate soon, observing the command anchors that are due."""
        self._due = True
        self.schedule(reason, [])

    async def _commit(self, evaluator: engine.Evaluator) -> None:
        try:
            await self.server.in_engine(evaluator.commit)
        except Exception as error:
            self.server.show_once(
                f"moor could not write its journal: {error}", types.MessageType.Error
            )
            logger.exception("%s: journalling a check failed", self.root)

    async def first_scan(self) -> None:
        """The first evaluation, reported with `$/progress` when the client supports it."""
        progress = None
        if self.server.capability("window.work_done_progress"):
            progress = self.server.spawn(self._begin_progress())
        try:
            await self._glance()
            await self.recompute("first scan", None)
        finally:
            token = await progress if progress is not None else None
            if token is not None:
                try:
                    self.server.work_done_progress.end(
                        token, types.WorkDoneProgressEnd(message=self._scanned())
                    )
                except Exception:
                    logger.warning("could not end the progress report", exc_info=True)

    async def _glance(self) -> None:
        """The diagnostics of the memories open in the editor before those of the rest: the
        session is opened first (reading moor.lock is the scan's longest single step; the
        editor's `didOpen`s arrive meanwhile), then the open memories are checked alone and
        shown, then the full check reuses that session and what it observed."""
        evaluator = self._evaluator()
        try:
            await self.server.in_engine(evaluator.glance, self.generation, ())
            opened = [
                rel
                for uri in list(self.server.workspace.text_documents)
                if self.owns(uri) and (rel := self.relative(uri)) is not None
            ]
            if not opened or self.closed:
                return
            glanced = await self.server.in_engine(evaluator.glance, self.generation, opened)
        except Exception:  # a head start is a nicety: the full check says what went wrong
            logger.exception("%s: could not check the open memories first", self.root)
            return
        if glanced is None or self.closed or self.snapshot is not None:
            return
        logger.info("%s: %d open memories checked first", self.root, len(glanced.memories))
        self._glanced = frozenset(glanced.memories)
        self._published.set()
        self._published = asyncio.Event()
        for feature in self.server.features:
            try:
                await feature.on_glance(self, glanced)
            except Exception as error:
                feature.report("showing the open memories first failed", error)

    async def _begin_progress(self) -> str | None:
        """Create a progress token and begin; None when the client refuses or is silent."""
        token = f"moor-first-scan-{uuid.uuid4().hex[:8]}"
        progress = self.server.work_done_progress
        try:
            await asyncio.wait_for(progress.create_async(token), PROGRESS_TIMEOUT)
            title = "moor: checking memories"
            if len(self.server.folders) > 1:
                title += f" in {self.root.name}"
            progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=False))
        except Exception as error:
            logger.info("no progress report for the first scan: %r", error)
            return None
        return token

    def _scanned(self) -> str:
        if self.snapshot is None:
            return "not checked"
        return f"{len(self.snapshot.memories)} memories checked"

    async def close(self) -> None:
        """Stop: nothing more is evaluated or published; the journal is closed."""
        self.closed = True
        self.generation += 1  # anything still running is stale now
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._prepare_timer is not None:
            self._prepare_timer.cancel()
            self._prepare_timer = None
        self._arm_cadence(None)
        self._ready.set()  # whoever waits for a first snapshot stops waiting
        self._published.set()
        if self.evaluator is not None:
            try:  # what the last check learnt goes to the journal before the end
                await asyncio.wait_for(self.server.in_engine(self.evaluator.close), 5)
            except Exception:
                logger.warning("%s: could not close the journal cleanly", self.root, exc_info=True)


def _union(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    return None if a is None or b is None else a | b
