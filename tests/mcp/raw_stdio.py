"""Raw JSON-RPC over a real `moor mcp` process's stdin and stdout, for what an SDK client
would never send: each line written as given, each answer read as the line it is."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw_stdio", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class RawServer:
    """One `moor mcp` on stdio: `send` writes bytes (in the background, so a line the server
    does not read cannot block the test), `answer` waits for the next line it prints."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, data: bytes) -> None:
        def write() -> None:
            assert self.process.stdin is not None
            with contextlib.suppress(BrokenPipeError, ValueError):
                self.process.stdin.write(data)
                self.process.stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()

    def send_json(self, message: dict[str, Any]) -> None:
        self.send(json.dumps(message).encode() + b"\n")

    def answer(self, timeout: float) -> dict[str, Any] | None:
        """The next line the server prints, parsed; None if none came within `timeout`."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            return None
        assert line is not None, f"moor mcp exited {self.process.poll()}"
        answer = json.loads(line)
        assert isinstance(answer, dict)
        return answer

    def ping(self, request_id: int, timeout: float = 30) -> dict[str, Any] | None:
        self.send_json({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        return self.answer(timeout)


@contextlib.contextmanager
def raw_server(root: Path) -> Iterator[RawServer]:
    """`moor mcp` in `root`, initialised, until the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "moor", "mcp"],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "NO_COLOR": "1"},
    )
    server = RawServer(process)
    try:
        server.send_json(INITIALIZE)
        ready = server.answer(timeout=60)
        assert ready is not None and ready["id"] == 0 and "result" in ready, ready
        server.send_json(INITIALIZED)
        yield server
    finally:
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
