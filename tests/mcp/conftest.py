"""The MCP tests' client: the official SDK's `ClientSession` over stdio, against a real
`python -m moor mcp` process started in a real workspace."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult


def run(
    root: Path,
    use: Callable[[ClientSession], Awaitable[Any]],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Any:
    """Start `moor mcp` in `cwd` (the workspace root by default), with `env` added to this
    process's environment, initialise a session, and return what `use` returns."""

    async def main() -> Any:
        server = StdioServerParameters(
            command=sys.executable,
            args=["-m", "moor", "mcp"],
            cwd=cwd or root,
            env={**os.environ, **(env or {})},
        )
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await use(session)

    return anyio.run(main)


def call(root: Path, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    """One tool call in a server of its own."""

    async def use(session: ClientSession) -> CallToolResult:
        return await session.call_tool(tool, arguments)

    result = run(root, use)
    assert isinstance(result, CallToolResult)
    return result


def structured(result: CallToolResult) -> dict[str, Any]:
    """A successful result's structured content (the text of an error otherwise fails)."""
    assert not result.is_error, result.content
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content


def error_text(result: CallToolResult) -> str:
    """An error result's text."""
    assert result.is_error, result.structured_content
    texts = [block.text for block in result.content if block.type == "text"]
    return "\n".join(texts)
