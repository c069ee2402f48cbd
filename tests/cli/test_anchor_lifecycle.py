"""Closing and superseding a custom anchor (issue 25, item 4): irreversible, recorded in
moor.lock with its reason, the bound memories retired, the command never run again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import Workspace

LEFT_BEHIND = "ran.txt"


@pytest.fixture
def probed(ws: Workspace, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Workspace:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("MOOR_TRUST", raising=False)
    ws.write("roster.txt", "test_a\n")
    ws.write(
        "probes/roster.py",
        f"open({LEFT_BEHIND!r}, 'a').write('ran')\nprint(open('roster.txt').read(), end='')\n",
    )
    ws.write("probes/quiet.py", "print(open('roster.txt').read(), end='')\n")
    command = json.dumps([sys.executable, "probes/roster.py"])
    quiet = json.dumps([sys.executable, "probes/quiet.py"])
    ws.write(
        "moor.toml",
        f'memory_roots = ["memories"]\n\n[anchors.roster]\ncommand = {command}\n'
        f"\n[anchors.roster2]\ncommand = {quiet}\nstreak = 2\n",
    )
    ws.memory("roster", "anchor:roster")
    ws.memory("other", "anchor:roster2")
    ws.moor("bind", "--trust", check=True)
    (ws.root / LEFT_BEHIND).unlink()
    return ws


def memories(ws: Workspace) -> dict[str, dict[str, object]]:
    run = ws.moor("check", "--trust", "--format", "json")
    assert run.code in (0, 1), run.err
    return {m["path"]: m for m in run.json()["memories"]}


def test_a_closed_anchor_retires_its_memories_and_its_command_never_runs_again(
    probed: Workspace,
) -> None:
    ws = probed
    assert memories(ws)["memories/roster.md"]["state"] == "current"
    assert (ws.root / LEFT_BEHIND).exists()  # the control: a check runs it
    closed = ws.moor("close", "anchor:roster", "--why", "the roster moved to CI")
    assert closed.code == 0, closed.err
    assert "memories/roster.md: retired with it" in closed.out
    assert '[closed."anchor:roster"]' in ws.read("moor.lock")
    assert 'reason = "the roster moved to CI"' in ws.read("moor.lock")
    (ws.root / LEFT_BEHIND).unlink()
    ws.write("roster.txt", "changed\n")
    states = memories(ws)
    roster = states["memories/roster.md"]
    assert roster["state"] == "retired"
    anchor = roster["anchors"][0]  # type: ignore[index]
    assert anchor["code"] == "anchor_closed" and "moved to CI" in anchor["detail"]
    assert not (ws.root / LEFT_BEHIND).exists()  # the closed anchor's command did not run
    assert states["memories/other.md"]["anchors"][0]["code"] == "streak_pending"  # type: ignore[index]


def test_a_closed_anchor_stays_closed(probed: Workspace) -> None:
    ws = probed
    ws.moor("close", "anchor:roster", "--why", "done", check=True)
    again = ws.moor("close", "anchor:roster", "--why", "again", "--format", "json")
    assert again.code == 1
    assert [r["code"] for r in again.json()["refused"]] == ["already_closed"]
    # A later write of moor.lock (a bind of another memory) and a restated declaration keep it.
    ws.write("app.py", "def f():\n    return 1\n")
    ws.memory("code", "app.py#f")
    ws.moor("bind", "memories/code.md", check=True)
    ws.write("moor.toml", ws.read("moor.toml").replace("streak = 2", "streak = 3"))
    assert '[closed."anchor:roster"]' in ws.read("moor.lock")
    assert memories(ws)["memories/roster.md"]["state"] == "retired"
    refused = ws.moor("add", "More", "--about", "anchor:roster", "--trust")
    assert refused.code == 1 and "the anchor is closed" in refused.err


def test_a_superseded_anchor_names_its_successor(probed: Workspace) -> None:
    ws = probed
    refused = ws.moor("supersede", "anchor:roster", "--by", "anchor:roster", "--why", "x")
    assert refused.code == 1 and "cannot supersede itself" in refused.err
    unknown = ws.moor("supersede", "anchor:roster", "--by", "anchor:nowhere", "--why", "x")
    assert unknown.code == 1 and "neither declared" in unknown.err
    assert memories(ws)["memories/roster.md"]["state"] == "current"  # nothing was closed
    done = ws.moor("supersede", "anchor:roster", "--by", "anchor:roster2", "--why", "split")
    assert done.code == 0, done.err
    anchor = memories(ws)["memories/roster.md"]["anchors"][0]  # type: ignore[index]
    assert (anchor["state"], anchor["code"]) == ("retired", "anchor_superseded")
    assert "anchor:roster2" in anchor["detail"]
    log = ws.moor("log", "anchor:roster", "--format", "json", check=True).json()["entries"]
    assert [(e["kind"], e["code"], e["reason"]) for e in log][-1] == ("close", "supersede", "split")
    row = next(
        r
        for r in ws.moor("anchors", "--format", "json", check=True).json()["anchors"]
        if r["anchor"] == "anchor:roster"
    )
    assert row["closed"]["by"] == "anchor:roster2" and row["next_due"] is None
