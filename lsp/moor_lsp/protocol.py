"""The JSON-RPC bookkeeping under the server: every request answered, nothing retained.

pygls (2.1) is kept as it is; this subclass of its protocol changes four things:

* **Nothing is retained per message.** pygls files the task of every notification handler
  (and the future of each builtin generator handler, such as `didChange`'s) under a fresh
  id in `_request_futures` and only ever removes the entries of client requests, so each
  notification keeps its task, its coroutine and its params alive for good (~3 KiB per
  `didChange`). Each entry is forgotten once it is done.
* **A malformed message is answered.** pygls turns params it cannot read into an exception
  inside its reader loop, so the request is never answered and the client waits forever.
  Here the request gets InvalidParams (-32602) saying which field is wrong; a malformed
  notification is logged; an answer from the client that cannot be read (`null` where a
  result object is due) resolves the request waiting for it instead of leaving it pending.
* **Errors are clean.** An error raised on purpose (`JsonRpcException`: a refusal, bad
  params) is logged at INFO without a traceback and sent as it is. Any other exception is an
  internal error: its traceback goes to the log at ERROR, and the client gets a generic
  "moor could not answer …" with no Python text in it.
* **Requests after `shutdown`** get InvalidRequest instead of silence.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
)
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)

logger = logging.getLogger("moor_lsp")

_SNAKE = re.compile(r"_([a-z])")


class Unreadable:
    """A message whose params could not be read; `handle_message` answers or logs it."""

    def __init__(self, data: dict[str, Any], problem: str) -> None:
        self.data = data
        self.problem = problem


class MoorProtocol(LanguageServerProtocol):
    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Callable[[Future[Any]], None],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None

        def forget(_done: object) -> None:
            # Deferred to the loop: a concurrent future runs its callbacks at once, maybe
            # while pygls iterates `_request_futures` (it does so on `shutdown`).
            if loop is None or loop.is_closed():
                self._forget(msg_id, future)
            else:
                loop.call_soon_threadsafe(self._forget, msg_id, future)

        future.add_done_callback(forget)

    def _forget(self, msg_id: Any, future: Any) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    def structure_message(self, data: dict[str, Any]) -> Any:
        # pygls's own version logs a client's mistake at ERROR with a traceback and raises
        # in its reader loop; this one reads the same types and hands on what it could not.
        if "jsonrpc" not in data:
            return data  # a nested object: the enclosing message is structured whole
        kind: Any
        if "id" in data and "error" in data:
            kind = types.ResponseErrorMessage
        elif "id" in data and "method" in data:
            kind = self.get_message_type(data["method"]) or JsonRPCRequestMessage
        elif "id" in data:
            kind = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
        else:
            kind = self.get_message_type(data.get("method", "")) or JsonRPCNotification
        try:
            return self._converter.structure(data, kind)
        except Exception as error:
            return Unreadable(data, _problem(error))

    def handle_message(self, message: Any) -> None:
        if isinstance(message, Unreadable):
            self._unreadable(message)
            return
        if (
            self._shutdown
            and getattr(message, "method", types.EXIT) != types.EXIT
            and getattr(message, "id", None) is not None
        ):
            self._send_response(
                message.id,
                error=JsonRpcInvalidRequest(
                    f"moor is shutting down: {message.method} is not answered"
                ).to_response_error(),
            )
            return
        super().handle_message(message)

    def _unreadable(self, message: Unreadable) -> None:
        data = message.data
        method = data.get("method")
        ident = data.get("id")
        if method is None and ident is not None:
            self._unreadable_answer(ident, data, message.problem)
        elif ident is not None and isinstance(method, str):
            logger.info("answered a malformed %s request: %s", method, message.problem)
            self._send_response(
                ident,
                error=JsonRpcInvalidParams(
                    f"moor could not read the {method} request: {message.problem}"
                ).to_response_error(),
            )
        else:
            logger.warning("ignored a malformed %s notification: %s", method, message.problem)

    def _unreadable_answer(self, ident: Any, data: dict[str, Any], problem: str) -> None:
        future = self._request_futures.pop(ident, None)
        if future is None or future.done():
            logger.warning("ignored an unreadable answer to an unknown request %r", ident)
            return
        if "error" not in data and data.get("result") is None:
            # `null` where the specification wants an object: the client said nothing.
            logger.info("the client answered request %r with null", ident)
            future.set_result(None)
            return
        logger.warning("could not read the client's answer to request %r: %s", ident, problem)
        future.set_exception(JsonRpcInvalidParams(f"the client's answer was unreadable: {problem}"))

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        if future.cancelled():
            super()._send_handler_result(future, msg_id=msg_id)
            return
        error = future.exception()
        if error is None:
            super()._send_handler_result(future, msg_id=msg_id)
            return
        self._request_futures.pop(msg_id, None)
        if isinstance(error, JsonRpcException):
            logger.info("request %r refused: %s", msg_id, error.message)
            self._send_response(msg_id, error=error.to_response_error())
            return
        logger.error("request %r failed", msg_id, exc_info=error)
        self._send_response(
            msg_id,
            error=JsonRpcInternalError(
                "moor could not answer this request: an internal error (the server's log "
                "has the details)"
            ).to_response_error(),
        )


def _problem(error: Exception) -> str:
    """What was wrong with a message, in the protocol's names (`textDocument`, not
    `text_document`), without Python reprs."""
    if isinstance(error, cattrs.BaseValidationError):
        found = [
            _SNAKE.sub(lambda m: m.group(1).upper(), line)
            for line in cattrs.transform_error(error, path="$")
        ]
        return "; ".join(found).replace("@ $.", "at ").replace("@ $", "at the top level")
    return "the message does not have the shape the protocol gives it"
