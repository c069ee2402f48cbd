"""LSP features: one module per feature, each registering its own handlers.

A `Feature` registers handlers through `handle` and `command`, which wrap them so that an
exception inside one feature is logged (its traceback on stderr, a short note in
`window/logMessage`) and answered with a harmless default instead of an error the client
may surface on every keystroke — it never takes the server or another feature down. A
command's internal error answers a generic "moor could not run …" (never Python's own
words); arguments that do not fit the command's parameters answer InvalidParams naming
them. Protocol errors raised on purpose (`JsonRpcException`) still reach the client.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

if TYPE_CHECKING:
    from moor_lsp.engine import Snapshot
    from moor_lsp.folder import Folder
    from moor_lsp.server import MoorLanguageServer
    from moor_lsp.settings import Settings

logger = logging.getLogger("moor_lsp")
P = TypeVar("P")


class Feature:
    """Base class: a named group of handlers with isolated failures."""

    name = "feature"

    def __init__(self, server: MoorLanguageServer) -> None:
        self.server = server

    def register(self) -> None:
        """Register handlers with the server (called once, before `initialize`)."""

    async def on_initialized(self) -> None:
        """The client is ready: its capabilities and the first roots are known (each root
        then gets `on_folder_added`)."""

    async def on_folder_added(self, folder: Folder) -> None:
        """A root is served from now on (at start-up, or a workspace folder added later);
        its first scan follows."""

    async def on_folder_removed(self, folder: Folder) -> None:
        """A root is no longer served (its workspace folder was removed); it is closed."""

    async def on_snapshot(self, folder: Folder, snapshot: Snapshot) -> None:
        """A new evaluation of one root is available."""

    async def on_glance(self, folder: Folder, snapshot: Snapshot) -> None:
        """Before a root's first evaluation: the reports of the memories open in the editor
        (`snapshot.memories` holds only those; `Folder.first_scan`)."""

    async def on_settings(self, folder: Folder, settings: Settings) -> None:
        """The settings in effect in one root changed (when it is added, or later)."""

    async def on_open(self, uri: str) -> None:
        """The client opened the document `uri`."""

    async def on_shutdown(self) -> None:
        """The client asked the server to shut down."""

    def handle(
        self,
        method: str,
        handler: Callable[[P], Awaitable[object]],
        default: object,
        options: Any = None,
    ) -> None:
        """Register `handler` for `method`; an unexpected error answers `default`."""

        # The first parameter is named `ls` so that pygls passes the server there
        # deterministically (it inspects names and annotations to decide).
        async def run(ls: object, params: P) -> object:
            try:
                return await handler(params)
            except JsonRpcException:
                raise
            except Exception as error:
                self.report(f"{method} failed", error)
                return default

        self.server.feature(method, options)(run)

    def command(self, name: str, handler: Callable[..., Awaitable[object]]) -> None:
        """Register a `workspace/executeCommand` command; arguments arrive positionally."""

        signature = inspect.signature(handler)

        async def run(ls: object, *args: object) -> object:
            try:
                signature.bind(*args)
            except TypeError:
                raise JsonRpcInvalidParams(
                    f"{name} takes {_arguments(signature)}; it was given {len(args)}"
                ) from None
            try:
                return await handler(*args)
            except JsonRpcException:
                raise
            except Exception as error:
                self.report(f"command {name} failed", error)
                raise JsonRpcInternalError(
                    f"moor could not run {name}: an internal error (the server's log has the "
                    "details)"
                ) from error

        self.server.command(name)(run)

    def report(self, what: str, error: BaseException) -> None:
        """Log a feature's failure to stderr and to the client's log, never raising."""
        logger.error("[%s] %s: %s", self.name, what, error, exc_info=error)
        try:
            self.server.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Error,
                    message=f"moor [{self.name}] {what}: an internal error (the server's "
                    "log has the traceback)",
                )
            )
        except Exception:  # the connection may be gone; stderr has it already
            logger.debug("could not forward the error to the client", exc_info=True)


def _arguments(signature: inspect.Signature) -> str:
    """A command's arguments as a user reads them: `[memory, reason]`, `[memory] or [memory,
    to, source]`, `any number of arguments`."""
    names: list[str] = []
    required = 0
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            return "any number of arguments"
        names.append(parameter.name)
        if parameter.default is inspect.Parameter.empty:
            required += 1
    if not names:
        return "no arguments"
    shapes = [f"[{', '.join(names[:n])}]" for n in range(max(required, 1), len(names) + 1)]
    return "arguments " + " or ".join(shapes)
