"""A busy journal is busy, not corrupt (issue 9.2): while another program holds SQLite's
write lock, `moor check` leaves the journal where it is and records nothing this run; only a
journal that is not usable is set aside, and then loudly."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import Workspace

HOLD_SQLITE = textwrap.dedent(
    """
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("BEGIN EXCLUSIVE")
    print("held", flush=True)
    sys.stdin.readline()
    db.execute("ROLLBACK")
    """
)


def _reaffirmed(ws: Workspace) -> None:
    ws.write("app.py", "def f(x):\n    return [x, x * 2, x * 3, x * 4, x * 5]\n")
    ws.memory("f", "app.py#f")
    ws.moor("bind", check=True)
    ws.write("app.py", "def f(x):\n    return [x, x * 2, x * 3, x * 4, x * 6]\n")
    ws.moor("reaffirm", "memories/f.md", "--why", "the reason we must keep", check=True)


def test_a_journal_held_by_another_program_is_left_alone_and_keeps_every_reason(
    ws: Workspace,
) -> None:
    _reaffirmed(ws)
    journal = ws.root / ".moor/journal.sqlite"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_SQLITE, str(journal)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        ws.write("app.py", "def f(x):\n    return [x, x * 2, x * 3, x * 4, x * 7]\n")
        busy = ws.moor("check", env={"MOOR_WRITE_WAIT": "0.5"}, process=True)
        assert busy.code == 1  # it still checks: the change is reported
        assert "drifted" in busy.out
        assert "is busy" in busy.err and "records nothing" in busy.err
        assert "SET ASIDE" not in busy.err
        assert not list(journal.parent.glob("journal.sqlite.broken-*"))
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    assert "the reason we must keep" in ws.moor("log", "memories/f.md").out


def test_a_corrupt_journal_is_set_aside_loudly(ws: Workspace) -> None:
    _reaffirmed(ws)
    journal = ws.root / ".moor/journal.sqlite"
    for suffix in ("-wal", "-shm"):
        (journal.parent / (journal.name + suffix)).unlink(missing_ok=True)
    journal.write_bytes(b"this is not a database at all" * 100)
    run = ws.moor("check")
    assert run.code == 0
    assert "THE JOURNAL WAS UNUSABLE AND HAS BEEN SET ASIDE" in run.err
    assert list(journal.parent.glob("journal.sqlite.broken-*"))
