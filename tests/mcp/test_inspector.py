"""The MCP Inspector's CLI (npm @modelcontextprotocol/inspector, pinned in
tests/mcp/node/package-lock.json), a client nobody here wrote, against the real
`moor mcp`: over stdio, and over HTTP with the bearer token as a header."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Workspace
from tests.mcp.http_server import serving
from tests.mcp.node_tools import INSPECTOR, run_node

CODE = "class Client:\n    def send(self, payload):\n        return payload\n"
SEND = "net/client.py#Client.send"
TEXT = "Retries are safe: send attaches an idempotency key."


class Inspector:
    """`mcp-inspector --cli` against one target (a server command, or a URL and headers)."""

    def __init__(self, ws: Workspace, home: Path, target: list[str], before: list[str]) -> None:
        self.ws, self.home, self.target, self.before = ws, home, target, before

    def ask(self, method: str, *options: str, exit_code: int = 0) -> dict[str, Any]:
        args = ["--cli", *self.before, "--method", method, *options, "--", *self.target]
        done = run_node(INSPECTOR, args, cwd=self.ws.root, home=self.home)
        assert done.returncode == exit_code, (
            f"inspector exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        )
        answer = json.loads(done.stdout)
        assert isinstance(answer, dict)
        return answer

    def call(self, tool: str, **arguments: str) -> dict[str, Any]:
        pairs = [f"{key}={value}" for key, value in arguments.items()]
        answer = self.ask("tools/call", "--tool-name", tool, "--tool-arg", *pairs)
        assert answer["isError"] is False, answer
        content = answer["structuredContent"]
        assert isinstance(content, dict)
        return content

    def refusal(self, tool: str, **arguments: str) -> str:
        pairs = [f"{key}={value}" for key, value in arguments.items()]
        # The Inspector exits 5 when a tool answered an error, and still prints the result.
        answer = self.ask("tools/call", "--tool-name", tool, "--tool-arg", *pairs, exit_code=5)
        assert answer["isError"] is True, answer
        return "\n".join(block["text"] for block in answer["content"] if block["type"] == "text")


def lists_writes_searches_and_asks_about(inspector: Inspector) -> None:
    ws = inspector.ws
    tools = {tool["name"]: tool for tool in inspector.ask("tools/list")["tools"]}
    assert {"memory_search", "memory_write", "memories_about"} <= set(tools)
    assert tools["memory_write"]["annotations"]["readOnlyHint"] is False
    assert tools["memory_search"]["annotations"]["readOnlyHint"] is True
    assert "outputSchema" in tools["memories_about"]

    before = inspector.call("memories_about", target=SEND)
    assert before["memories"] == []  # the control: nothing known there yet
    written = inspector.call("memory_write", text=TEXT, about=json.dumps([SEND]))
    assert written["ok"] is True and written["refused"] == []
    path = written["path"]
    assert SEND in ws.read(path)

    found = inspector.call("memory_search", query="retry idempotency")
    assert [hit["path"] for hit in found["hits"]][:1] == [path]
    assert found["hits"][0]["state"] == "current"
    about = inspector.call("memories_about", target=SEND)
    assert [m["path"] for m in about["memories"]] == [path]
    again = inspector.refusal("memory_write", text=TEXT, about=json.dumps(["net/client.py#Nope"]))
    assert "Nope" in again  # a refusal reaches this client as a tool error with moor's message
    # A reading tool's refusal too (no structured content beside it, which this client would
    # validate against the tool's output schema), with its code for a program to read.
    outside = inspector.refusal("memories_about", target="../elsewhere.py")
    assert '"code": "outside_workspace"' in outside, outside


@pytest.fixture
def code(ws: Workspace) -> Workspace:
    ws.write("net/client.py", CODE)
    return ws


def test_the_inspector_lists_writes_searches_and_asks_about_over_stdio(
    code: Workspace, tmp_path: Path
) -> None:
    server = [sys.executable, "-m", "moor", "mcp"]
    lists_writes_searches_and_asks_about(
        Inspector(code, tmp_path, server, ["--cwd", str(code.root)])
    )


def test_the_inspector_lists_writes_searches_and_asks_about_over_http_with_the_token(
    code: Workspace, tmp_path: Path
) -> None:
    with serving(code.root) as served:
        header = ["--transport", "http", "--header", f"Authorization: Bearer {served.token}"]
        lists_writes_searches_and_asks_about(Inspector(code, tmp_path, [served.url], header))
