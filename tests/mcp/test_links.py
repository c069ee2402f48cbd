"""Links and cobound memories in the MCP tools' results (one hop), through the SDK's
client: `memories_about` and `memory_search` name each memory's links both ways and the
memories bound to the same anchors; an agent's own memory is never named to another."""

from __future__ import annotations

from typing import Any

from mcp.client.session import ClientSession

from tests.conftest import Workspace
from tests.mcp.conftest import call, run, structured

CODE = "def send(payload):\n    return payload\n\n\ndef close():\n    return None\n"


def setup(ws: Workspace) -> None:
    ws.write("src/net.py", CODE)
    ws.memory("retries-are-safe", "src/net.py#send", body="Retries carry an idempotency key.")
    ws.memory("send-is-logged", "src/net.py#send", body="Every send is logged.")
    ws.write(
        "memories/elaboration.md",
        "---\nabout:\n  - src/net.py#close\nlinks:\n  elaborates:\n"
        "    - memories/retries-are-safe.md\n---\n# Elaboration\n\nClosing drains retries.\n",
    )
    ws.write(
        "memories/alpha-own.md",
        "---\nabout:\n  - src/net.py#send\nagent: alpha\n---\n# Alpha's\n\nAlpha's note.\n",
    )
    ws.moor("bind", "memories", check=True)


def by_path(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["path"]: item for item in items}


def test_memories_about_names_links_and_cobound_memories(ws: Workspace) -> None:
    setup(ws)
    about = by_path(
        structured(call(ws.root, "memories_about", {"target": "src/net.py#send"}))["memories"]
    )
    safe = about["memories/retries-are-safe.md"]
    assert safe["links"] == [
        {
            "relation": "elaborates",
            "path": "memories/elaboration.md",
            "direction": "from",
            "exists": True,
        }
    ]
    # The agent's own memory, bound to the same anchor, is not named to a shared reader …
    assert safe["cobound"] == ["memories/send-is-logged.md"]
    # … and is to its agent (the control: the setup does make it cobound).
    alpha = by_path(
        structured(
            call(ws.root, "memories_about", {"target": "src/net.py#send", "agent": "alpha"})
        )["memories"]
    )
    assert alpha["memories/retries-are-safe.md"]["cobound"] == [
        "memories/alpha-own.md",
        "memories/send-is-logged.md",
    ]


def test_memory_search_hits_carry_their_links_and_cobound_memories(ws: Workspace) -> None:
    setup(ws)

    async def scenario(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("memory_search", {"query": "closing drains retries"}),
            await session.call_tool("memory_search", {"query": "every send is logged"}),
        ]

    closing, logged = run(ws.root, scenario)
    hits = by_path(structured(closing)["hits"])
    assert hits["memories/elaboration.md"]["links"] == [
        {
            "relation": "elaborates",
            "path": "memories/retries-are-safe.md",
            "direction": "to",
            "exists": True,
        }
    ]
    assert hits["memories/elaboration.md"]["cobound"] == []
    # Control: a memory with no links has none, and its anchor-mate is cobound.
    logged_hit = by_path(structured(logged)["hits"])["memories/send-is-logged.md"]
    assert logged_hit["links"] == []
    assert logged_hit["cobound"] == ["memories/retries-are-safe.md"]


def test_a_retired_memory_is_never_named_cobound_in_search_hits(ws: Workspace) -> None:
    setup(ws)
    ws.memory("send-was-silent", "src/net.py#send", body="Sends are never logged.")
    ws.memory("send-was-quiet", "src/net.py#send", body="Sends are quiet.")
    ws.write(
        "memories/close-replaces.md",
        "---\nabout:\n  - src/net.py#close\nsupersedes:\n  - memories/send-was-quiet.md\n"
        "---\n# Close replaces\n\nClosing is quiet now.\n",
    )
    ws.moor("bind", "memories", check=True)

    async def search(session: ClientSession) -> list[Any]:
        return [await session.call_tool("memory_search", {"query": "every send is logged"})]

    def cobound() -> list[str]:
        (result,) = run(ws.root, search)
        hit = by_path(structured(result)["hits"])["memories/send-is-logged.md"]
        return list(hit["cobound"])

    # Control: bound to the same anchor and not retired by `moor supersede`, it is named.
    assert cobound() == ["memories/retries-are-safe.md", "memories/send-was-silent.md"]
    ws.moor(
        "supersede",
        "memories/send-was-silent.md",
        "--by",
        "memories/send-is-logged.md",
        "--why",
        "sends are logged now",
        check=True,
    )
    # Superseded by a command, or by another memory's `supersedes:`: retired, not named.
    assert cobound() == ["memories/retries-are-safe.md"]
