"""Half-written saves: a file seen between the steps of a save (emptied, not yet written)
is `unverified` (`file_changing`), never journalled as drifted or gone; the completed save
is (issue 9, item 10). The writer is a real process, held between its steps by a pipe."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import Workspace

CODE = "def f():\n    return 1\n\n\ndef g(value):\n    return value * 2\n"
SAVED = CODE.replace("value * 2", "value * 3")

# Truncates the file (the first step of a save), says so, waits for "go", writes the rest.
WRITER = """
import sys
path = sys.argv[1]
with open(path, "wb") as file:
    print("truncated", flush=True)
    sys.stdin.readline()
    file.write(sys.argv[2].encode())
print("done", flush=True)
"""


class TwoStepWriter:
    """A real process saving a file in two steps, paused between them until released."""

    def __init__(self, path: Path, text: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), text],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == "truncated\n"  # the file is empty now

    def finish(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline() == "done\n"
        assert self.process.wait(timeout=30) == 0


def journal(ws: Workspace) -> list[tuple[str, str | None]]:
    with sqlite3.connect(ws.root / ".moor/journal.sqlite") as db:
        return list(db.execute("SELECT kind, code FROM journal ORDER BY seq"))


def test_a_file_emptied_by_a_stalled_save_is_unverified_and_only_the_finished_save_drifts(
    ws: Workspace,
) -> None:
    code = ws.write("app/code.py", CODE)
    ws.memory("g", "app/code.py#g")
    ws.moor("bind", check=True)
    assert ws.state("memories/g.md") == "current"
    writer = TwoStepWriter(code, SAVED)
    try:
        assert code.stat().st_size == 0
        anchor = ws.anchor("memories/g.md")
        assert (anchor["state"], anchor["code"]) == ("unverified", "file_changing")
    finally:
        writer.finish()
    # Control: the completed save is a real change, journalled as drift.
    anchor = ws.anchor("memories/g.md")
    assert (anchor["state"], anchor["axes"]) == ("drifted", ["body"])
    entries = journal(ws)
    assert ("attempt", "file_changing") in entries
    assert [e for e in entries if e[0] == "transition"] == [("transition", "drifted")]


def test_a_file_that_stays_empty_past_the_racy_window_is_gone_code(ws: Workspace) -> None:
    code = ws.write("app/code.py", CODE)
    ws.memory("g", "app/code.py#g")
    ws.moor("bind", check=True)
    code.write_bytes(b"")
    os.utime(code, ns=(10**18, 10**18))  # emptied long ago: that is what the file is
    anchor = ws.anchor("memories/g.md")
    assert anchor["state"] == "gone"
    assert ("transition", "gone") in journal(ws)


def test_a_save_written_in_steps_is_observed_once_it_is_complete(
    ws: Workspace, tmp_path: Path
) -> None:
    code = ws.write("app/code.py", CODE)
    ws.memory("g", "app/code.py#g")
    ws.moor("bind", check=True)
    # A check running while the save is between its steps waits for it, within a bound:
    # here the writer finishes while a check (a real process) is waiting on the empty file.
    writer = TwoStepWriter(code, SAVED)
    check = subprocess.Popen(
        [sys.executable, "-m", "moor", "check", "--format", "json"],
        cwd=ws.root,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    writer.finish()
    check.communicate(timeout=120)
    # Whatever that check saw — the empty file or the finished save — gone never reached
    # the journal, and the finished save is drift.
    assert ws.anchor("memories/g.md")["state"] == "drifted"
    assert ("transition", "gone") not in journal(ws)
    assert ("transition", "drifted") in journal(ws)
