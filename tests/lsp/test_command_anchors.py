"""Custom anchors in the editor (issue 25): the client's workspace trust, said in
initializationOptions, decides whether the workspace's declared commands run — said
false, nothing runs (a probe that would leave a file behind leaves none); said true, the
same probe runs and a real change is a `drifted` diagnostic."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import Workspace
from tests.lsp.conftest import Editor, make_client

# A server whose own environment trusts every workspace (MOOR_TRUST=1): only the editor's
# explicit distrust can keep it from running a command.
TRUSTING = ClientServerConfig(
    server_command=[sys.executable, "-m", "moor_lsp"],
    client_factory=make_client,
    server_env={**os.environ, "MOOR_TRUST": "1"},
)


@pytest_lsp.fixture(config=TRUSTING, params=["visual-studio-code"])  # type: ignore[untyped-decorator]
async def trusting(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    lsp_client.client_name = "visual-studio-code"  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.fixture
def trusting_editor(trusting: LanguageClient, ws: Workspace) -> Editor:
    return Editor(trusting, ws, "visual-studio-code", client_capabilities("visual-studio-code"))


LEFT_BEHIND = "ran.txt"


def probed(editor: Editor) -> None:
    ws = editor.ws
    ws.write("roster.txt", "test_a\n")
    ws.write(
        "probes/roster.py",
        f"open({LEFT_BEHIND!r}, 'a').write('ran')\nprint(open('roster.txt').read(), end='')\n",
    )
    command = json.dumps([sys.executable, "probes/roster.py"])
    ws.write("moor.toml", f'memory_roots = ["memories"]\n\n[anchors.roster]\ncommand = {command}\n')
    ws.memory("roster", "anchor:roster")
    ws.moor("bind", "--trust", check=True)
    (ws.root / LEFT_BEHIND).unlink()
    ws.write("roster.txt", "test_a\ntest_b\n")  # a real change


@pytest.mark.asyncio
async def test_an_editor_that_does_not_trust_the_workspace_runs_no_command(
    trusting_editor: Editor,
) -> None:
    editor = trusting_editor
    probed(editor)
    await editor.start({"trusted": False})
    await editor.one("memories/roster.md", "unverified")
    assert not (editor.ws.root / LEFT_BEHIND).exists()


@pytest.mark.asyncio
async def test_an_editor_that_says_nothing_leaves_it_to_moor_trust_outside_the_workspace(
    trusting_editor: Editor,
) -> None:
    """The control of the test above: the same server, the editor silent, runs it."""
    editor = trusting_editor
    probed(editor)
    await editor.start()
    await editor.one("memories/roster.md", "drifted")
    assert (editor.ws.root / LEFT_BEHIND).exists()


@pytest.mark.asyncio
async def test_moor_trust_the_repositorys_editor_settings_name_is_not_believed(
    trusting_editor: Editor,
) -> None:
    """The control is the test above: the same silent editor and server, no such setting."""
    editor = trusting_editor
    probed(editor)
    editor.ws.write(
        ".vscode/settings.json", '{"terminal.integrated.env.linux": {"MOOR_TRUST": "1"}}'
    )
    await editor.start()
    shown = await editor.one("memories/roster.md", "unverified")
    assert ".vscode/settings.json names it" in shown.message
    assert not (editor.ws.root / LEFT_BEHIND).exists()


@pytest.mark.asyncio
async def test_an_editor_that_trusts_the_workspace_runs_it_and_shows_the_change(
    editor: Editor,
) -> None:
    probed(editor)
    await editor.start({"trusted": True})
    await editor.one("memories/roster.md", "drifted")
    assert (editor.ws.root / LEFT_BEHIND).exists()


@pytest.mark.asyncio
async def test_the_editor_shows_a_firing_rule_as_drifted_and_a_broken_one_as_unverified(
    trusting_editor: Editor,
) -> None:
    editor = trusting_editor
    ws = editor.ws
    ws.write("roster.txt", "test_a\ntest_b\n")
    ws.write("probes/roster.py", "print(open('roster.txt').read(), end='')\n")
    command = json.dumps([sys.executable, "probes/roster.py"])
    config = 'memory_roots = ["memories"]\n'
    for name, when in (("fewer", "size(obs.lines) < size(state.lines)"), ("broken", "1 / 0 > 0")):
        config += (
            f"\n[anchors.{name}]\ncommand = {command}\n[[anchors.{name}.rule]]\n"
            f'when = {json.dumps(when)}\nto = \'{{"status": "removed"}}\'\n'
        )
    ws.write("moor.toml", config)
    ws.memory("fewer", "anchor:fewer")
    ws.memory("broken", "anchor:broken")
    ws.moor("bind", "--trust", check=True)
    ws.write("roster.txt", "test_a\n")
    await editor.start()
    fired = await editor.one("memories/fewer.md", "drifted")  # the control: it moved
    assert "rule 1" in fired.message
    broken = await editor.one("memories/broken.md", "unverified")
    assert "divide by zero" in broken.message or "divided_by_zero" in broken.message


@pytest.mark.asyncio
async def test_a_drifted_command_anchor_points_at_no_file_while_drifted_code_points_at_its_place(
    trusting_editor: Editor,
) -> None:
    """A command anchor has no place in a file: its diagnostic carries no related
    information (it once pointed at a file named `anchor:roster`). The control, in the same
    memory: drifted code points at where the code is now."""
    editor = trusting_editor
    ws = editor.ws
    ws.write("src/app.py", "def handler():\n    return 1\n")
    ws.write("roster.txt", "test_a\n")
    ws.write("probes/roster.py", "print(open('roster.txt').read(), end='')\n")
    command = json.dumps([sys.executable, "probes/roster.py"])
    ws.write("moor.toml", f'memory_roots = ["memories"]\n\n[anchors.roster]\ncommand = {command}\n')
    ws.memory("roster", ["anchor:roster", "src/app.py#handler"])
    ws.moor("bind", "--trust", check=True)
    ws.write("roster.txt", "test_a\ntest_b\n")
    ws.write("src/app.py", "def handler():\n    return 2\n")
    await editor.start()
    found = await editor.diagnostics(
        "memories/roster.md", lambda items: sum(d.code == "drifted" for d in items) == 2
    )
    by_anchor = {(d.data or {})["canonical"]: d for d in found if d.code == "drifted"}
    code = by_anchor["src/app.py#handler"].related_information
    assert code is not None and code[0].location.uri == editor.uri("src/app.py")
    assert by_anchor["anchor:roster"].related_information is None
