"""The MCP tests' client: the official SDK's `ClientSession` against moor's real server
(`moor_mcp.server.build`) in a real workspace: over the SDK's in-memory transport by
default, or over stdio to a real `python -m moor mcp` process where the process matters
(the transport tests have their own harnesses: test_stdio_answers, test_http, test_inspector)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client._memory import InMemoryTransport
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from tests.conftest import ALWAYS_PROCESS


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own `$XDG_STATE_HOME` (where `moor mcp --http` keeps its token), outside
    its workspace, so no test reads or leaves a token in the user's."""
    home = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


def run(
    root: Path,
    use: Callable[[ClientSession], Awaitable[Any]],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    process: bool = False,
) -> Any:
    """Start moor's MCP server in `cwd` (the workspace root by default), initialise a
    session, and return what `use` returns. The server runs in this process over the SDK's
    in-memory transport, with the cwd set for the session; with `env` (a setting read
    while a tool runs, for a test that races another process) or `process=True` it is a
    real `moor mcp` process with `env` added to this process's environment."""
    if process or env or ALWAYS_PROCESS:
        return anyio.run(_over_stdio, root, use, cwd, env or {})
    here = os.getcwd()
    os.chdir(cwd or root)
    try:
        return anyio.run(_in_memory, cwd or root, use)
    finally:
        os.chdir(here)


async def _in_memory(start: Path, use: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    from moor_mcp.server import build

    async with (
        InMemoryTransport(build(start)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await use(session)


async def _over_stdio(
    root: Path,
    use: Callable[[ClientSession], Awaitable[Any]],
    cwd: Path | None,
    env: dict[str, str],
) -> Any:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "moor", "mcp"],
        cwd=cwd or root,
        env={**os.environ, **env},
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await use(session)


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


# Every refusal entry has exactly these fields (`results.Refused`), whatever refused.
REFUSAL_FIELDS = {
    "code",
    "message",
    "path",
    "line",
    "ref",
    "suggestions",
    "instead",
    "current_hash",
}

# What a Python traceback, a repr or pydantic's own error text looks like: never sent.
LEAK_MARKS = (
    "Traceback (most recent call last)",
    'File "',
    "Error executing tool",
    "input_value=",
    "errors.pydantic.dev",
    " object at 0x",
    "<class '",
)


def leaks(text: str) -> list[str]:
    """The marks of a traceback or repr found in `text`."""
    return [mark for mark in LEAK_MARKS if mark in text]


def refusals(result: CallToolResult) -> list[dict[str, Any]]:
    """An error result's refusals, read as a program reads them: the last content block is
    `{"refused": [...]}`; every entry has every field, and no text leaks a traceback."""
    texts = [block.text for block in result.content if block.type == "text"]
    assert result.is_error and len(texts) == len(result.content) == 2, result
    assert leaks("\n".join(texts)) == [], texts
    document = json.loads(texts[-1])
    assert set(document) == {"refused"} and document["refused"], document
    for entry in document["refused"]:
        assert set(entry) == REFUSAL_FIELDS, entry
    if result.structured_content is not None:  # a write tool's: the same refusals
        assert result.structured_content["ok"] is False
        assert result.structured_content["refused"] == document["refused"]
    refused: list[dict[str, Any]] = document["refused"]
    return refused


def refusal(result: CallToolResult, code: str) -> dict[str, Any]:
    """The one refusal of an error result, which must have `code`."""
    [entry] = refusals(result)
    assert entry["code"] == code, entry
    return entry
