"""Namespaces over MCP, through the SDK's client against the real `moor mcp`: a write with
`agent` is that agent's own; search and about show it to that agent only; an invalid agent
name is a tool error, not everything."""

from __future__ import annotations

from mcp.client.session import ClientSession
from mcp.types import CallToolResult

from tests.conftest import Workspace
from tests.mcp.conftest import error_text, run, structured

SEND = "net/client.py#Client.send"


def test_an_agents_write_is_found_by_that_agent_and_no_other(ws: Workspace) -> None:
    ws.write("net/client.py", "class Client:\n    def send(self, payload):\n        return 1\n")

    async def scenario(session: ClientSession) -> list[CallToolResult]:
        results = [
            await session.call_tool(
                "memory_write",
                {
                    "text": "Send retries carry an idempotency key.",
                    "about": [SEND],
                    "agent": "alpha",
                },
            )
        ]
        for agent in ("alpha", "beta", None):
            extra = {} if agent is None else {"agent": agent}
            results.append(
                await session.call_tool("memory_search", {"query": "idempotency key", **extra})
            )
            results.append(await session.call_tool("memories_about", {"target": SEND, **extra}))
            results.append(
                await session.call_tool(
                    "memory_search_many", {"queries": ["idempotency key"], **extra}
                )
            )
        return results

    written, *reads = run(ws.root, scenario)
    path = structured(written)["path"]
    assert "agent: alpha" in ws.read(path) and "author: mcp:" in ws.read(path)

    def paths(result: CallToolResult) -> set[str]:
        value = structured(result)
        if "hits" in value:
            return {hit["path"] for hit in value["hits"]}
        if "results" in value:
            return {hit["path"] for one in value["results"] for hit in one["hits"]}
        return {memory["path"] for memory in value["memories"]}

    alpha, beta, nobody = reads[0:3], reads[3:6], reads[6:9]
    assert all(paths(result) == {path} for result in alpha)  # its own agent sees it
    assert all(paths(result) == set() for result in beta + nobody)


def test_an_invalid_agent_name_is_a_tool_error(ws: Workspace) -> None:
    ws.write("net/client.py", "class Client:\n    def send(self, payload):\n        return 1\n")

    async def scenario(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("memory_search", {"query": "send", "agent": "../x"}),
            await session.call_tool("memories_about", {"target": SEND, "agent": "A B"}),
            await session.call_tool(
                "memory_write", {"text": "A note.", "about": [SEND], "agent": "Bad Name"}
            ),
            await session.call_tool("memory_search", {"query": "send", "agent": "ok-name"}),
        ]

    search, about, write, control = run(ws.root, scenario)
    for result in (search, about, write):
        assert "not an agent name" in error_text(result)
    assert not list((ws.root / "memories").glob("*.md"))
    assert not control.is_error  # control: a valid name is served
