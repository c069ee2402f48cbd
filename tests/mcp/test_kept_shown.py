"""A warm MCP server shows a search hit from the memory its kept verdict read and the
framing it made last time (`KeptSession.memories`, `moor_mcp.shown`), not the file read and
parsed again; yet each hit is the memory as it is now: its text edited in the same mtime
tick, a heading added, its code edited (the state in its frame), and a retired memory on its
code named beside it."""

from __future__ import annotations

from typing import Any

from mcp.client.session import ClientSession

from tests.cli.test_hook_answers import backdate
from tests.conftest import Workspace
from tests.mcp.conftest import run, structured
from tests.mcp.test_search_freshness import same_tick_rewrite

CODE = "def send(payload):\n    return payload\n\n\ndef close():\n    return None\n"


async def hit(session: ClientSession, query: str) -> dict[str, Any]:
    result = await session.call_tool("memory_search", {"query": query, "limit": 5})
    hits = structured(result)["hits"]
    assert [h["path"] for h in hits] == ["memories/alpha.md"], hits
    found: dict[str, Any] = hits[0]
    return found


def test_a_hit_shown_from_what_the_server_keeps_is_the_memory_as_it_is_now(
    ws: Workspace,
) -> None:
    code = ws.write("net/client.py", CODE)
    ws.memory("alpha", "net/client.py#send", body="The zebra protocol frames each payload.")
    ws.memory("beta", "net/client.py#close", body="Closing the quokka channel is idempotent.")
    ws.moor("bind", check=True)
    backdate(ws.root)  # nothing within the racy window: verdicts are kept
    memory = ws.root / "memories/alpha.md"

    async def use(session: ClientSession) -> list[dict[str, Any]]:
        seen = [await hit(session, "zebra"), await hit(session, "zebra")]
        same_tick_rewrite(memory, "frames each", "splits each")
        seen.append(await hit(session, "zebra"))
        text = memory.read_text(encoding="utf-8")
        memory.write_text(text + "\n## Wire format\n\nLength first.\n", encoding="utf-8")
        backdate(ws.root)
        seen += [await hit(session, "zebra"), await hit(session, "zebra")]
        same_tick_rewrite(code, "return payload", "return pay1oad")
        seen.append(await hit(session, "zebra"))
        return seen

    first, again, edited, headed, headed_again, drifted = run(ws.root, use)
    # The control: asked twice with nothing changed, the same hit (the second one shown from
    # what the server kept), so each later difference is a change seen.
    assert first == again
    assert "frames each payload" in first["text"] and 'state="current"' in first["text"]
    assert "splits each payload" in edited["text"]  # same size, same mtime
    assert "frames each payload" not in edited["text"]
    assert edited["content_hash"] != first["content_hash"]
    assert "Wire format" not in edited["sections"]
    assert "Wire format" in headed["sections"] and "Length first." in headed["text"]
    assert headed_again == headed
    assert drifted["state"] == "drifted" and 'state="drifted"' in drifted["text"]
    assert 'state="current"' not in drifted["text"]


def test_a_memory_retired_while_the_server_keeps_its_hit_is_named_beside_the_other(
    ws: Workspace,
) -> None:
    ws.write("net/client.py", CODE)
    ws.memory("alpha", "net/client.py#send", body="The zebra protocol frames each payload.")
    ws.memory("beta", "net/client.py#send", body="Sending zebra payloads never blocks.")
    ws.moor("bind", check=True)
    backdate(ws.root)

    async def use(session: ClientSession) -> list[dict[str, Any]]:
        async def hits() -> dict[str, Any]:
            result = await session.call_tool("memory_search", {"query": "zebra", "limit": 5})
            return {h["path"]: h for h in structured(result)["hits"]}

        seen = [await hits(), await hits()]
        ws.write(
            "memories/gamma.md",
            "---\nabout:\n  - net/client.py#send\nsupersedes: [memories/beta.md]\n---\n"
            "# gamma\n\nSending a zebra payload blocks when the window is full.\n",
        )
        ws.moor("bind", check=True, process=True)  # moor.lock records the retirement
        backdate(ws.root)
        seen.append(await hits())
        return seen

    first, again, retired = run(ws.root, use)
    assert first == again  # the control: nothing changed, the same hits
    assert set(first) == {"memories/alpha.md", "memories/beta.md"}
    assert first["memories/alpha.md"]["retired_here"] == []
    assert "memories/beta.md" not in retired
    assert [k["path"] for k in retired["memories/alpha.md"]["retired_here"]] == ["memories/beta.md"]
    assert "memories/gamma.md" in retired["memories/alpha.md"]["cobound"]
