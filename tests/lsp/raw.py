"""A JSON-RPC client that sends exactly the bytes a test writes, to the real server process.

pytest-lsp's client builds typed messages, so it cannot send what a broken client sends
(a negative position, `null` params, a missing field). This one writes raw JSON, reads the
server's messages in a task, answers the server's own requests (`null`, unless the test
says otherwise) and keeps the server's stderr for the test to read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

TIMEOUT = 20.0
OMIT = object()  # a request without a `params` key
UNKNOWN_METHOD = object()  # an answer: the error a client sends for a method it lacks
FAILED = object()  # an answer: an internal error of the client (Emacs: the person quit)

Answer = Callable[[dict[str, Any]], object]


class RawServer:
    def __init__(
        self, root: Path, *args: str, command: list[str] | None = None, log_level: str = "info"
    ) -> None:
        self.root = root
        self.log_level = log_level
        self.command = [*(command or [sys.executable, "-m", "moor_lsp"]), *args]
        self.process: asyncio.subprocess.Process | None = None
        self.notifications: list[dict[str, Any]] = []
        self.answers: dict[str, Answer] = {}  # method -> the result this client returns
        self.asked: list[dict[str, Any]] = []  # requests from the server, in order
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next = 0
        self._reader: asyncio.Task[None] | None = None
        self._stderr: asyncio.Task[bytes] | None = None
        self._log = b""

    async def start(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        """Start the server (`python -m moor_lsp`, `log_level` log), `initialize`,
        `initialized`."""
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            "--log-level",
            self.log_level,
            cwd=self.root,
            env={**os.environ},
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        self._reader = asyncio.create_task(self._read())
        assert self.process.stderr is not None
        self._stderr = asyncio.create_task(self.process.stderr.read())
        uri = self.root.as_uri()
        answer = await self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "ws"}],
                "capabilities": capabilities or {},
            },
        )
        assert "result" in answer, answer
        self.notify("initialized", {})
        return answer

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process is not None and self.process.stdin is not None
        body = json.dumps(message).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: object = OMIT) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not OMIT:
            message["params"] = params
        self._write(message)

    async def request(
        self, method: str, params: object = OMIT, timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        """The server's answer (the whole response message); fails if none comes in time."""
        self._next += 1
        ident = self._next
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not OMIT:
            message["params"] = params
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        self._write(message)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise AssertionError(f"{method} was never answered") from None

    async def error(self, method: str, params: object = OMIT) -> dict[str, Any]:
        """The error a request is answered with (fails if it got a result)."""
        answer = await self.request(method, params)
        assert "error" in answer, answer
        error: dict[str, Any] = answer["error"]
        return error

    async def result(self, method: str, params: object = OMIT) -> Any:
        """The result a request is answered with (fails if it got an error)."""
        answer = await self.request(method, params)
        assert "error" not in answer, answer
        return answer.get("result")

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stream = self.process.stdout
        while True:
            length = None
            while True:
                header = await stream.readline()
                if not header:
                    return
                if not header.strip():
                    break
                name, _, value = header.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length is None:
                continue
            message = json.loads(await stream.readexactly(length))
            if "method" in message and "id" in message:
                self.asked.append(message)
                answer = self.answers.get(message["method"], _null)(message)
                if answer is UNKNOWN_METHOD or answer is FAILED:
                    error = (
                        {"code": -32601, "message": f"Method not found: {message['method']}"}
                        if answer is UNKNOWN_METHOD
                        else {"code": -32603, "message": "Quit"}
                    )
                    self._write({"jsonrpc": "2.0", "id": message["id"], "error": error})
                else:
                    self._write({"jsonrpc": "2.0", "id": message["id"], "result": answer})
            elif "method" in message:
                self.notifications.append(message)
            elif (future := self._pending.pop(message.get("id"), None)) is not None:
                future.set_result(message)

    def shown(self) -> list[str]:
        """Every `window/showMessage` and `window/logMessage` text so far."""
        return [
            m["params"]["message"]
            for m in self.notifications
            if m["method"] in ("window/showMessage", "window/logMessage")
        ]

    async def exit(self, *, shutdown: bool) -> int:
        """`shutdown` (if asked) then `exit`; the process's exit status."""
        if shutdown:
            assert "error" not in await self.request("shutdown")
        self.notify("exit")
        return await self.wait()

    async def wait(self) -> int:
        assert self.process is not None
        try:
            code = await asyncio.wait_for(self.process.wait(), TIMEOUT)
        except TimeoutError:
            raise AssertionError("the server did not exit") from None
        if self._stderr is not None:
            self._log = await self._stderr
        return code

    async def log(self) -> str:
        """The server's stderr (once it has exited)."""
        return self._log.decode("utf-8", "replace")

    async def kill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        for task in (self._reader, self._stderr):
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task


def _null(message: dict[str, Any]) -> object:
    if message["method"] == "workspace/configuration":
        return [None] * len(message.get("params", {}).get("items", []))
    return None
