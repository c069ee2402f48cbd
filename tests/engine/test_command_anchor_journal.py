"""A command anchor's streak counts runs of its command, not journal writes: an editor's
live check commits after every refresh, and a refresh that did not run the command again
must not count as another observation (issue 25, item 4)."""

from __future__ import annotations

import json
import sys

from moor_engine.grounding.live import LiveCheck
from moor_engine.session import Session
from moor_store.journal import Journal

from tests.conftest import Workspace


def observed(ws: Workspace) -> int:
    with Journal(ws.root / ".moor/journal.sqlite") as journal:
        return sum(e.code == "observed" for e in journal.entries(anchor="anchor:roster"))


def test_a_refresh_that_runs_no_command_adds_no_observation_to_the_streak(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "a\n")
    ws.write("app.py", "def f():\n    return 1\n")
    command = json.dumps([sys.executable, "-c", "print(open('roster.txt').read(), end='')"])
    ws.write(
        "moor.toml",
        f'memory_roots = ["memories"]\n\n[anchors.roster]\ncommand = {command}\nstreak = 2\n',
    )
    ws.memory("roster", "anchor:roster")
    ws.memory("code", "app.py#f")
    ws.moor("bind", "--trust", check=True)
    ws.write("roster.txt", "b\n")  # a change, seen once so far
    live = LiveCheck(ws.root)
    live.trust = True
    try:
        first = live.refresh(None)
        live.commit()
        roster = next(m for m in first.report.memories if m.path == "memories/roster.md")
        assert roster.anchors[0].code == "streak_pending"
        assert observed(ws) == 1  # the control: a run of the command is journalled
        for value in ("2", "3", "4"):  # edits of code: refreshes that run no command
            ws.write("app.py", f"def f():\n    return {value}\n")
            live.refresh({"app.py"})
            live.commit()
            live.refresh(["memories/roster.md"])  # the memory looked at again, not its command
            live.commit()
        assert observed(ws) == 1
    finally:
        live.close()
    with Session.open(ws.root, trust=True) as session:
        report = session.check(session.select([]), record=False)
    roster = next(m for m in report.memories if m.path == "memories/roster.md")
    # The control: one more run of the command is the second observation in a row.
    assert roster.anchors[0].code == "drifted"
