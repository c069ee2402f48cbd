"""Transition rules of a command anchor (issue 25, items 3-4): only a firing rule moves the
anchor, its `to` is the new state kept in moor.lock, each evaluation error is an attempt
with its code (never a transition), and a terminal state closes the anchor for good."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import Workspace

ROSTER = "memories/roster.md"
FEWER = "size(obs.lines) < size(state.lines)"
REMOVED = '{"lines": obs.lines, "status": "removed"}'
ONES = "[" + ", ".join(["1"] * 400) + "]"  # twice nested: past CEL's iteration budget


@pytest.fixture(autouse=True)
def no_trust_from_the_host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("MOOR_TRUST", raising=False)


def declare(ws: Workspace, name: str, rules: list[tuple[str, str]], extra: str = "") -> None:
    """`[anchors.NAME]` printing roster.txt, with `rules` (when, to) in order."""
    ws.write(
        "probes/roster.py",
        "open('ran.txt', 'a').write('ran')\nprint(open('roster.txt').read(), end='')\n",
    )
    command = json.dumps([sys.executable, "probes/roster.py"])
    text = f"\n[anchors.{name}]\ncommand = {command}\n{extra}\n"
    for when, to in rules:
        text += f"\n[[anchors.{name}.rule]]\nwhen = {json.dumps(when)}\nto = {json.dumps(to)}\n"
    with (ws.root / "moor.toml").open("a", encoding="utf-8") as config:
        config.write(text)


def anchors(ws: Workspace) -> dict[str, dict[str, object]]:
    run = ws.moor("check", "--trust", "--format", "json")
    assert run.code in (0, 1), run.err
    found: dict[str, dict[str, object]] = {}
    for memory in run.json()["memories"]:
        found[memory["path"]] = memory["anchors"][0]
    return found


def locked_state(ws: Workspace, memory: str, anchor: str) -> object:
    lock = tomllib.loads(ws.read("moor.lock"))
    return json.loads(lock["memory"][memory]["anchor"][anchor]["axes"]["state"])


def test_a_firing_rule_moves_the_state_and_a_change_no_rule_fires_on_keeps_it_current(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "test_a\ntest_b\n")
    declare(ws, "roster", [(FEWER, REMOVED)])
    ws.memory("roster", "anchor:roster")
    ws.moor("bind", "--trust", check=True)
    assert locked_state(ws, ROSTER, "anchor:roster") == {"lines": ["test_a", "test_b"]}
    assert anchors(ws)[ROSTER]["state"] == "current"
    ws.write("roster.txt", "test_a\ntest_b\ntest_c\n")  # a change no rule fires on
    grown = anchors(ws)[ROSTER]
    assert (grown["state"], grown["code"]) == ("current", "no_rule_fired")
    log = ws.moor("log", "anchor:roster", "--format", "json", check=True).json()["entries"]
    assert [e["kind"] for e in log].count("transition") == 0
    assert log[-1]["kind"] == "still"  # the changed observation is journalled
    ws.write("roster.txt", "test_a\n")  # the rule fires: a transition
    fewer = anchors(ws)[ROSTER]
    assert (fewer["state"], fewer["code"]) == ("drifted", "rule_fired")
    probe = fewer["probe"]
    assert isinstance(probe, dict)
    assert probe["rule"] == 1 and probe["state"] == {"lines": ["test_a"], "status": "removed"}
    log = ws.moor("log", "anchor:roster", "--format", "json", check=True).json()["entries"]
    assert [e["kind"] for e in log].count("transition") == 1
    ws.moor("reaffirm", ROSTER, "--why", "test_b went with the old client", "--trust", check=True)
    assert locked_state(ws, ROSTER, "anchor:roster") == {
        "lines": ["test_a"],
        "status": "removed",
    }
    assert anchors(ws)[ROSTER]["state"] == "current"  # in its new state, none fires


@pytest.mark.parametrize(
    ("when", "to", "code"),
    [
        ("size(obs.lines) / (size(obs.lines) - size(obs.lines)) > 0", REMOVED, "divided_by_zero"),
        ("obs.count > 1", REMOVED, "no_such_field"),
        ("obs.lines[0] < 1", REMOVED, "not_comparable"),
        ("size(obs.lines", REMOVED, "unparseable"),
        ("size(obs.lines)", REMOVED, "guard_not_boolean"),
        (FEWER, "[obs.lines]", "new_state_not_an_object"),
        (f"{ONES}.all(a, {ONES}.all(b, a == b))", REMOVED, "too_costly"),
    ],
    ids=[
        "divided-by-zero",
        "no-such-field",
        "not-comparable",
        "unparseable",
        "not-boolean",
        "list",
        "too-costly",
    ],
)
def test_a_rule_that_cannot_be_evaluated_is_unverified_with_its_code_never_a_transition(
    ws: Workspace, when: str, to: str, code: str
) -> None:
    ws.write("roster.txt", "test_a\ntest_b\n")
    declare(ws, "broken", [(when, to)])
    declare(ws, "control", [(FEWER, REMOVED)])
    ws.memory("broken", "anchor:broken")
    ws.memory("control", "anchor:control")
    ws.moor("bind", "--trust", check=True)
    ws.write("roster.txt", "test_a\n")
    seen = anchors(ws)
    assert seen["memories/control.md"]["state"] == "drifted"  # the control: a change moves it
    broken = seen["memories/broken.md"]
    assert (broken["state"], broken["code"]) == ("unverified", code), broken
    assert "rule 1" in str(broken["detail"])
    log = ws.moor("log", "anchor:broken", "--format", "json", check=True).json()["entries"]
    assert "transition" not in [e["kind"] for e in log]
    assert [e["code"] for e in log if e["kind"] == "attempt"] == [code]


def test_a_terminal_state_closes_the_anchor_and_a_restate_does_not_reopen_it(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "test_a\ntest_b\n")
    declare(ws, "roster", [(FEWER, REMOVED)], extra='terminal = ["removed"]')
    ws.memory("roster", "anchor:roster")
    ws.moor("bind", "--trust", check=True)
    assert anchors(ws)[ROSTER]["state"] == "current"  # the control: open, and it runs
    ws.write("roster.txt", "test_a\n")
    reached = anchors(ws)[ROSTER]
    assert (reached["state"], reached["code"]) == ("drifted", "terminal_state")
    ws.write("roster.txt", "test_a\ntest_b\n")  # restated: out of the terminal state
    (ws.root / "ran.txt").unlink()
    closed = anchors(ws)[ROSTER]
    assert (closed["state"], closed["code"]) == ("retired", "anchor_closed")
    assert not (ws.root / "ran.txt").exists()  # a closed anchor's command runs no more
    log = ws.moor("log", "anchor:roster", "--format", "json", check=True).json()["entries"]
    assert [(e["kind"], e["code"]) for e in log if e["kind"] == "close"] == [("close", "terminal")]


def test_a_state_over_the_cap_is_refused_at_bind_naming_the_cap(ws: Workspace) -> None:
    ws.write("roster.txt", "".join(f"test_{i:06d}_{'x' * 40}\n" for i in range(2000)))
    declare(ws, "ruled", [(FEWER, REMOVED)])
    declare(ws, "plain", [])  # the control: the same output binds without rules
    ws.memory("ruled", "anchor:ruled")
    ws.memory("plain", "anchor:plain")
    run = ws.moor("bind", "--trust", "--format", "json")
    assert run.code == 1
    refused = run.json()["refused"]
    assert [r["path"] for r in refused] == ["memories/ruled.md"]
    assert "64 KiB" in refused[0]["message"] and "state_too_large" in refused[0]["message"]
    assert "memories/plain.md" in tomllib.loads(ws.read("moor.lock"))["memory"]


@pytest.mark.parametrize("with_rule", [False, True])
def test_the_cel_library_is_imported_only_when_a_rule_exists(
    ws: Workspace, with_rule: bool
) -> None:
    ws.write("roster.txt", "test_a\n")
    declare(ws, "roster", [(FEWER, REMOVED)] if with_rule else [])
    ws.memory("roster", "anchor:roster")
    ws.moor("bind", "--trust", check=True)
    script = (
        "import sys\nfrom moor.main import main\n"
        "main(['check', '--trust', '--format', 'json'])\n"
        "print('cel_expr_python' in sys.modules, file=sys.stderr)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=ws.root, capture_output=True, text=True, timeout=120
    )
    assert run.stderr.strip().splitlines()[-1] == str(with_rule), run.stderr


def test_rules_are_checked_against_the_first_observation_with_a_warning_never_a_refusal(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "test_a\n")
    declare(ws, "always", [("size(obs.lines) > 0", REMOVED)])
    declare(ws, "broken", [("obs.count > 1", REMOVED)])
    declare(ws, "sound", [(FEWER, REMOVED)])  # the control: no warning for a sound rule
    for name in ("always", "broken", "sound"):
        ws.memory(name, f"anchor:{name}")
    run = ws.moor("bind", "--trust")
    assert run.code == 0, run.err  # warned, never refused
    warnings = [line for line in run.out.splitlines() if "warning:" in line]
    assert len(warnings) == 2, run.out
    assert any(
        "memories/always.md" in w and "fires on its first observation" in w for w in warnings
    )
    assert any("memories/broken.md" in w and "no_such_field" in w for w in warnings)
    lock = tomllib.loads(ws.read("moor.lock"))["memory"]
    assert {"memories/always.md", "memories/broken.md", "memories/sound.md"} <= set(lock)


def revisions(ws: Workspace, name: str) -> list[tuple[str, str]]:
    log = ws.moor("log", f"anchor:{name}", "--format", "json", check=True).json()["entries"]
    return [
        (e["code"], e["reason"]) for e in log if e["kind"] == "revise" and e["code"] != "reaffirm"
    ]


def test_revised_rules_are_accepted_with_their_reason_and_an_unrevised_edit_stays_reported(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "test_a\ntest_b\n")
    declare(ws, "roster", [(FEWER, REMOVED)])
    ws.memory("roster", "anchor:roster")
    ws.moor("bind", "--trust", check=True)
    toml = ws.read("moor.toml")
    ws.write("moor.toml", toml.replace("size(obs.lines) < size", "size(obs.lines) + 1 < size"))
    edited = anchors(ws)[ROSTER]  # edited without revise: reported, never re-baselined
    assert (edited["state"], edited["code"]) == ("drifted", "declaration_changed")
    done = ws.moor("revise", "anchor:roster", "--rules", "--why", "one test may go", "--trust")
    assert done.code == 0, done.err
    assert anchors(ws)[ROSTER]["state"] == "current"
    assert revisions(ws, "roster") == [("rules", "one test may go")]
    assert locked_state(ws, ROSTER, "anchor:roster") == {"lines": ["test_a", "test_b"]}
    ws.write("roster.txt", "test_a\n")  # the revised rule: one fewer does not fire
    assert anchors(ws)[ROSTER]["code"] == "no_rule_fired"
    ws.write("roster.txt", "")  # two fewer does: the bound facts were kept, not re-baselined
    assert anchors(ws)[ROSTER]["code"] == "rule_fired"


def test_revise_sets_the_state_and_refuses_what_is_not_an_object_or_has_no_reason(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "test_a\n")
    declare(ws, "roster", [('has(state.status) && state.status == "frozen"', '{"x": 1}')])
    ws.memory("roster", "anchor:roster")
    ws.moor("bind", "--trust", check=True)
    assert anchors(ws)[ROSTER]["state"] == "current"
    bad = ws.moor("revise", "anchor:roster", "--state", "[1]", "--why", "x", "--trust")
    assert bad.code == 1 and "must be a JSON object" in bad.err
    none = ws.moor("revise", "anchor:roster", "--why", "x")
    assert none.code == 2 and "--probe, --rules, --terminal or --state" in none.err
    state = '{"lines": ["test_a"], "status": "frozen"}'
    done = ws.moor(
        "revise", "anchor:roster", "--state", state, "--why", "frozen for 2.0", "--trust"
    )
    assert done.code == 0, done.err
    assert locked_state(ws, ROSTER, "anchor:roster") == json.loads(state)
    assert revisions(ws, "roster") == [("state", "frozen for 2.0")]
    row = ws.moor("anchors", "--format", "json", check=True).json()["anchors"][0]
    assert (row["rules"], row["state"], row["revisions"]) == (1, json.loads(state), {"state": 1})
    assert anchors(ws)[ROSTER]["code"] == "rule_fired"  # the rule sees the state it was set to


def test_rules_see_changed_has_and_the_times_of_the_observation_and_the_state(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "test_a\n")
    declare(ws, "changed", [('changed("lines")', '{"lines": obs.lines}')])
    declare(ws, "has", [("has(state.status)", '{"lines": obs.lines}')])
    declare(ws, "times", [("taken_at >= entered_at && !has(state.seen)", '{"seen": true}')])
    for name in ("changed", "has", "times"):
        ws.memory(name, f"anchor:{name}")
    ws.moor("bind", "--trust", check=True)
    seen = anchors(ws)
    assert seen["memories/changed.md"]["state"] == "current"  # nothing changed yet
    assert seen["memories/has.md"]["state"] == "current"  # no status in the bound state
    assert seen["memories/times.md"]["code"] == "rule_fired"  # observed after it was entered
    ws.write("roster.txt", "test_b\n")
    seen = anchors(ws)
    assert seen["memories/changed.md"]["code"] == "rule_fired"  # the control: now it did
    assert seen["memories/has.md"]["code"] == "no_rule_fired"


def test_a_rule_sees_a_changed_observation_only_after_its_streak(ws: Workspace) -> None:
    ws.write("roster.txt", "test_a\ntest_b\n")
    declare(ws, "roster", [(FEWER, REMOVED)], extra="streak = 2")
    ws.memory("roster", "anchor:roster")
    ws.moor("bind", "--trust", check=True)
    ws.write("roster.txt", "test_a\n")
    first = anchors(ws)[ROSTER]
    assert (first["state"], first["code"]) == ("current", "streak_pending")
    second = anchors(ws)[ROSTER]  # the control: seen twice, the rule fires
    assert (second["state"], second["code"]) == ("drifted", "rule_fired")
