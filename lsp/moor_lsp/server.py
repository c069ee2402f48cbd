"""The moor language server: a small core, with one module per feature in `features/`.

The core holds the workspace state: its root (from `initialize`), the latest `Snapshot`
(one `moor check` of the whole workspace), and the machinery that keeps it fresh. Any
change — a save, a file watcher event, `workspace/didChangeWatchedFiles`, an action —
calls `schedule`, which coalesces changes over a quiet window (200 ms) and then evaluates
in the engine worker thread, off the event loop. Each evaluation carries a generation
number; a result that a newer change has overtaken is dropped, never published.

The first scan shows `$/progress` when the client can create a progress token; it never
waits for the client to agree (requests that need a snapshot wait for the scan itself).

The engine thread is single: checks and actions (reaffirm, follow, bind) never run at once,
so they never race on `moor.lock` or the journal.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import sys
import uuid
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from moor_lsp import engine
from moor_lsp.engine import Snapshot
from moor_lsp.features import Feature
from moor_lsp.positions import uri_to_path
from moor_lsp.settings import Settings

logger = logging.getLogger("moor_lsp")
T = TypeVar("T")
DEBOUNCE_SECONDS = 0.2
PROGRESS_TIMEOUT = 5.0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("moor")
    except PackageNotFoundError:
        return "0"


class MoorLanguageServer(LanguageServer):
    def __init__(
        self,
        *,
        debounce: float = DEBOUNCE_SECONDS,
        watch: bool = True,
        exclude: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__(
            "moor", _version(), text_document_sync_kind=types.TextDocumentSyncKind.Full
        )
        self.root: Path | None = None
        self.snapshot: Snapshot | None = None
        self.settings = Settings()
        self.initialization_options: Any = None
        self.debounce = debounce
        self.watch = watch
        self.engine_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="moor-engine")
        self._generation = 0
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ready = asyncio.Event()
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

    def schedule(self, reason: str) -> None:
        """Re-evaluate the workspace once changes have been quiet for `debounce` seconds."""
        if self.root is None:
            return
        self._generation += 1
        generation = self._generation
        logger.debug("change #%d: %s", generation, reason)
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.debounce, lambda: self.spawn(self._evaluate(generation)))

    async def recompute(self, reason: str) -> Snapshot | None:
        """Evaluate now (after an action), and return the snapshot if it was published."""
        if self.root is None:
            return None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
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

    async def _evaluate(self, generation: int) -> None:
        if generation != self._generation or self.root is None:
            return  # overtaken while waiting for the quiet window
        try:
            # An untrusted workspace is only read: the check is not recorded.
            snapshot = await self.in_engine(
                engine.evaluate, self.root, generation, self.settings.trusted
            )
        except Exception as error:
            self.show_once(f"moor could not check the workspace: {error}", types.MessageType.Error)
            logger.exception("evaluation #%d failed", generation)
            return
        if generation != self._generation:
            logger.debug("evaluation #%d dropped: a newer change is pending", generation)
            return
        logger.info(
            "evaluation #%d: %d memories in %.3f s",
            generation,
            len(snapshot.memories),
            snapshot.seconds,
        )
        self.snapshot = snapshot
        self._ready.set()
        for warning in snapshot.warnings:
            self.show_once(f"moor: {warning}", types.MessageType.Warning)
        for problem in snapshot.problems:
            self.show_once(f"moor: {problem[0]}: {problem[1]}", types.MessageType.Error)
        for feature in self.features:
            try:
                await feature.on_snapshot(snapshot)
            except Exception as error:
                feature.report("updating after a check failed", error)

    async def first_scan(self) -> None:
        """The first evaluation, reported with `$/progress` when the client supports it."""
        progress = None
        if self.capability("window.work_done_progress"):
            progress = self.spawn(self._begin_progress())
        try:
            await self.recompute("first scan")
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
        self.engine_pool.shutdown(wait=False, cancel_futures=True)


class _Core(Feature):
    """Lifecycle and document sync: where the root comes from, and when to re-check."""

    name = "core"
    server: MoorLanguageServer

    def register(self) -> None:
        self.handle(types.INITIALIZE, self.initialize, None)
        self.handle(types.INITIALIZED, self.initialized, None)
        self.handle(types.SHUTDOWN, self.shutdown, None)
        self.handle(types.TEXT_DOCUMENT_DID_OPEN, self.nothing, None)
        self.handle(types.TEXT_DOCUMENT_DID_CHANGE, self.nothing, None)
        self.handle(types.TEXT_DOCUMENT_DID_CLOSE, self.nothing, None)
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

    async def initialized(self, _params: types.InitializedParams) -> None:
        for feature in self.server.features:
            if feature is not self:
                try:
                    await feature.on_initialized()
                except Exception as error:
                    feature.report("starting failed", error)
        self.server.spawn(self.server.first_scan())

    async def shutdown(self, _params: None) -> None:
        await self.server.shutting_down()

    async def nothing(self, _params: object) -> None:
        """Documents are kept by pygls; moor reads files from disk (saved state)."""

    async def saved(self, params: types.DidSaveTextDocumentParams) -> None:
        self.server.schedule(f"saved {params.text_document.uri}")


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
    server = MoorLanguageServer(watch=not options.no_watch)
    server.start_io()
    return 0
