"""The moor language server: a small core, with one module per feature in `features/`.

The core is a router. It holds one `Folder` (`moor_lsp.folder`: evaluator, snapshot,
generation, debounce, settings, journal) per workspace root, keyed by the root. Roots come
from `initialize` (every `workspaceFolders` entry, else `rootUri`/`rootPath`), each
resolved by the engine's root finding (`engine.find_root`: the nearest folder with
moor.toml, moor.lock or .git), and from `workspace/didChangeWorkspaceFolders` at run time.
Several client folders that resolve to one root share its `Folder`; a folder with its own
moor.toml nested inside another is a root of its own. A document, a watched file or a
command's memory goes to the innermost root that contains it (`folder_for`); a document
outside every root gets nothing (no diagnostics, no error).

One engine thread serves every root: checks and actions (reaffirm, follow, bind) never
run at once, so they never race on a `moor.lock` or a journal, and the engine's SQLite
connections stay in the thread that opened them. Roots are checked one after another;
each has its own debounce and generations, so a change in one never drops or delays the
publication of another's result beyond the engine time it takes.

The first scan of each root shows `$/progress` when the client can create a progress
token; it never waits for the client to agree (requests that need a snapshot wait for the
scan itself).

Under the features, `protocol.MoorProtocol` answers every request (malformed ones too) and
retains nothing per notification; the process exits 0 after `shutdown`, else 1.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import sys
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from moor_engine.workspace.distribution import version
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from moor_lsp import engine, inbox
from moor_lsp.clock import server_clock
from moor_lsp.features import Feature
from moor_lsp.features.diagnostics import pulls_diagnostics
from moor_lsp.folder import Folder, contains
from moor_lsp.positions import uri_to_path
from moor_lsp.protocol import MoorProtocol
from moor_lsp.settings import Settings

logger = logging.getLogger("moor_lsp")
T = TypeVar("T")
DEBOUNCE_SECONDS = 0.2


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
            version(),
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            protocol_cls=self.protocol_class,
        )
        # The exit status: 0 only when `exit` comes after `shutdown` (the specification).
        self.shutdown_requested = False
        # One state per workspace root, and the roots each client folder resolved to.
        self.folders: dict[Path, Folder] = {}
        self._client_folders: dict[str, Path] = {}
        # What holds in every folder (`trusted` is taken only from initializationOptions);
        # each folder's own settings are `Folder.settings`.
        self.settings = Settings()
        self.initialization_options: Any = None
        self.debounce = debounce
        self.watch = watch
        self.paranoid = paranoid
        self.clock = server_clock()  # of the command anchors' cadence (a fake one in tests)
        self.engine_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="moor-engine")
        # Requests that only read (hover, go to definition, lenses, completion) each open a
        # session of their own: they run here, never queued behind the engine thread's
        # checks of the edits that came before them.
        self.reader_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="moor-reader")
        self._initialized = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._shown: set[str] = set()
        self.features: list[Feature] = [_Core(self)]
        from moor_lsp.features.registry import FEATURES

        self.features.extend(cls(self) for cls in FEATURES if cls.name not in exclude)
        for feature in self.features:
            feature.register()

    # --- routing -----------------------------------------------------------------------

    def folder_for(self, uri: str) -> Folder | None:
        """The innermost root holding the document `uri`, or None outside every root."""
        path = uri_to_path(uri)
        return None if path is None else self.folder_for_path(path)

    def folder_for_path(self, path: Path) -> Folder | None:
        """The innermost root holding the absolute `path`, or None outside every root."""
        # Lexically first (a deleted file, a link inside a root), then as the file system
        # says — resolved only then: every didChange is routed here.
        for candidate in (Path(os.path.normpath(path)), None):
            candidate = path.resolve() if candidate is None else candidate
            found = [f for f in self.folders.values() if contains(f.root, candidate)]
            if found:
                return max(found, key=lambda f: len(f.root.parts))
        return None

    def locate(self, value: object) -> tuple[Folder, str]:
        """The root and root-relative path of a command's file argument: a `file:` URI or
        an absolute path (the innermost root holding it), or a path relative to a root —
        the only root, or the one root where that file exists. ValueError says why not."""
        if not self.folders:
            raise ValueError("moor has no workspace folder")
        if not isinstance(value, str) or not value:
            raise ValueError("expected a memory path as the first argument")
        if value.startswith("file:"):
            path = uri_to_path(value)
        else:
            path = Path(value) if Path(value).is_absolute() else None
            if path is None:
                folders = list(self.folders.values())
                if len(folders) > 1:
                    folders = [f for f in folders if (f.root / value).is_file()]
                if len(folders) == 1:
                    path = folders[0].root / value
                else:
                    roots = ", ".join(str(f.root) for f in self.folders.values())
                    how = "in none" if not folders else "in more than one"
                    raise ValueError(
                        f"{value} is relative and is {how} of the workspace roots ({roots}): "
                        "give its absolute path or file: URI"
                    )
        path = path.resolve() if path is not None else None
        folder = self.folder_for_path(path) if path is not None else None
        rel = folder.relative_path(path) if folder is not None and path is not None else None
        if folder is None or rel is None:
            roots = ", ".join(str(f.root) for f in self.folders.values())
            raise ValueError(f"{value} is not inside the workspace {roots}")
        return folder, rel

    async def add_folder(self, folder_uri: str) -> Folder | None:
        """Serve the root of a client folder (already served: shared); None if the URI
        names no local folder."""
        path = uri_to_path(folder_uri)
        if path is None:
            logger.warning("not a local folder, not served: %s", folder_uri)
            return None
        root = engine.find_root(path)
        self._client_folders[folder_uri] = root
        if root in self.folders:
            return self.folders[root]
        folder = Folder(self, root)
        self.folders[root] = folder
        logger.info("workspace root: %s", root)
        if self._initialized:
            await self._start(folder)
        return folder

    async def remove_folder(self, folder_uri: str) -> None:
        """Stop serving a client folder's root, unless another client folder resolves to it."""
        root = self._client_folders.pop(folder_uri, None)
        if root is None:
            path = uri_to_path(folder_uri)
            root = engine.find_root(path) if path is not None else None
        if root is None or root in self._client_folders.values():
            return
        folder = self.folders.pop(root, None)
        if folder is None:
            return
        logger.info("no longer served: %s", root)
        await folder.close()
        for feature in self.features:
            try:
                await feature.on_folder_removed(folder)
            except Exception as error:
                feature.report("removing a folder failed", error)

    async def _start(self, folder: Folder) -> None:
        """Tell the features of a new root (settings first), then scan it."""
        for feature in self.features:
            if feature.name != "core":
                try:
                    await feature.on_folder_added(folder)
                except Exception as error:
                    feature.report("starting on a folder failed", error)
        self.spawn(folder.first_scan())

    async def ready_all(self) -> list[Folder]:
        """Every root, once each has its first snapshot."""
        folders = list(self.folders.values())
        await asyncio.gather(*(folder.ready() for folder in folders))
        return folders

    # --- the client --------------------------------------------------------------------

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

    async def in_reader(self, function: Callable[..., T], *args: Any) -> T:
        """Run a call that only reads (in a session of its own) in the reader thread, beside
        the engine thread rather than behind it."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.reader_pool, functools.partial(function, *args))

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

    def show_once(self, message: str, kind: types.MessageType) -> None:
        """`window/showMessage`, at most once per distinct message in a session."""
        if message in self._shown:
            return
        self._shown.add(message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve stdin/stdout, reading the client's messages as `moor_lsp.inbox` does
        (pygls's `start_io`, with that reader in place of pygls's own)."""
        stop = self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        source = stdin or sys.stdin.buffer

        def on_error(error: Exception) -> None:
            self.report_server_error(error, JsonRpcException)

        async def run() -> None:
            reader = inbox.Inbox(source, asyncio.get_running_loop())
            await inbox.serve(
                reader,
                stop,
                self.protocol.structure_message,
                self.protocol.handle_message,
                on_error,
            )

        try:
            asyncio.run(run())
        except BrokenPipeError:
            logger.error("the connection to the client is lost: shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    async def shutting_down(self) -> None:
        for feature in self.features:
            try:
                await feature.on_shutdown()
            except Exception as error:
                feature.report("shutting down failed", error)
        await asyncio.gather(*(folder.close() for folder in self.folders.values()))
        self.engine_pool.shutdown(wait=False, cancel_futures=True)
        self.reader_pool.shutdown(wait=False, cancel_futures=True)


class _Core(Feature):
    """Lifecycle and document sync: where the roots come from, and when to re-check."""

    name = "core"
    server: MoorLanguageServer

    def register(self) -> None:
        self._unoffered: dict[str, Any] = {}  # handlers left out of the capabilities
        self.handle(types.INITIALIZE, self.initialize, None)
        self.handle(types.INITIALIZED, self.initialized, None)
        self.handle(types.SHUTDOWN, self.shutdown, None)
        self.handle(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, self.folders_changed, None)
        self.handle(types.TEXT_DOCUMENT_DID_OPEN, self.opened, None)
        self.handle(types.TEXT_DOCUMENT_DID_CHANGE, self.changed, None)
        self.handle(types.TEXT_DOCUMENT_DID_CLOSE, self.closed, None)
        self.handle(types.TEXT_DOCUMENT_DID_SAVE, self.saved, None)

    async def initialize(self, params: types.InitializeParams) -> None:
        self.server.initialization_options = params.initialization_options
        uris: list[str] = []
        if params.workspace_folders:
            uris = [folder.uri for folder in params.workspace_folders]
        elif params.root_uri:
            uris = [params.root_uri]
        elif params.root_path:
            uris = [Path(params.root_path).resolve().as_uri()]
        for uri in uris:
            await self.server.add_folder(uri)
        if not self.server.folders:
            logger.warning("no workspace folder: nothing to check")
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
        self.server._initialized = True
        for folder in list(self.server.folders.values()):
            await self.server._start(folder)

    async def folders_changed(self, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for removed in params.event.removed:
            await self.server.remove_folder(removed.uri)
        for added in params.event.added:
            await self.server.add_folder(added.uri)

    async def shutdown(self, _params: None) -> None:
        self.server.shutdown_requested = True
        await self.server.shutting_down()

    # Documents are kept by pygls. Memories are read from disk (their saved state); an
    # unsaved code buffer previews the drift it would cause (see `Folder.buffer_changed`).

    async def opened(self, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        folder = self.server.folder_for(uri)
        if folder is None:
            return
        await folder.buffer_changed(uri)
        if folder.snapshot is not None:
            for feature in self.server.features:
                try:
                    await feature.on_open(uri)
                except Exception as error:
                    feature.report("opening a document failed", error)

    async def changed(self, params: types.DidChangeTextDocumentParams) -> None:
        folder = self.server.folder_for(params.text_document.uri)
        if folder is not None:
            await folder.buffer_changed(params.text_document.uri)

    async def closed(self, params: types.DidCloseTextDocumentParams) -> None:
        folder = self.server.folder_for(params.text_document.uri)
        if folder is not None:
            await folder.buffer_changed(params.text_document.uri, closed=True)

    async def saved(self, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        folder = self.server.folder_for(uri)
        if folder is None:
            return
        await folder.buffer_changed(uri)  # saved: the buffer is the file again
        rel = folder.relative(uri)
        folder.schedule(f"saved {uri}", None if rel is None else [rel])


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
