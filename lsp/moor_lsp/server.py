"""The moor language server: a small core, with one module per feature in `features/`.

The core holds the workspace state: its root (from `initialize`), the latest `Snapshot`,
and the machinery that keeps it fresh. Any change — a save, a file watcher event,
`workspace/didChangeWatchedFiles`, an edit in an open code buffer, an action — calls
`schedule` with the paths that changed; changes are coalesced over a quiet window (200 ms)
and then evaluated in the engine worker thread, off the event loop, by an `Evaluator` that
re-reads and re-observes only what those paths touch (`moor_engine.live`). Each evaluation
carries a generation number; a result that a newer change has overtaken is not published
(the memories it changed are carried into the next one). Journal and cache writes run
after the diagnostics are out.

The first scan shows `$/progress` when the client can create a progress token; it never
waits for the client to agree (requests that need a snapshot wait for the scan itself).

The engine thread is single: checks and actions (reaffirm, follow, bind) never run at once,
so they never race on `moor.lock` or the journal.

Under the features, `protocol.MoorProtocol` answers every request (malformed ones too) and
retains nothing per notification; the process exits 0 after `shutdown`, else 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import logging
import os
import sys
import uuid
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from moor_engine.live import RECHECK_CHANGING_S
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from moor_lsp import engine
from moor_lsp.engine import Snapshot
from moor_lsp.features import Feature
from moor_lsp.features.diagnostics import pulls_diagnostics
from moor_lsp.positions import uri_to_path
from moor_lsp.protocol import MoorProtocol
from moor_lsp.settings import Settings

logger = logging.getLogger("moor_lsp")
T = TypeVar("T")
DEBOUNCE_SECONDS = 0.2
PROGRESS_TIMEOUT = 5.0
# A change of more files than this (a branch switch) is parsed by the evaluation only.
PREPARE_AT_MOST = 16


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("moor")
    except PackageNotFoundError:
        return "0"


class MoorLanguageServer(LanguageServer):
    protocol_class: type[LanguageServerProtocol] = MoorProtocol

    def __init__(
        self,
        *,
        debounce: float = DEBOUNCE_SECONDS,
        watch: bool = True,
        exclude: frozenset[str] = frozenset(),
        paranoid: bool = False,
    ) -> None:
        super().__init__(
            "moor",
            _version(),
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            protocol_cls=self.protocol_class,
        )
        # The exit status: 0 only when `exit` comes after `shutdown` (the specification).
        self.shutdown_requested = False
        self.root: Path | None = None
        self.snapshot: Snapshot | None = None
        self.settings = Settings()
        self.initialization_options: Any = None
        self.debounce = debounce
        self.watch = watch
        self.paranoid = paranoid
        self.engine_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="moor-engine")
        self.evaluator: engine.Evaluator | None = None
        # Paths changed since the last evaluation began (None: check everything).
        self._changed: set[str] | None = None
        # The newest change of each path since the last evaluation began (see `schedule`).
        self._last_change: dict[str, int] = {}
        # Memories changed by evaluations that were overtaken, for the next snapshot.
        self._carried: frozenset[str] | None = frozenset()
        self._generation = 0
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        # Buffer texts not yet handed to the engine, and the call that will hand them over.
        self._pending_buffers: dict[str, str | None] = {}
        self._buffers_applied: asyncio.Future[None] | None = None
        self._ready = asyncio.Event()
        self._published = asyncio.Event()  # set (and replaced) whenever a snapshot is out
        self._shown: set[str] = set()
        self.features: list[Feature] = [_Core(self)]
        from moor_lsp.features.registry import FEATURES

        self.features.extend(cls(self) for cls in FEATURES if cls.name not in exclude)
        for feature in self.features:
            feature.register()

    # --- paths -------------------------------------------------------------------------

    def relative(self, uri: str) -> str | None:
        """The workspace-relative path of a document URI, or None outside the workspace."""
        if self.root is None:
            return None
        path = uri_to_path(uri)
        if path is None:
            return None
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    def relative_path(self, path: Path) -> str | None:
        """A filesystem path inside the workspace as a workspace-relative one."""
        if self.root is None:
            return None
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            try:
                return path.resolve().relative_to(self.root).as_posix()
            except ValueError:
                return None

    @property
    def buffers(self) -> dict[str, bytes]:
        """The unsaved code buffers the live check observes (read it in the engine thread,
        which is the only one that changes it)."""
        return self.evaluator.live.overlays if self.evaluator is not None else {}

    def uri(self, rel: str) -> str:
        assert self.root is not None
        return (self.root / rel).as_uri()

    @property
    def position_encoding(self) -> str:
        encoding = self.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or "utf-16")

    def capability(self, dotted: str) -> Any:
        """A client capability by its snake_case path (`text_document.diagnostic`), or None."""
        node: Any = self.client_capabilities
        for part in dotted.split("."):
            node = getattr(node, part, None)
            if node is None:
                return None
        return node

    # --- the engine thread -------------------------------------------------------------

    async def in_engine(self, function: Callable[..., T], *args: Any) -> T:
        """Run an engine call in the (single) engine thread, off the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.engine_pool, functools.partial(function, *args))

    async def register_with_client(
        self, registration_id: str, method: str, options: Any, what: str
    ) -> bool:
        """Dynamically register one capability; a refusal is logged, never raised."""
        try:
            await self.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id=registration_id, method=method, register_options=options
                        )
                    ]
                )
            )
        except Exception as error:
            logger.warning("the client refused to %s for moor: %s", what, error)
            return False
        return True

    def spawn(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Start a background task and keep a reference to it until it ends."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _evaluator(self) -> engine.Evaluator:
        assert self.root is not None
        if self.evaluator is None:
            self.evaluator = engine.Evaluator(self.root, paranoid=self.paranoid)
        # An untrusted workspace is only read: checks are not recorded.
        self.evaluator.live.record = self.settings.trusted
        return self.evaluator

    def schedule(self, reason: str, paths: Iterable[str] | None) -> None:
        """Re-evaluate once changes have been quiet for `debounce` seconds; `paths` are the
        workspace-relative paths that changed (None: anything may have)."""
        if self.root is None:
            return
        paths = None if paths is None else list(paths)
        self._note_changed(paths)
        self._generation += 1
        generation = self._generation
        logger.debug("change #%d: %s", generation, reason)
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.debounce, lambda: self.spawn(self._evaluate(generation)))
        if paths and len(paths) <= PREPARE_AT_MOST and self.evaluator is not None:
            # The quiet window is for coalescing, not idling: parse what changed meanwhile
            # (unless the path changed again by the time the engine thread gets to it).
            self._last_change.update(dict.fromkeys(paths, generation))
            self.spawn(
                self.in_engine(
                    self.evaluator.prepare,
                    paths,
                    lambda rel: self._last_change.get(rel) == generation,
                )
            )

    def _note_changed(self, paths: Iterable[str] | None) -> None:
        if paths is None or self._changed is None:
            self._changed = None
        else:
            self._changed.update(paths)

    async def recompute(self, reason: str, paths: Iterable[str] | None) -> Snapshot | None:
        """Evaluate now (after an action), and return the snapshot if it was published."""
        if self.root is None:
            return None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._note_changed(paths)
        self._generation += 1
        logger.debug("change #%d: %s (now)", self._generation, reason)
        await self._evaluate(self._generation)
        return (
            self.snapshot
            if self.snapshot and self.snapshot.generation == self._generation
            else None
        )

    async def ready(self, timeout: float = 60.0) -> Snapshot | None:
        """The latest snapshot, waiting for the first evaluation if it is still running."""
        if self.snapshot is None and self.root is not None:
            try:
                await asyncio.wait_for(self._ready.wait(), timeout)
            except TimeoutError:
                logger.warning("no evaluation finished within %.0f s", timeout)
        return self.snapshot

    async def settled(self, timeout: float = 60.0) -> Snapshot | None:
        """The snapshot once every change seen so far is in it (a result overtaken by a
        newer change is not published: wait for the newer one)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            published = self._published
            snapshot = self.snapshot
            if snapshot is not None and snapshot.generation == self._generation:
                return snapshot
            remaining = deadline - loop.time()
            if remaining <= 0:
                logger.warning("changes did not settle within %.0f s", timeout)
                return self.snapshot
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(published.wait(), remaining)

    async def buffer_changed(self, uri: str, closed: bool = False) -> None:
        """An open code buffer changed (or closed): preview the drift its unsaved edits
        would cause, without writing the journal or the lock. Returns once the buffer's
        newest text is what the engine observes."""
        rel = self.relative(uri)
        if rel is None:
            return
        text = None if closed else self.workspace.get_text_document(uri).source
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

        changed = await self.in_engine(apply)
        if changed:
            self.schedule(f"edited the buffer of {', '.join(changed)}", changed)

    async def _evaluate(self, generation: int) -> None:
        if generation != self._generation or self.root is None:
            return  # overtaken while waiting for the quiet window
        changed, self._changed = self._changed, set()
        self._last_change.clear()  # the evaluation reads what a pending prepare would
        evaluator = self._evaluator()
        try:
            snapshot = await self.in_engine(evaluator.evaluate, generation, changed)
        except Exception as error:
            self._note_changed(None)  # the engine's state is unknown: check everything next
            self.show_once(f"moor could not check the workspace: {error}", types.MessageType.Error)
            logger.exception("evaluation #%d failed", generation)
            return
        if generation != self._generation:
            logger.debug("evaluation #%d dropped: a newer change is pending", generation)
            self._carried = _union(self._carried, snapshot.dirty)
            return
        snapshot = dataclasses.replace(snapshot, dirty=_union(self._carried, snapshot.dirty))
        self._carried = frozenset()
        logger.info(
            "evaluation #%d: %d memories in %.3f s (%d anchors observed)",
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
            self.show_once(f"moor: {warning}", types.MessageType.Warning)
        for problem in snapshot.problems:
            self.show_once(f"moor: {problem[0]}: {problem[1]}", types.MessageType.Error)
        for disagreement in evaluator.disagreements:
            self.show_once(
                f"moor (paranoid): the incremental check differs from a full one: {disagreement}",
                types.MessageType.Error,
            )
        for feature in self.features:
            try:
                await feature.on_snapshot(snapshot)
            except Exception as error:
                feature.report("updating after a check failed", error)
        self.spawn(self._commit(evaluator))
        if snapshot.changing:
            # A file seen mid-save is `file_changing`: look again once it may have settled,
            # even if nothing else changes (the live check re-reads such files).
            loop = asyncio.get_running_loop()
            paths = sorted(snapshot.changing)
            loop.call_later(
                RECHECK_CHANGING_S,
                lambda: self.schedule("a file was being written", paths),
            )

    async def _commit(self, evaluator: engine.Evaluator) -> None:
        try:
            await self.in_engine(evaluator.commit)
        except Exception as error:
            self.show_once(f"moor could not write its journal: {error}", types.MessageType.Error)
            logger.exception("journalling a check failed")

    async def first_scan(self) -> None:
        """The first evaluation, reported with `$/progress` when the client supports it."""
        progress = None
        if self.capability("window.work_done_progress"):
            progress = self.spawn(self._begin_progress())
        try:
            await self.recompute("first scan", None)
        finally:
            token = await progress if progress is not None else None
            if token is not None:
                try:
                    self.work_done_progress.end(
                        token, types.WorkDoneProgressEnd(message=self._scanned())
                    )
                except Exception:
                    logger.warning("could not end the progress report", exc_info=True)

    async def _begin_progress(self) -> str | None:
        """Create a progress token and begin; None when the client refuses or is silent."""
        token = f"moor-first-scan-{uuid.uuid4().hex[:8]}"
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), PROGRESS_TIMEOUT)
            self.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(title="moor: checking memories", cancellable=False),
            )
        except Exception as error:
            logger.info("no progress report for the first scan: %r", error)
            return None
        return token

    def _scanned(self) -> str:
        if self.snapshot is None:
            return "not checked"
        return f"{len(self.snapshot.memories)} memories checked"

    def show_once(self, message: str, kind: types.MessageType) -> None:
        """`window/showMessage`, at most once per distinct message in a session."""
        if message in self._shown:
            return
        self._shown.add(message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    async def shutting_down(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._generation += 1  # anything still running is stale now
        for feature in self.features:
            try:
                await feature.on_shutdown()
            except Exception as error:
                feature.report("shutting down failed", error)
        if self.evaluator is not None:
            try:  # what the last check learnt goes to the journal before the end
                await asyncio.wait_for(self.in_engine(self.evaluator.close), 5)
            except Exception:
                logger.warning("could not close the journal cleanly", exc_info=True)
        self.engine_pool.shutdown(wait=False, cancel_futures=True)


class _Core(Feature):
    """Lifecycle and document sync: where the root comes from, and when to re-check."""

    name = "core"
    server: MoorLanguageServer

    def register(self) -> None:
        self._unoffered: dict[str, Any] = {}  # handlers left out of the capabilities
        self.handle(types.INITIALIZE, self.initialize, None)
        self.handle(types.INITIALIZED, self.initialized, None)
        self.handle(types.SHUTDOWN, self.shutdown, None)
        self.handle(types.TEXT_DOCUMENT_DID_OPEN, self.opened, None)
        self.handle(types.TEXT_DOCUMENT_DID_CHANGE, self.changed, None)
        self.handle(types.TEXT_DOCUMENT_DID_CLOSE, self.closed, None)
        self.handle(types.TEXT_DOCUMENT_DID_SAVE, self.saved, None)

    async def initialize(self, params: types.InitializeParams) -> None:
        self.server.initialization_options = params.initialization_options
        folder: Path | None = None
        if params.workspace_folders:
            folder = uri_to_path(params.workspace_folders[0].uri)
            if len(params.workspace_folders) > 1:
                logger.warning("several workspace folders: moor serves the first, %s", folder)
        elif params.root_uri:
            folder = uri_to_path(params.root_uri)
        elif params.root_path:
            folder = Path(params.root_path)
        if folder is None:
            logger.warning("no workspace folder: nothing to check")
            return
        self.server.root = engine.find_root(folder)
        logger.info("workspace root: %s", self.server.root)
        if not pulls_diagnostics(self.server):
            # pygls builds the capabilities from the registered features right after this
            # handler: a client that is not to pull is not offered pull (it would otherwise
            # pull and never be told to again). The handlers come back on `initialized`, so
            # a pull sent anyway is still answered.
            features = self.server.protocol.fm.features
            for method in (types.TEXT_DOCUMENT_DIAGNOSTIC, types.WORKSPACE_DIAGNOSTIC):
                if method in features:
                    self._unoffered[method] = features.pop(method)

    async def initialized(self, _params: types.InitializedParams) -> None:
        self.server.protocol.fm.features.update(self._unoffered)
        self._unoffered.clear()
        for feature in self.server.features:
            if feature is not self:
                try:
                    await feature.on_initialized()
                except Exception as error:
                    feature.report("starting failed", error)
        self.server.spawn(self.server.first_scan())

    async def shutdown(self, _params: None) -> None:
        self.server.shutdown_requested = True
        await self.server.shutting_down()

    # Documents are kept by pygls. Memories are read from disk (their saved state); an
    # unsaved code buffer previews the drift it would cause (see `buffer_changed`).

    async def opened(self, params: types.DidOpenTextDocumentParams) -> None:
        await self.server.buffer_changed(params.text_document.uri)
        if self.server.snapshot is not None:
            for feature in self.server.features:
                try:
                    await feature.on_open(params.text_document.uri)
                except Exception as error:
                    feature.report("opening a document failed", error)

    async def changed(self, params: types.DidChangeTextDocumentParams) -> None:
        await self.server.buffer_changed(params.text_document.uri)

    async def closed(self, params: types.DidCloseTextDocumentParams) -> None:
        await self.server.buffer_changed(params.text_document.uri, closed=True)

    async def saved(self, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        await self.server.buffer_changed(uri)  # saved: the buffer is the file again
        rel = self.server.relative(uri)
        self.server.schedule(f"saved {uri}", None if rel is None else [rel])


def _union(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    return None if a is None or b is None else a | b


def main(argv: list[str] | None = None) -> int:
    """`moor lsp` / `python -m moor_lsp`: serve LSP on stdin/stdout."""
    parser = argparse.ArgumentParser(prog="moor lsp", description="the moor language server")
    parser.add_argument("--stdio", action="store_true", help="use stdin/stdout (the default)")
    parser.add_argument(
        "--log-level",
        default=os.environ.get("MOOR_LSP_LOG", "warning"),
        choices=["debug", "info", "warning", "error"],
        help="what to log on stderr (also: MOOR_LSP_LOG)",
    )
    parser.add_argument(
        "--paranoid",
        action="store_true",
        default=os.environ.get("MOOR_LSP_PARANOID") == "1",
        help="after every incremental check, check everything from scratch and report any "
        "difference as an error (slow; for tests; also: MOOR_LSP_PARANOID=1)",
    )
    parser.add_argument(
        "--no-watch",
        action="store_true",
        help="do not watch the workspace (rely on the client's didChangeWatchedFiles)",
    )
    options = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logger.setLevel(options.log_level.upper())
    server = MoorLanguageServer(watch=not options.no_watch, paranoid=options.paranoid)
    server.start_io()
    return 0 if server.shutdown_requested else 1
