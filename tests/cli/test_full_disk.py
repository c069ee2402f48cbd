"""A full disk is not a corrupt journal (issue 20.2, 20.8): on ENOSPC the journal is kept
where it is, every read still answers from it (saying nothing is recorded), every write
refuses with exit 2 naming the free space, and nothing changes; once space is freed the
history is all there. A journal that is itself corrupt is still set aside (the control)."""

from __future__ import annotations

import sqlite3

import pytest

from tests.cli.disks import Disk, snapshot
from tests.conftest import Workspace

REASON = "the reason we must keep"


def _history(ws: Workspace) -> None:
    """A reaffirmed memory (a reason in the journal) and a forgotten one (a tombstone)."""
    ws.write("app.py", "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x - 1\n")
    ws.memory("f", "app.py#f")
    ws.memory("wrong", "app.py#g", body="g never returns a negative number.")
    ws.moor("bind", check=True)
    ws.write("app.py", "def f(x):\n    return x + 2\n\n\ndef g(x):\n    return x - 1\n")
    ws.moor("reaffirm", "memories/f.md", "--why", REASON, check=True)
    ws.moor("forget", "memories/wrong.md", "--why", "it never held", check=True)


def _set_aside(ws: Workspace) -> list[str]:
    return sorted(p.name for p in (ws.root / ".moor").glob("journal.sqlite.broken-*"))


def test_a_full_disk_keeps_the_journal_and_its_history_for_when_space_is_freed(
    disk: Disk,
) -> None:
    ws = disk.workspace()
    _history(ws)
    before = snapshot(ws.root)
    disk.fill()

    for read in (["check"], ["status"], ["log", "memories/f.md"]):
        run = ws.moor(*read)
        assert run.code == 0, (read, run.err)
        assert "is full" in run.err and "bytes free" in run.err, run.err
        assert "SET ASIDE" not in run.err
    assert REASON in ws.moor("log", "memories/f.md").out  # read from the kept journal
    refused = ws.moor("restore", "memories/wrong.md", "--why", "it did hold")
    assert refused.code == 2, refused.err
    assert "is full" in refused.err and "bytes free" in refused.err
    assert "internal error" not in refused.err
    assert _set_aside(ws) == []
    assert snapshot(ws.root) == before

    disk.empty()
    assert REASON in ws.moor("log", "memories/f.md", check=True).out
    ws.moor("restore", "memories/wrong.md", "--why", "it did hold", check=True)
    assert (ws.root / "memories/wrong.md").is_file()
    assert _set_aside(ws) == []

    # The control: a journal that is garbage is set aside, on the same disk.
    journal = ws.root / ".moor/journal.sqlite"
    for side in ("journal.sqlite-wal", "journal.sqlite-shm"):
        (journal.parent / side).unlink(missing_ok=True)
    journal.write_bytes(b"this is not a database at all" * 100)
    run = ws.moor("check")
    assert run.code == 0, run.err
    assert "THE JOURNAL WAS UNUSABLE AND HAS BEEN SET ASIDE" in run.err
    assert len(_set_aside(ws)) == 1


WRITES = {
    "add": ["add", "Retries are safe.", "--about", "app.py#f"],
    "edit": ["edit", "memories/f.md", "--section", "When this changes, ask", "--text", "- Now?"],
    "forget": ["forget", "memories/f.md", "--why", "no longer true"],
    "reaffirm": ["reaffirm", "memories/g.md", "--why", "still holds"],
    "bind": ["bind", "memories/h.md"],
    "supersede": ["supersede", "memories/f.md", "--by", "memories/g.md", "--why", "g says it"],
    # Each over the room left by `room-to-open-only` (40 KiB): 48 KB of UTF-8 in a checkpoint,
    # the big memory's 64 KB in a context block or rule files.
    "checkpoint save": ["checkpoint", "save", "--agent", "a", "€" * 16_000],
    "context --write": ["context", "--write", "CLAUDE.md", "--budget", "100000"],
    "rules --write": ["rules", "--write", "--budget", "100000"],
}


def _command(ws: Workspace, write: str) -> list[str]:
    if write != "edit":
        return WRITES[write]
    shown = ws.moor("edit", "memories/f.md", "--format", "json", check=True).json()
    return [*WRITES[write], "--base-hash", str(shown["content_hash"])]


def _writable_workspace(disk: Disk, name: str) -> Workspace:
    ws = disk.workspace(name)
    ws.write("app.py", "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x - 1\n")
    ws.memory("f", "app.py#f")
    ws.memory("g", "app.py#g")
    ws.moor("bind", check=True)
    ws.memory("big", "app.py#f", body="Retries are safe, as said at length. " * 1800)
    ws.moor("bind", check=True)
    ws.memory("h", "app.py#g", body="h is new, not bound yet.")
    ws.write("app.py", "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x - 2\n")
    ws.moor("log", "memories/f.md", check=True)  # the journal is at rest, its WAL folded in
    return ws


@pytest.mark.parametrize("leave", [0, 40 * 1024], ids=["no-room", "room-to-open-only"])
@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_write_on_a_full_disk_refuses_with_the_space_and_changes_nothing(
    disk: Disk, write: str, leave: int
) -> None:
    ws = _writable_workspace(disk, "ws")
    command = _command(ws, write)
    before = snapshot(ws.root)
    disk.fill(leave=leave)

    run = ws.moor(*command)
    assert run.code == 2, (run.code, run.out, run.err)
    assert "is full" in run.err and "bytes free" in run.err, run.err
    assert "internal error" not in run.err
    assert snapshot(ws.root) == before
    assert _set_aside(ws) == []

    # The control: with room, the same write changes the workspace.
    disk.empty()
    done = ws.moor(*command)
    assert done.code == 0, (done.out, done.err)
    assert snapshot(ws.root) != before


def test_a_check_whose_journal_fills_the_disk_still_answers_and_says_nothing_was_journalled(
    disk: Disk,
) -> None:
    ws = disk.workspace()
    _history(ws)
    journal = ws.root / ".moor/journal.sqlite"
    # Another connection keeps the journal's -wal and -shm in place (as an editor's language
    # server does): moor opens it writable on the full disk, and the append itself fails.
    holder = sqlite3.connect(journal)
    try:
        holder.execute("SELECT count(*) FROM journal").fetchone()
        ws.write("app.py", "def f(x):\n    return x + 3\n\n\ndef g(x):\n    return x - 1\n")
        head = holder.execute("SELECT max(seq) FROM journal").fetchone()[0]
        disk.fill()

        run = ws.moor("check")
        assert run.code == 1 and "drifted" in run.out, (run.out, run.err)
        assert "is full" in run.err and "not journalled" in run.err, run.err
        assert holder.execute("SELECT max(seq) FROM journal").fetchone()[0] == head
        assert _set_aside(ws) == []

        # The control: with room, the same check journals what it saw.
        disk.empty()
        assert ws.moor("check").code == 1
        assert holder.execute("SELECT max(seq) FROM journal").fetchone()[0] > head
    finally:
        holder.close()
