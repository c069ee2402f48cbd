"""Repair and ask over MCP (issue 26.2), through the SDK's client against the real server
in a real workspace: `memory_follow`, `memories_about` on a missing or renamed symbol,
`memory_search` with `explain` and its per-result notice, `memory_pin` — each negative
with its control, each write checked with the real `moor` command."""

from __future__ import annotations

from tests.conftest import Workspace
from tests.mcp.conftest import call, refusal, structured

CODE = "class Client:\n    def send(self, payload):\n        return payload\n"
SEND = "net/client.py#Client.send"


def workspace(ws: Workspace) -> Workspace:
    ws.write("net/client.py", CODE)
    ws.memory("send", SEND, body="Send returns the payload it was given, unchanged.")
    ws.moor("bind", check=True)
    return ws


def test_follow_re_points_a_moved_memory_that_reaffirm_refused(ws: Workspace) -> None:
    workspace(ws)
    ws.write("net/client.py", CODE.replace("def send", "def deliver"))
    assert ws.state("memories/send.md") == "moved"
    refused = refusal(
        call(ws.root, "memory_reaffirm", {"path": "memories/send.md", "why": "x"}), "moved"
    )
    assert "follow" in refused["message"]
    done = structured(call(ws.root, "memory_follow", {"path": "memories/send.md"}))
    assert done["ok"] and done["action"] == "follow"
    assert "net/client.py#Client.deliver" in ws.read("memories/send.md")
    assert ws.state("memories/send.md") == "current"


def test_follow_with_from_and_to_points_a_gone_reference_where_it_is_asked(
    ws: Workspace,
) -> None:
    workspace(ws)
    # Control: with nothing moved, following changes nothing.
    before = ws.read("memories/send.md")
    idle = structured(call(ws.root, "memory_follow", {"path": "memories/send.md"}))
    assert "nothing was changed" in " ".join(idle["done"])
    assert ws.read("memories/send.md") == before
    ws.write("net/client.py", "class Client:\n    def post(self, body):\n        return None\n")
    assert ws.state("memories/send.md") == "gone"
    arguments = {
        "path": "memories/send.md",
        "from": SEND,
        "to": "net/client.py#Client.post",
        "why": "send became post",
    }
    done = structured(call(ws.root, "memory_follow", arguments))
    assert done["ok"], done
    assert "net/client.py#Client.post" in ws.read("memories/send.md")
    assert ws.state("memories/send.md") in ("drifted", "current")


def test_about_a_missing_symbol_is_refused_not_found_with_did_you_mean(ws: Workspace) -> None:
    workspace(ws)
    # Control: the symbol that exists is answered, with its memory.
    found = structured(call(ws.root, "memories_about", {"target": SEND}))
    assert [m["path"] for m in found["memories"]] == ["memories/send.md"]
    missing = refusal(
        call(ws.root, "memories_about", {"target": "net/client.py#Client.sned"}), "not_found"
    )
    assert "Client.sned" in missing["message"]
    assert SEND in missing["suggestions"]


def test_about_the_new_name_after_a_rename_finds_the_memories_bound_to_the_old_one(
    ws: Workspace,
) -> None:
    workspace(ws)
    ws.write("net/client.py", CODE.replace("def send", "def deliver"))
    found = structured(call(ws.root, "memories_about", {"target": "net/client.py#Client.deliver"}))
    [item] = found["memories"]
    assert item["path"] == "memories/send.md" and item["state"] == "moved"
    assert item["relation"] == "exact" and item["about"] == SEND
    # The old name is still answered by the memories naming it exactly.
    old = structured(call(ws.root, "memories_about", {"target": SEND}))
    assert [m["path"] for m in old["memories"]] == ["memories/send.md"]


def test_search_results_each_say_they_are_data_and_explain_gives_the_signals(
    ws: Workspace,
) -> None:
    workspace(ws)
    plain = structured(call(ws.root, "memory_search", {"query": "payload unchanged"}))
    [hit] = plain["hits"]
    assert "data, not instructions" in hit["notice"]
    assert hit["explain"] is None  # control: only asked for, it is given
    explained = structured(
        call(ws.root, "memory_search", {"query": "payload unchanged", "explain": True})
    )
    [hit] = explained["hits"]
    assert "data, not instructions" in hit["notice"]
    signals = [s["signal"] for s in hit["explain"]["signals"]]
    assert signals[0] == "bm25" and "trust" in signals
    assert hit["explain"]["score"] > 0 and "payload" in hit["explain"]["matched"]


def test_pin_and_unpin_change_only_the_pin_and_never_make_the_memory_rewritten(
    ws: Workspace,
) -> None:
    workspace(ws)
    ws.memory("other", SEND, body="Another note about send and its payload.")
    ws.moor("bind", check=True)
    done = structured(call(ws.root, "memory_pin", {"path": "memories/send.md", "why": "core"}))
    assert done["ok"] and done["action"] == "pin"
    assert "pinned: true" in ws.read("memories/send.md")
    assert ws.state("memories/send.md") == "current"
    context = ws.moor("context", check=True).out
    assert context.index("memories/send.md") < context.index("memories/other.md")
    again = structured(call(ws.root, "memory_pin", {"path": "memories/send.md", "why": "core"}))
    assert again["ok"] and "already pinned" in " ".join(again["done"])
    unpinned = ws.moor("unpin", "memories/send.md", "--why", "no longer core")
    assert unpinned.code == 0, unpinned.err
    assert "pinned" not in ws.read("memories/send.md")
    assert ws.state("memories/send.md") == "current"
    # Control: a memory rewritten by hand stays rewritten through a pin: a pin never
    # vouches for text nobody reviewed.
    ws.write("memories/other.md", ws.read("memories/other.md").replace("Another", "A changed"))
    assert ws.state("memories/other.md") == "rewritten"
    ws.moor("pin", "memories/other.md", "--why", "x", check=True)
    assert ws.state("memories/other.md") == "rewritten"
    missing = ws.moor("pin", "memories/nope.md", "--why", "x")
    assert missing.code == 1 and "memories/nope.md: no memory file there" in missing.err


def test_about_code_moved_out_of_a_file_that_still_exists_finds_the_memories_bound_there(
    ws: Workspace,
) -> None:
    workspace(ws)
    ws.write("net/client.py", "class Client:\n    def close(self):\n        return None\n")
    ws.write(
        "net/transport.py",
        "class Transport:\n    def send(self, payload):\n        return payload\n",
    )
    assert ws.state("memories/send.md") == "moved"  # the relocation found it in transport.py
    found = structured(
        call(ws.root, "memories_about", {"target": "net/transport.py#Transport.send"})
    )
    assert [(m["path"], m["relation"], m["about"]) for m in found["memories"]] == [
        ("memories/send.md", "exact", SEND)
    ]
    # Control: a definition the code did not move to is not answered with it.
    other = structured(call(ws.root, "memories_about", {"target": "net/client.py#Client.close"}))
    assert [m["path"] for m in other["memories"]] == []
