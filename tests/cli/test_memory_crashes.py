"""The memory layer's writes are units too: `moor add` and `moor forget` killed between any
two of their writes (SIGKILL at MOOR_FAULT_AT) are completed by the next run — the file,
moor.lock and the journal together."""

from __future__ import annotations

import sqlite3

import pytest
from moor_store.lockfile import parse_lock

from tests.conftest import Workspace

CODE = "def send(body):\n    return body\n"
ADDED = "memories/send-returns-its-body.md"


def _codes(ws: Workspace) -> list[str]:
    with sqlite3.connect(ws.root / ".moor/journal.sqlite") as db:
        rows = db.execute("SELECT code FROM journal WHERE kind = 'revise' ORDER BY seq")
        return [str(code) for (code,) in rows]


@pytest.mark.parametrize("point", ["after-intent", "after-file-1", "after-file-2"])
def test_an_add_killed_at_each_write_is_completed_by_the_next_run(
    ws: Workspace, point: str
) -> None:
    ws.write("src/a.py", CODE)

    run = ws.moor(
        "add",
        "Send returns its body",
        "--about",
        "src/a.py#send",
        env={"MOOR_FAULT_AT": point},
        process=True,
    )

    assert run.code == -9, f"the fault point {point} was never reached: {run.err}"
    assert (ws.root / ".moor/intent.json").exists()  # control: it died mid-way
    check = ws.moor("check")
    assert "completed an interrupted `moor add`" in check.err, check.err
    assert ADDED in parse_lock(ws.read("moor.lock")).memories
    assert ws.state(ADDED) == "current"
    assert _codes(ws) == ["add"]


@pytest.mark.parametrize("point", ["after-intent", "after-file-1", "after-file-2"])
def test_a_forget_killed_at_each_write_is_completed_by_the_next_run(
    ws: Workspace, point: str
) -> None:
    ws.write("src/a.py", CODE)
    ws.memory("wrong", "src/a.py#send", body="Send doubles its body.")
    ws.moor("bind", check=True)

    run = ws.moor(
        "forget", "memories/wrong.md", "--why", "never", env={"MOOR_FAULT_AT": point}, process=True
    )

    assert run.code == -9, f"the fault point {point} was never reached: {run.err}"
    check = ws.moor("check")
    assert "completed an interrupted `moor forget`" in check.err, check.err
    assert not (ws.root / "memories/wrong.md").exists()
    lock = parse_lock(ws.read("moor.lock"))
    assert "memories/wrong.md" not in lock.memories
    assert [t.reason for t in lock.tombstones] == ["never"]
    assert "forget" in _codes(ws)
    refused = ws.moor("add", "send DOUBLES its body", "--title", "Again")
    assert refused.code == 1 and "forgotten on" in refused.err
