"""`moor revise` checks the kinds it names against what changed (issue 25, item 4):
moor.lock keeps the declaration's digest per kind (probe, rules, terminal), a revision
naming a kind that did not change, or leaving out one that did, is refused with its code
and nothing written, and a lock from before the per-kind digests stays readable."""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Workspace

ROSTER = "memories/roster.md"
FEWER = "size(obs.lines) < size(state.lines)"
REMOVED = '{"lines": obs.lines, "status": "removed"}'
PARTS = ("declared_probe", "declared_rules", "declared_terminal")


@pytest.fixture(autouse=True)
def no_trust_from_the_host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("MOOR_TRUST", raising=False)


def declare(ws: Workspace, extra_arg: str = "", when: str = FEWER) -> None:
    """moor.toml with `[anchors.roster]`: a probe that leaves a mark each time it runs."""
    ws.write(
        "probes/roster.py",
        "open('ran.txt', 'a').write('ran\\n')\nprint(open('roster.txt').read(), end='')\n",
    )
    command = [sys.executable, "probes/roster.py"] + ([extra_arg] if extra_arg else [])
    ws.write(
        "moor.toml",
        f'memory_roots = ["memories"]\n\n[anchors.roster]\ncommand = {json.dumps(command)}\n'
        f"\n[[anchors.roster.rule]]\nwhen = {json.dumps(when)}\nto = {json.dumps(REMOVED)}\n",
    )


def bound(ws: Workspace) -> Workspace:
    ws.write("roster.txt", "test_a\ntest_b\n")
    declare(ws)
    ws.memory("roster", "anchor:roster")
    ws.moor("bind", "--trust", check=True)
    return ws


def revise(ws: Workspace, *kinds: str) -> tuple[int, dict[str, Any]]:
    run = ws.moor("revise", "anchor:roster", *kinds, "--why", "x", "--trust", "--format", "json")
    return run.code, run.json()


def check(ws: Workspace) -> dict[str, object]:
    run = ws.moor("check", "--trust", "--format", "json")
    assert run.code in (0, 1), run.err
    anchor = run.json()["memories"][0]["anchors"][0]
    assert isinstance(anchor, dict)
    return anchor


def revisions(ws: Workspace) -> list[str]:
    log = ws.moor("log", "anchor:roster", "--format", "json", check=True).json()["entries"]
    return [e["code"] for e in log if e["kind"] == "revise" and e["code"] != "reaffirm"]


def test_moor_lock_keeps_the_declaration_digest_per_kind(ws: Workspace) -> None:
    bound(ws)
    lock = tomllib.loads(ws.read("moor.lock"))
    axes = lock["memory"][ROSTER]["anchor"]["anchor:roster"]["axes"]
    assert all(re.fullmatch(r"[0-9a-f]{32}", axes[part]) for part in PARTS), axes
    assert len({axes[part] for part in PARTS}) == 3


def test_a_revise_naming_rules_when_the_probe_changed_is_refused_and_writes_nothing(
    ws: Workspace,
) -> None:
    bound(ws)
    declare(ws, extra_arg="--verbose")  # the probe changed, the rules did not
    seen = check(ws)
    assert seen["code"] == "declaration_changed"
    assert "(its probe)" in str(seen["detail"]) and "revise anchor:roster --probe --why" in str(
        seen["detail"]
    )
    lock, runs = ws.read("moor.lock"), ws.read("ran.txt")
    code, answer = revise(ws, "--rules")
    assert code == 1
    refused = answer["refused"]
    assert isinstance(refused, list) and refused[0]["code"] == "revision_not_named"
    assert "its probe changed too" in refused[0]["message"]
    assert "(--probe)" in refused[0]["message"]
    assert (ws.read("moor.lock"), ws.read("ran.txt")) == (lock, runs)  # nothing written or run
    assert revisions(ws) == []
    code, answer = revise(ws, "--probe")  # the control: naming what changed is accepted
    assert code == 0, answer
    assert revisions(ws) == ["probe"]
    assert check(ws)["state"] == "current"


def test_a_revise_naming_a_kind_that_did_not_change_is_refused(ws: Workspace) -> None:
    bound(ws)
    declare(ws, when="size(obs.lines) + 1 < size(state.lines)")  # only the rules changed
    assert "(its rules)" in str(check(ws)["detail"])
    lock = ws.read("moor.lock")
    code, answer = revise(ws, "--rules", "--terminal")
    assert code == 1
    refused = answer["refused"]
    assert isinstance(refused, list) and refused[0]["code"] == "revision_unchanged"
    assert "its terminal did not change" in refused[0]["message"]
    code, answer = revise(ws, "--probe")
    assert code == 1 and answer["refused"][0]["code"] == "revision_not_named"
    assert ws.read("moor.lock") == lock and revisions(ws) == []
    code, answer = revise(ws, "--rules")  # the control
    assert code == 0, answer
    assert revisions(ws) == ["rules"]
    assert check(ws)["state"] == "current"


def test_a_lock_without_per_kind_digests_stays_readable_and_revisable(ws: Workspace) -> None:
    bound(ws)
    lock = ws.read("moor.lock")
    for part in PARTS:  # as an older moor wrote it: the whole declaration's digest only
        lock = re.sub(rf', {part} = "[0-9a-f]+"', "", lock)
    assert "declared_" not in lock and "declaration = " in lock
    ws.write("moor.lock", lock)
    assert check(ws)["state"] == "current"  # readable: nothing reads as drift
    declare(ws, when="size(obs.lines) + 1 < size(state.lines)")
    seen = check(ws)
    assert seen["code"] == "declaration_changed"
    assert "--probe|--rules|--terminal" in str(seen["detail"])  # which kind cannot be told
    code, answer = revise(ws, "--rules")
    assert code == 0, answer
    assert any("were not checked" in str(line) for line in answer["done"])
    axes = tomllib.loads(ws.read("moor.lock"))["memory"][ROSTER]["anchor"]["anchor:roster"]["axes"]
    assert all(part in axes for part in PARTS)  # kept from now on
    declare(ws, extra_arg="--verbose")
    code, answer = revise(ws, "--rules")  # and now checked
    assert code == 1 and answer["refused"][0]["code"] == "revision_not_named"
