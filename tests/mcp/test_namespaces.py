"""Namespaces over MCP, through the SDK's client against the real `moor mcp`: a write with
`agent` is that agent's own; search and about show it to that agent only; an invalid agent
name is a tool error, not everything."""

from __future__ import annotations

from mcp.client.session import ClientSession
from mcp.types import CallToolResult

from tests.conftest import Workspace
from tests.mcp.conftest import call, error_text, run, structured

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


CODE = "class Client:\n    def send(self, payload):\n        return 1\n"
CHANGED = "class Client:\n    def send(self, payload):\n        return 2\n"


def writes(ws: Workspace) -> dict[str, str]:
    """A shared memory, two of alpha's and one of beta's, all about SEND (through MCP)."""
    ws.write("net/client.py", CODE)

    async def scenario(session: ClientSession) -> list[CallToolResult]:
        drafts = [
            ("shared", "Send is retried by the shared layer.", None),
            ("alpha", "Send retries carry a key for alpha.", "alpha"),
            ("beta", "Send retries are counted for beta.", "beta"),
            ("alpha-two", "Send payloads are small for alpha.", "alpha"),
        ]
        return [
            await session.call_tool(
                "memory_write",
                {"text": text, "about": [SEND], **({"agent": agent} if agent else {})},
            )
            for _name, text, agent in drafts
        ]

    results = run(ws.root, scenario)
    names = ("shared", "alpha", "beta", "alpha-two")
    written = {name: structured(result) for name, result in zip(names, results, strict=True)}
    known = {name: {k["path"] for k in w["known_here"]} for name, w in written.items()}
    paths = {name: str(w["path"]) for name, w in written.items()}
    # What a write says is already known: never another agent's memory; its own, yes.
    assert known["beta"] == {paths["shared"]}
    assert known["alpha-two"] == {paths["shared"], paths["alpha"]}
    return paths


def test_drift_report_shows_an_agent_the_shared_drift_and_its_own_only(ws: Workspace) -> None:
    paths = writes(ws)
    ws.write("net/client.py", CHANGED)

    async def scenario(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("drift_report", {"agent": "alpha"}),
            await session.call_tool("drift_report", {"agent": "beta"}),
            await session.call_tool("drift_report", {}),
            await session.call_tool("drift_report", {"agent": "Al Pha"}),
        ]

    alpha, beta, nobody, bad = run(ws.root, scenario)

    def drifted(result: CallToolResult) -> tuple[int, set[str]]:
        value = structured(result)
        return value["memories"], {m["path"] for m in value["needing_a_look"]}

    assert drifted(alpha) == (3, {paths["shared"], paths["alpha"], paths["alpha-two"]})
    assert drifted(beta) == (2, {paths["shared"], paths["beta"]})
    assert drifted(nobody) == (1, {paths["shared"]})
    assert "not an agent name" in error_text(bad)
    # `moor check`, the whole repository's view, still reports every one of them.
    assert set(ws.states()) >= set(paths.values())


def test_changes_since_and_history_leave_out_other_agents_memories(ws: Workspace) -> None:
    paths = writes(ws)
    # A forgotten memory's file is gone: its entries are still its owner's alone.
    assert not call(ws.root, "memory_forget", {"path": paths["alpha-two"], "why": "wrong"}).is_error

    async def scenario(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("changes_since", {"agent": "alpha"}),
            await session.call_tool("changes_since", {"agent": "beta"}),
            await session.call_tool("changes_since", {}),
            await session.call_tool("memory_history", {"path": paths["alpha"], "agent": "alpha"}),
            await session.call_tool("memory_history", {"path": paths["alpha"], "agent": "beta"}),
            await session.call_tool("memory_history", {"path": paths["alpha"]}),
            await session.call_tool("memory_history", {"path": "memories/none.md"}),
        ]

    alpha, beta, nobody, own, other, plain, missing = run(ws.root, scenario)

    def concerned(result: CallToolResult) -> set[str]:
        return {m for change in structured(result)["changes"] for m in change["memories"]}

    everything = set(paths.values())
    assert concerned(alpha) == everything - {paths["beta"]}  # forgotten alpha-two included
    assert concerned(beta) == {paths["shared"], paths["beta"]}
    assert concerned(nobody) == {paths["shared"]}
    assert structured(own)["entries"]  # the control: its owner reads its history
    hidden = error_text(other)
    assert hidden == error_text(plain)
    assert "no such memory" in hidden
    # Refused exactly as a path with no memory at all: the refusal tells nothing of it.
    assert hidden.replace(paths["alpha"], "X") == error_text(missing).replace(
        "memories/none.md", "X"
    )
