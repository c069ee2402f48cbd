"""Retired values stay retired over MCP (issue 26.3), through the SDK's client against the real
server: memory_write of a superseded memory's text is refused with `superseded`, naming the
successor, with memory_restore as the way back; a paraphrase is written and its known_here
lists the retired sibling with why. Each negative has its control."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult

from tests.conftest import Workspace
from tests.mcp.conftest import call, error_text, structured

CODE = "class Client:\n    def send(self, payload):\n        return payload\n"
SEND = "net/client.py#Client.send"
OLD_TEXT = "Send retries three times on a timeout."
NEW_TEXT = "Send retries five times on a timeout, then gives up."


def write(ws: Workspace, text: str, **extra: Any) -> CallToolResult:
    return call(ws.root, "memory_write", {"text": text, "about": [SEND], **extra})


def superseded(ws: Workspace) -> tuple[str, str]:
    ws.write("net/client.py", CODE)
    old = structured(write(ws, OLD_TEXT, title="Send retries"))["path"]
    new = structured(write(ws, NEW_TEXT, title="Send retries now"))["path"]
    retired = call(ws.root, "memory_supersede", {"old": old, "by": new, "why": "five since 2.0"})
    assert structured(retired)["ok"]
    return old, new


def test_writing_a_superseded_text_back_is_refused_naming_the_successor(ws: Workspace) -> None:
    old, new = superseded(ws)

    again = write(ws, OLD_TEXT.upper(), title="Another title")

    text = error_text(again)
    assert "moor refused memory_write" in text
    assert new in text and "five since 2.0" in text and old in text
    assert again.structured_content is not None
    [refusal] = again.structured_content["refused"]
    assert refusal["code"] == "superseded" and refusal["path"] == old
    assert refusal["instead"].startswith(f'memory_restore(path="{old}"')
    assert not (ws.root / "memories/another-title.md").exists()
    # The control: a claim with most of the same words is written.
    assert structured(write(ws, "Send retries three times on a reset.", title="Another title"))[
        "ok"
    ]


def test_a_paraphrase_is_written_and_known_here_lists_the_retired_sibling(ws: Workspace) -> None:
    old, new = superseded(ws)

    written = structured(write(ws, "On a timeout, send makes three retries.", title="Reworded"))

    assert written["ok"]
    known = {k["path"]: k for k in written["known_here"]}
    assert known[new]["state"] == "current" and known[new]["retired_because"] is None  # control
    assert known[old]["state"] == "retired"
    assert (
        new in known[old]["retired_because"] and "five since 2.0" in known[old]["retired_because"]
    )


def test_a_search_hit_carries_its_retired_siblings_with_why(ws: Workspace) -> None:
    old, new = superseded(ws)
    other = structured(
        call(
            ws.root,
            "memory_write",
            {"text": "Client keeps one connection open.", "about": ["net/client.py"]},
        )
    )["path"]

    found = structured(call(ws.root, "memory_search", {"query": "send retries timeout client"}))

    hits = {h["path"]: h for h in found["hits"]}
    assert old not in hits
    [sibling] = hits[new]["retired_here"]
    assert sibling["path"] == old and sibling["state"] == "retired"
    assert "five since 2.0" in sibling["retired_because"]
    # The control: a memory about other code (the file, not Client.send) has none beside it.
    elsewhere = structured(call(ws.root, "memory_search", {"query": "one connection open"}))
    assert {h["path"]: h["retired_here"] for h in elsewhere["hits"]}[other] == []
