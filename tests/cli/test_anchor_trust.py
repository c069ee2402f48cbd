"""Command probes run only when trusted, and trust comes from outside the repository
(issue 25, item 2): untrusted, nothing runs — a probe that would leave a file behind
leaves none — and each source of trust, shown to run it, is the control."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import Workspace

LEFT_BEHIND = "ran.txt"


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    monkeypatch.delenv("MOOR_TRUST", raising=False)
    return folder


@pytest.fixture
def probed(ws: Workspace, state: Path) -> Workspace:
    """A bound memory about a command that leaves `ran.txt` behind whenever it runs."""
    ws.write(
        "probes/leave.py",
        f"open({LEFT_BEHIND!r}, 'a').write('ran\\n')\nprint('fact')\n",
    )
    command = json.dumps([sys.executable, "probes/leave.py"])
    ws.write("moor.toml", f'memory_roots = ["memories"]\n\n[anchors.leave]\ncommand = {command}\n')
    ws.memory("leave", "anchor:leave")
    ws.moor("bind", "--trust", check=True)
    (ws.root / LEFT_BEHIND).unlink()
    return ws


def looked(ws: Workspace, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    run = ws.moor("check", "--format", "json", *args, env=env)
    assert run.code in (0, 1), run.err
    value = run.json()["memories"][0]["anchors"][0]
    assert isinstance(value, dict)
    return value


def ran(ws: Workspace) -> bool:
    return (ws.root / LEFT_BEHIND).exists()


def test_an_untrusted_workspace_runs_nothing_and_its_anchor_is_unverified(
    probed: Workspace,
) -> None:
    seen = looked(probed)
    assert (seen["state"], seen["reason"], seen["code"]) == (
        "unverified",
        "unreachable",
        "workspace_not_trusted",
    )
    assert not ran(probed)
    # Positive control: trusted for this run, the same probe runs.
    assert looked(probed, "--trust")["state"] == "current"
    assert ran(probed)


def test_moor_trust_env_variable_trusts_only_with_the_value_1(probed: Workspace) -> None:
    assert looked(probed, env={"MOOR_TRUST": "yes"})["code"] == "workspace_not_trusted"
    assert not ran(probed)
    assert looked(probed, env={"MOOR_TRUST": "1"})["state"] == "current"
    assert ran(probed)


def test_moor_trust_and_untrust_keep_the_list_outside_the_repository(
    probed: Workspace, state: Path
) -> None:
    probed.moor("trust", check=True)
    listed = (state / "moor" / "trusted-roots").read_text()
    assert str(probed.root.resolve()) in listed
    assert looked(probed)["state"] == "current"
    assert ran(probed)
    (probed.root / LEFT_BEHIND).unlink()
    probed.moor("untrust", check=True)
    assert looked(probed)["code"] == "workspace_not_trusted"
    assert not ran(probed)


def test_a_repository_cannot_trust_itself(
    probed: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its own settings: a `trusted` key is no key moor.toml has.
    text = probed.read("moor.toml")
    probed.write("moor.toml", "trusted = true\n" + text)
    refused = probed.moor("check")
    assert refused.code == 2 and "unknown key" in refused.err
    assert not ran(probed)
    probed.write("moor.toml", text)
    # A list of trusted roots inside the workspace (XDG_STATE_HOME pointed into it, as a
    # repository's .envrc could) is not believed, and `moor trust` will not write one.
    inside = probed.root / ".state"
    (inside / "moor").mkdir(parents=True)
    (inside / "moor" / "trusted-roots").write_text(f"{probed.root.resolve()}\n")
    monkeypatch.setenv("XDG_STATE_HOME", str(inside))
    assert looked(probed)["code"] == "workspace_not_trusted"
    assert not ran(probed)
    refused = probed.moor("trust")
    assert refused.code == 2 and "inside this workspace" in refused.err
    # Positive control: the same list outside the workspace is believed.
    outside = probed.root.parent / "outside-state"
    (outside / "moor").mkdir(parents=True)
    (outside / "moor" / "trusted-roots").write_text(f"{probed.root.resolve()}\n")
    monkeypatch.setenv("XDG_STATE_HOME", str(outside))
    assert looked(probed)["state"] == "current"
    assert ran(probed)


def test_add_and_bind_run_nothing_untrusted(probed: Workspace) -> None:
    refused = probed.moor("add", "Another", "--about", "anchor:leave")
    assert refused.code == 1 and "workspace_not_trusted" not in refused.out
    assert "not trusted" in refused.err
    assert not ran(probed)
    added = probed.moor("add", "Another", "--about", "anchor:leave", "--trust")
    assert added.code == 0, added.err
    assert ran(probed)


def about_anchor(ws: Workspace, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    run = ws.moor("about", "anchor:leave", "--format", "json", *args, env=env)
    assert run.code in (0, 1), run.err
    items = run.json()["memories"]
    assert isinstance(items, list) and len(items) == 1
    value = items[0]
    assert isinstance(value, dict)
    return value


def test_moor_about_shows_a_command_anchors_observed_state_only_when_trusted(
    probed: Workspace,
) -> None:
    probed.write("probes/leave.py", f"open({LEFT_BEHIND!r}, 'a').write('ran\\n')\nprint('new')\n")
    untrusted = about_anchor(probed)
    assert untrusted["anchor_state"] == "unverified"
    assert "not trusted" in str(untrusted["detail"])
    assert not ran(probed)  # nothing ran
    trusted = about_anchor(probed, "--trust")  # the control: the person's word runs it
    assert trusted["anchor_state"] == "drifted", trusted
    assert ran(probed)
    (probed.root / LEFT_BEHIND).unlink()
    by_environment = about_anchor(probed, env={"MOOR_TRUST": "1"})
    assert by_environment["anchor_state"] == "drifted" and ran(probed)


@pytest.mark.parametrize(
    ("configuration", "setting"),
    [
        (".envrc", "export MOOR_TRUST=1\n"),
        (".claude/settings.json", '{"env": {"MOOR_TRUST": "1"}}\n'),
        (".env", "MOOR_TRUST=1\n"),
        (".gemini/settings.json", '{"mcpServers": {"moor": {"env": {"MOOR_TRUST": "1"}}}}\n'),
        (".vscode/settings.json", '{"terminal.integrated.env.linux": {"MOOR_TRUST": "1"}}\n'),
    ],
)
def test_moor_trust_is_not_believed_where_the_repository_configures_it(
    probed: Workspace, configuration: str, setting: str
) -> None:
    trusted_env = {"MOOR_TRUST": "1"}
    probed.write(configuration, setting.replace("MOOR_TRUST", "OTHER_SETTING"))
    assert looked(probed, env=trusted_env)["state"] == "current" and ran(probed)  # the control
    (probed.root / LEFT_BEHIND).unlink()
    probed.write(configuration, setting)  # now the repository sets the variable itself
    seen = looked(probed, env=trusted_env)
    assert (seen["state"], seen["code"]) == ("unverified", "workspace_not_trusted")
    assert f"this repository's {configuration} names it" in str(seen["detail"])
    assert not ran(probed)
    assert looked(probed, "--trust", env=trusted_env)["state"] == "current"  # the person's word
    assert ran(probed)


def test_an_unreadable_environment_configuration_keeps_moor_trust_from_being_believed(
    probed: Workspace,
) -> None:
    os.mkfifo(probed.root / ".envrc")  # would hang a reader that opened it blocking
    seen = looked(probed, env={"MOOR_TRUST": "1"})
    assert seen["code"] == "workspace_not_trusted" and "cannot be read" in str(seen["detail"])
    assert not ran(probed)
    (probed.root / ".envrc").unlink()
    (probed.root / ".env").mkdir()  # a folder (a virtualenv's usual name) is no configuration
    assert looked(probed, env={"MOOR_TRUST": "1"})["state"] == "current"  # the control
    assert ran(probed)
