"""Custom anchors through the MCP server (issue 25): the `anchors` tool lists them, and the
drift report includes them — running a declared command only in a workspace trusted from
outside (here MOOR_TRUST=1 in the server's own environment), never otherwise."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from mcp.client.session import ClientSession

from tests.conftest import Workspace
from tests.mcp.conftest import call, error_text, run, structured

LEFT_BEHIND = "ran.txt"


@pytest.fixture
def probed(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """A memory bound to a command that prints roster.txt and leaves ran.txt behind."""
    monkeypatch.delenv("MOOR_TRUST", raising=False)
    ws.write("roster.txt", "test_a\n")
    ws.write(
        "probes/roster.py",
        f"open({LEFT_BEHIND!r}, 'a').write('ran')\nprint(open('roster.txt').read(), end='')\n",
    )
    command = json.dumps([sys.executable, "probes/roster.py"])
    ws.write("moor.toml", f'memory_roots = ["memories"]\n\n[anchors.roster]\ncommand = {command}\n')
    ws.memory("roster", "anchor:roster", body="The roster is test_a alone.")
    ws.write("app.py", "def f():\n    return 1\n")
    ws.memory("code", "app.py#f")
    ws.moor("bind", "--trust", check=True)
    (ws.root / LEFT_BEHIND).unlink()
    ws.write("roster.txt", "test_a\ntest_b\n")  # a real change, for the control
    return ws


def test_the_anchors_tool_lists_command_and_code_anchors(probed: Workspace) -> None:
    rows = structured(call(probed.root, "anchors", {}))["anchors"]
    by_name = {row["anchor"]: row for row in rows}
    assert by_name["anchor:roster"]["kind"] == "command"
    assert by_name["anchor:roster"]["reproducibility"] == "closed"
    assert by_name["anchor:roster"]["memories"] == ["memories/roster.md"]
    assert by_name["app.py#f"]["kind"] == "symbol"
    assert by_name["app.py#f"]["generated_rules"][-1] == {
        "when": 'changed("body")',
        "to": '{"status": "drifted"}',
    }
    assert [r["when"] for r in by_name["anchor:roster"]["generated_rules"]] == ['changed("facts")']
    only = structured(call(probed.root, "anchors", {"kind": "command"}))["anchors"]
    assert [row["anchor"] for row in only] == ["anchor:roster"]
    assert not (probed.root / LEFT_BEHIND).exists()  # listing runs nothing


def _report(session: ClientSession) -> Any:
    return session.call_tool("drift_report", {})


def test_the_drift_report_runs_no_command_of_an_untrusted_workspace(probed: Workspace) -> None:
    async def use(session: ClientSession) -> Any:
        return await _report(session)

    report = structured(run(probed.root, use))
    flagged = {m["path"]: m for m in report["needing_a_look"]}
    anchor = flagged["memories/roster.md"]["anchors"][0]
    assert anchor["state"] == "unverified"
    assert "not trusted" in anchor["detail"]
    assert not (probed.root / LEFT_BEHIND).exists()
    # Positive control: the same server, trusted from its own environment, runs it and
    # reports the real change.
    trusted = structured(run(probed.root, use, env={"MOOR_TRUST": "1"}))
    flagged = {m["path"]: m for m in trusted["needing_a_look"]}
    assert flagged["memories/roster.md"]["anchors"][0]["state"] == "drifted"
    assert (probed.root / LEFT_BEHIND).exists()


def test_memories_about_a_custom_anchor_runs_its_command_only_when_trusted(
    probed: Workspace,
) -> None:
    async def about(session: ClientSession) -> Any:
        return await session.call_tool("memories_about", {"target": "anchor:roster"})

    untrusted = structured(run(probed.root, about))
    assert [(m["path"], m["state"]) for m in untrusted["memories"]] == [
        ("memories/roster.md", "unverified")
    ]
    assert untrusted["memories"][0]["about"] == "anchor:roster"
    assert not (probed.root / LEFT_BEHIND).exists()
    # Positive control: trusted from the server's own environment, it runs and sees the change.
    trusted = structured(run(probed.root, about, env={"MOOR_TRUST": "1"}))
    assert [(m["path"], m["state"]) for m in trusted["memories"]] == [
        ("memories/roster.md", "drifted")
    ]
    assert (probed.root / LEFT_BEHIND).exists()


def test_memories_about_an_anchor_nothing_declares_or_binds_is_refused(probed: Workspace) -> None:
    refused = error_text(call(probed.root, "memories_about", {"target": "anchor:nothing"}))
    assert "anchor:nothing is neither declared" in refused and "declared: roster" in refused
    # The control: a code target in the same workspace is answered.
    code = structured(call(probed.root, "memories_about", {"target": "app.py#f"}))
    assert [m["path"] for m in code["memories"]] == ["memories/code.md"]


def test_the_drift_report_moves_an_anchor_with_rules_only_when_a_rule_fires(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MOOR_TRUST", raising=False)
    ws.write("roster.txt", "test_a\ntest_b\n")
    ws.write("probes/roster.py", "print(open('roster.txt').read(), end='')\n")
    command = json.dumps([sys.executable, "probes/roster.py"])
    rule = (
        "[[anchors.{0}.rule]]\nwhen = 'size(obs.lines) < size(state.lines)'\n"
        'to = \'{{"lines": obs.lines, "status": "removed"}}\'\n'
    )
    ws.write(
        "moor.toml",
        f'memory_roots = ["memories"]\n\n[anchors.fewer]\ncommand = {command}\n'
        + rule.format("fewer")
        + f"\n[anchors.more]\ncommand = {command}\n"
        + rule.format("more").replace("<", ">"),
    )
    ws.memory("fewer", "anchor:fewer")
    ws.memory("more", "anchor:more")
    ws.moor("bind", "--trust", check=True)
    ws.write("roster.txt", "test_a\n")

    async def use(session: ClientSession) -> Any:
        return await _report(session)

    report = structured(run(ws.root, use, env={"MOOR_TRUST": "1"}))
    flagged = {m["path"]: m["anchors"][0] for m in report["needing_a_look"]}
    fewer = flagged["memories/fewer.md"]  # the control: it moved
    assert fewer["state"] == "drifted" and "rule 1" in fewer["detail"]
    assert "memories/more.md" not in flagged  # changed, but no rule fired on it


def test_moor_trust_set_by_the_repositorys_mcp_configuration_is_not_believed(
    probed: Workspace,
) -> None:
    async def use(session: ClientSession) -> Any:
        return await _report(session)

    server = {"command": "moor", "args": ["mcp"], "env": {"MOOR_TRUST": "1"}}
    probed.write(".mcp.json", json.dumps({"mcpServers": {"moor": server}}))
    report = structured(run(probed.root, use, env={"MOOR_TRUST": "1"}))
    flagged = {m["path"]: m for m in report["needing_a_look"]}
    anchor = flagged["memories/roster.md"]["anchors"][0]
    assert anchor["state"] == "unverified"
    assert "this repository's .mcp.json names it" in anchor["detail"]
    assert not (probed.root / LEFT_BEHIND).exists()
    # The control: the same server environment, with no repository configuring it, runs it.
    (probed.root / ".mcp.json").unlink()
    trusted = structured(run(probed.root, use, env={"MOOR_TRUST": "1"}))
    flagged = {m["path"]: m for m in trusted["needing_a_look"]}
    assert flagged["memories/roster.md"]["anchors"][0]["state"] == "drifted"
    assert (probed.root / LEFT_BEHIND).exists()
