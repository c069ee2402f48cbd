"""Multi-file actions recover (issue 9.3): an action killed between any two of its writes is
completed by the next run, ending exactly where the uninterrupted action ends — the memory,
moor.lock and the journal's reason together. Real processes killed with SIGKILL at each
write (MOOR_FAULT_AT names the point; moor_store.intent)."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Workspace

SEND = """
class Client:
    def send(self, payload, retries=3):
        attempt = 0
        while attempt <= retries:
            if self.transport.post(payload, key=payload.idempotency_key):
                return True
            attempt += 1
        return False
"""


def _follow_case(ws: Workspace) -> list[str]:
    ws.write("net/client.py", SEND)
    ws.memory("retry", "net/client.py#Client.send")
    ws.moor("bind", check=True)
    ws.write("net/client.py", SEND.replace("def send(", "def send_payload("))
    return ["follow", "memories/retry.md", "--why", "renamed in the refactor"]


def _reaffirm_case(ws: Workspace) -> list[str]:
    ws.write("net/client.py", SEND)
    ws.memory("retry", "net/client.py#Client.send")
    ws.moor("bind", check=True)
    ws.write("net/client.py", SEND.replace("attempt += 1", "attempt += 2"))
    return ["reaffirm", "memories/retry.md", "--why", "skipping every other retry is fine"]


def _bind_case(ws: Workspace) -> list[str]:
    ws.write("net/client.py", SEND)
    ws.memory("retry", "net/client.py#Client.send")
    return ["bind"]


CASES: dict[str, tuple[Callable[[Workspace], list[str]], list[str]]] = {
    "follow": (_follow_case, ["after-intent", "after-file-1", "after-file-2", "after-journal"]),
    "reaffirm": (_reaffirm_case, ["after-intent", "after-file-1", "after-journal"]),
    "bind": (_bind_case, ["after-intent", "after-file-1", "after-journal"]),
}


def _copy(ws: Workspace, name: str) -> Workspace:
    other = Workspace(ws.root.parent / name)
    shutil.copytree(ws.root, other.root, symlinks=True)
    return other


def _journal_reasons(ws: Workspace) -> list[tuple[str, str | None, str | None]]:
    with sqlite3.connect(ws.root / ".moor/journal.sqlite") as db:
        rows = db.execute(
            "SELECT kind, code, reason FROM journal WHERE kind = 'revise' OR code = 'bind' "
            "ORDER BY seq"
        ).fetchall()
    return [(str(k), c if c else None, r if r else None) for k, c, r in rows]


@pytest.mark.parametrize(
    ("action", "point"),
    [(action, point) for action, (_case, points) in CASES.items() for point in points],
)
def test_an_action_killed_at_each_write_is_completed_by_the_next_run(
    ws: Workspace, action: str, point: str
) -> None:
    command = CASES[action][0](ws)
    killed = _copy(ws, "killed")
    # The uninterrupted action: where the killed one must end up.
    ws.moor(*command, check=True)
    run = killed.moor(*command, env={"MOOR_FAULT_AT": point}, process=True)
    assert run.code == -9, f"the fault point {point} was never reached: {run.err}"
    assert (killed.root / ".moor/intent.json").exists()  # control: it died mid-way
    if point == "after-file-1" and action == "follow":
        # control: the memory is rewritten and moor.lock not yet: a half-done follow
        assert killed.read("memories/retry.md") == ws.read("memories/retry.md")
        assert killed.read("moor.lock") != ws.read("moor.lock")
    status = killed.moor("check")
    assert "completed an interrupted" in status.err, status.err
    assert not (killed.root / ".moor/intent.json").exists()
    assert killed.read("moor.lock") == ws.read("moor.lock")
    assert killed.read("memories/retry.md") == ws.read("memories/retry.md")
    assert _journal_reasons(killed) == _journal_reasons(ws)
    assert killed.states() == ws.states()
    again = killed.moor("check")
    assert "completed an interrupted" not in again.err  # done once, not every run


def test_a_file_changed_by_hand_after_a_crash_is_left_as_it_is(ws: Workspace) -> None:
    command = _follow_case(ws)
    run = ws.moor(*command, env={"MOOR_FAULT_AT": "after-intent"}, process=True)
    assert run.code == -9
    ws.write("memories/retry.md", ws.read("memories/retry.md") + "\nEdited by hand.\n")
    edited = ws.read("memories/retry.md")
    status = ws.moor("check")
    assert "memories/retry.md changed since; left as it is" in status.err
    assert ws.read("memories/retry.md") == edited


def test_stray_temporary_files_are_removed_under_the_write_lock(ws: Workspace) -> None:
    _reaffirm_case(ws)
    stray = [
        ws.root / ".moor.lock.4242.deadbeef.tmp",
        ws.root / ".moor/.intent.json.1.0badcafe.tmp",
    ]
    for path in stray:
        path.write_text("half", encoding="utf-8")
    keep = ws.write("notes/.draft.md.1.0badcafe.tmp", "a user's file")  # not one of moor's
    ws.moor("reaffirm", "memories/retry.md", "--why", "fine", check=True)
    assert not any(path.exists() for path in stray)
    assert keep.exists()
    assert Path(keep).read_text(encoding="utf-8") == "a user's file"
