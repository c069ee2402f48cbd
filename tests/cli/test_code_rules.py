"""The built-in code axes as generated transition rules (issue 25, item 3; DESIGN §4b): a
code anchor moves when the rule `changed("AXIS")` of an axis it watches fires, the rules are
shown by `moor anchors`, and they are evaluated without the CEL library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Workspace

GENERATED = [
    {"when": f'changed("{axis}")', "to": '{"status": "drifted"}'}
    for axis in ("kind", "signature", "decorators", "body")
]


@pytest.fixture(autouse=True)
def no_trust_from_the_host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("MOOR_TRUST", raising=False)


def declare_roster(ws: Workspace, rule: bool) -> None:
    ws.write("roster.txt", "test_a\n")
    ws.write("probes/roster.py", "print(open('roster.txt').read(), end='')\n")
    command = json.dumps([sys.executable, "probes/roster.py"])
    text = f"\n[anchors.roster]\ncommand = {command}\n"
    if rule:
        text += (
            '\n[[anchors.roster.rule]]\nwhen = "size(obs.lines) < size(state.lines)"\n'
            'to = \'{"status": "removed"}\'\n'
        )
    with (ws.root / "moor.toml").open("a", encoding="utf-8") as config:
        config.write(text)


@pytest.mark.parametrize("rule", [False, True])
def test_moor_anchors_shows_the_generated_rules_of_a_code_anchor_and_an_unruled_command_anchor(
    ws: Workspace, rule: bool
) -> None:
    ws.write("app.py", "def f():\n    return 1\n")
    declare_roster(ws, rule=rule)
    ws.memory("code", "app.py#f")
    ws.memory("roster", "anchor:roster")
    ws.moor("bind", "--trust", check=True)
    rows = {
        row["anchor"]: row
        for row in ws.moor("anchors", "--format", "json", check=True).json()["anchors"]
    }
    assert rows["app.py#f"]["kind"] == "symbol"
    assert rows["app.py#f"]["generated_rules"] == GENERATED
    command = rows["anchor:roster"]["generated_rules"]
    if rule:  # its rules are the declared ones
        assert command is None
    else:  # "without rules, any change is a transition": the same rule shape as code's
        assert command == [{"when": 'changed("facts")', "to": '{"status": "drifted"}'}]
    text = ws.moor("anchors", check=True).out
    assert 'rules (generated from the default watch): changed("kind"), ' in text
    assert ('rules (generated from no declared rule): changed("facts")' in text) is not rule


def test_a_code_anchor_moves_by_the_rules_its_watch_generates(ws: Workspace) -> None:
    ws.write("app.py", "def f(a):\n    return 1\n\n\ndef g(a):\n    return 1\n")
    ws.memory("whole", "app.py#f")
    ws.memory("shape", "app.py#g", watch=["signature"])
    ws.moor("bind", check=True)
    ws.write("app.py", "def f(a):\n    return 2\n\n\ndef g(a):\n    return 2\n")
    states = ws.states()
    assert states["memories/whole.md"]["anchors"][0]["axes"] == ["body"]  # fired: body
    assert states["memories/shape.md"]["state"] == "current"  # no rule for body generated
    ws.write("app.py", "def f(a):\n    return 2\n\n\ndef g(a, b):\n    return 2\n")
    assert ws.states()["memories/shape.md"]["anchors"][0]["axes"] == ["signature"]


@pytest.mark.parametrize("with_rule", [False, True])
def test_a_check_of_code_anchors_never_imports_the_cel_library(
    ws: Workspace, with_rule: bool
) -> None:
    ws.write("app.py", "def f():\n    return 1\n")
    declare_roster(ws, rule=with_rule)  # the control: a declared rule does import it
    ws.memory("code", "app.py#f")
    ws.memory("roster", "anchor:roster")
    ws.moor("bind", "--trust", check=True)
    ws.write("app.py", "def f():\n    return 2\n")  # a code rule fires
    ws.write("roster.txt", "")  # and the declared rule, when there is one
    script = (
        "import sys\nfrom moor.main import main\n"
        "code = main(['check', '--trust', '--format', 'json'])\n"
        "print(code, 'cel_expr_python' in sys.modules, file=sys.stderr)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=ws.root, capture_output=True, text=True, timeout=120
    )
    assert run.stderr.strip().splitlines()[-1] == f"1 {with_rule}", run.stderr
    report = json.loads(run.stdout)
    code = next(m for m in report["memories"] if m["path"] == "memories/code.md")
    assert code["anchors"][0]["axes"] == ["body"]


def test_moor_anchors_shows_the_rules_the_binding_memories_own_watch_generates(
    ws: Workspace,
) -> None:
    """A memory's `watch:` generates its own rules, and `moor anchors` shows those; when the
    memories that bind one anchor watch differently, it shows each memory's. The control:
    an anchor no memory narrows shows the default watch's rules."""
    ws.write(
        "app.py", "def f():\n    return 1\n\n\ndef g():\n    return 1\n\n\ndef h():\n    pass\n"
    )
    ws.memory("whole", "app.py#f")
    ws.memory("shape", "app.py#g", watch=["signature"])
    ws.memory("narrow", "app.py#h", watch=["signature"])
    ws.memory("broad", "app.py#h")
    ws.moor("bind", check=True)
    rows = {
        row["anchor"]: row
        for row in ws.moor("anchors", "--format", "json", check=True).json()["anchors"]
    }
    assert rows["app.py#f"]["generated_rules"] == GENERATED  # the control
    signature = [{"when": 'changed("signature")', "to": '{"status": "drifted"}'}]
    assert rows["app.py#g"]["generated_rules"] == signature
    assert rows["app.py#h"]["generated_rules"] is None
    assert rows["app.py#h"]["generated_rules_by_memory"] == {
        "memories/broad.md": GENERATED,
        "memories/narrow.md": signature,
    }
    text = ws.moor("anchors", check=True).out
    assert 'rules (generated from the watch [signature]): changed("signature") -> drifted' in text
    assert 'memories/narrow.md: rules (generated from its watch): changed("signature")' in text
    assert 'memories/broad.md: rules (generated from its watch): changed("kind")' in text
