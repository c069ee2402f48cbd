"""`moor mcp` on stdin/stdout: the SDK's stdio transport, read through a layer that answers
every line.

The SDK reads whole lines of any length and drops one it cannot validate; here each line is
read with a bound (`malformed.MAX_LINE_BYTES`: the rest of a longer one is read and thrown
away in small pieces, never held) and checked (`malformed.answer_for`) before the SDK sees
it. A line it could not take is answered with a JSON-RPC error on the SDK's own write
stream, so answers never interleave, and the next line is read as usual. Like the SDK,
fd 0 is pointed at the null device while serving, so nothing the tools start can read the
wire.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
from collections.abc import Iterator
from typing import IO, cast

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError

from moor_mcp.malformed import MAX_LINE_BYTES, answer_for, too_long

_CHUNK = 64 * 1024


def run_stdio(server: MCPServer) -> None:
    """Serve `server` on this process's stdin and stdout until stdin ends."""
    anyio.run(_serve, server)


async def _serve(server: MCPServer) -> None:
    # The SDK's MCPServer runs stdio only with its own reader; its low-level server takes
    # any streams, so it is driven here the way MCPServer.run_stdio_async drives it.
    lowlevel = server._lowlevel_server
    with _claimed_stdin() as wire:
        lines = AnsweredLines(wire)
        async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (reading, writing):
            lines.answer_into(writing)
            await lowlevel.run(reading, writing, lowlevel.create_initialization_options())


class AnsweredLines:
    """The lines of the wire that the SDK can take, as text; the others are answered."""

    def __init__(self, wire: IO[bytes]) -> None:
        self._wire = wire
        self._writing: anyio.abc.ObjectSendStream[SessionMessage] | None = None
        self._ready = anyio.Event()

    def answer_into(self, writing: object) -> None:
        self._writing = cast("anyio.abc.ObjectSendStream[SessionMessage]", writing)
        self._ready.set()

    def __aiter__(self) -> AnsweredLines:
        return self

    async def __anext__(self) -> str:
        while True:
            raw = await anyio.to_thread.run_sync(self._wire.readline, MAX_LINE_BYTES + 1)
            if not raw:
                raise StopAsyncIteration
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                rest = await anyio.to_thread.run_sync(self._discard_line)
                await self._answer(too_long(raw, len(raw) + rest))
                continue
            text = raw.decode("utf-8", "replace")
            if not text.strip():
                continue
            error = answer_for(text)
            if error is None:
                return text
            await self._answer(error)

    def _discard_line(self) -> int:
        """Read the rest of this line in small pieces; how many bytes it had, newline aside."""
        size = 0
        while True:
            piece = self._wire.readline(_CHUNK)
            size += len(piece)
            if piece.endswith(b"\n"):
                return size - 1
            if not piece:
                return size

    async def _answer(self, error: JSONRPCError) -> None:
        await self._ready.wait()
        assert self._writing is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._writing.send(SessionMessage(error))


@contextlib.contextmanager
def _claimed_stdin() -> Iterator[IO[bytes]]:
    try:
        wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:  # no stdin at all (fd 0 closed): nothing will ever arrive
        yield io.BytesIO()
        return
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        # closefd=False: a reader thread may still block on the wire when serving ends.
        yield os.fdopen(wire, "rb", buffering=_CHUNK, closefd=False)
    finally:
        os.dup2(wire, 0)
