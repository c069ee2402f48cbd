"""A spelling pasted from another tool is one reference with moor's own: one lock key, one
journal anchor, through the real `moor` command (issue 8, part B)."""

from __future__ import annotations

import sqlite3

from tests.conftest import Workspace

RUST = """
struct Client;

impl Client {
    pub fn send(&self, payload: u32) -> u32 {
        payload + 1
    }
}
"""

GO = """
package net

type List struct{}

func (l *List) Push(v int) int {
	return v + 1
}
"""


def journal_anchors(ws: Workspace) -> set[str]:
    with sqlite3.connect(ws.root / ".moor" / "journal.sqlite") as db:
        return {row[0] for row in db.execute("SELECT anchor FROM journal")}


def test_two_spellings_of_one_symbol_share_one_lock_key_and_journal_anchor(
    ws: Workspace,
) -> None:
    ws.write("src/x.rs", RUST)
    ws.write("net/list.go", GO)
    pasted = ws.memory("pasted", ["src/x.rs#Client::send", "net/list.go#(*List).Push"])
    ws.memory("plain", ["src/x.rs#Client.send", "net/list.go#List.Push"])
    written = pasted.read_text(encoding="utf-8")
    ws.moor("bind", check=True)
    lock = ws.read("moor.lock")
    assert lock.count('."src/x.rs#Client.send"]') == 2
    assert lock.count('."net/list.go#List.Push"]') == 2
    assert "Client::send" not in lock and "(*List)" not in lock
    ws.moor("check", check=True)
    assert journal_anchors(ws) == {"src/x.rs#Client.send", "net/list.go#List.Push"}
    # The person's text stays as they wrote it; the report names it as written.
    assert pasted.read_text(encoding="utf-8") == written
    anchors = ws.states()["memories/pasted.md"]["anchors"]
    assert isinstance(anchors, list)
    assert [a["ref"] for a in anchors] == ["src/x.rs#Client::send", "net/list.go#(*List).Push"]
    # Both spellings watch the same code: an edit drifts both memories.
    ws.write("src/x.rs", RUST.replace("payload + 1", "payload + 2"))
    states = ws.states()
    assert states["memories/pasted.md"]["state"] == "drifted"
    assert states["memories/plain.md"]["state"] == "drifted"
    assert journal_anchors(ws) == {"src/x.rs#Client.send", "net/list.go#List.Push"}


def test_a_lock_written_with_a_pasted_key_keeps_its_bound_state(ws: Workspace) -> None:
    ws.write("src/x.rs", RUST)
    ws.memory("old", "src/x.rs#Client::send")
    ws.memory("control", "src/x.rs#Client::send")
    ws.moor("bind", check=True)
    # As an older moor wrote it: the pasted spelling as its own key. The control's key
    # names nothing the memory says, so the lock holds no bound state for it.
    lock = ws.read("moor.lock")
    old = lock.replace(
        '[memory."memories/old.md".anchor."src/x.rs#Client.send"]',
        '[memory."memories/old.md".anchor."src/x.rs#Client::send"]',
    ).replace(
        '[memory."memories/control.md".anchor."src/x.rs#Client.send"]',
        '[memory."memories/control.md".anchor."src/x.rs#Client::sent"]',
    )
    assert old.count("Client::s") == 2
    ws.write("moor.lock", old)
    states = ws.states()
    assert states["memories/old.md"]["state"] == "current"
    assert states["memories/control.md"]["anchors"][0]["state"] == "unbound"
    # A change made after it was bound is drift, not a new baseline.
    ws.write("src/x.rs", RUST.replace("payload + 1", "payload + 2"))
    run = ws.moor("check", "memories/old.md")
    assert run.code == 1
    assert ws.states()["memories/old.md"]["state"] == "drifted"
    assert ws.read("moor.lock") == old  # a check never rewrites the lock to hide it
