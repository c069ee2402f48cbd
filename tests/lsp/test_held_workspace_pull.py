"""A workspace pull given a partial result token is held open and told each change (issue 24):
VS Code pulls the workspace again only 2 s after each answer, and a refresh makes it pull
only the documents it has open, so a memory not open showed "not bound yet" for seconds
after `moor bind` in a terminal. Through the real server process."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from tests.conftest import Workspace
from tests.lsp.conftest import G2, TIMEOUT, Editor, RecordingClient, bind_all

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]
TOKEN = "moor-test-workspace-pull"


def pulling(client: LanguageClient, ws: Workspace) -> Editor:
    """An editor that pulls and can be told to refresh (as VS Code does)."""
    neovim = client_capabilities("neovim")
    assert neovim.workspace is not None
    capabilities = attrs.evolve(
        neovim,
        workspace=attrs.evolve(
            neovim.workspace,
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
        ),
    )
    return Editor(client, ws, "pulling", capabilities)


def codes(report: dict[str, Any], uri: str) -> list[str] | None:
    """The diagnostic codes a (partial) workspace report gives `uri`, or None if it names
    it not (or as unchanged)."""
    for item in report["items"]:
        if item["uri"] == uri and item["kind"] == "full":
            return [d["code"] for d in item["items"]]
    return None


async def partial_result(
    client: RecordingClient, seen: int, wanted: Callable[[dict[str, Any]], bool]
) -> int:
    """Waits for a partial result after the first `seen` that `wanted` holds for; returns
    how many there are then."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while True:
        sent = client.partials.get(TOKEN, [])
        if any(wanted(report) for report in sent[seen:]):
            return len(sent)
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise AssertionError(f"no such partial result; sent: {sent[seen:]}")
        client.partial.clear()
        if len(client.partials.get(TOKEN, [])) == len(sent):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(client.partial.wait(), remaining)


@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)  # its own capabilities
async def test_a_memory_bound_in_a_terminal_reaches_a_held_workspace_pull_without_a_new_pull(
    client: LanguageClient, ws: Workspace
) -> None:
    editor = pulling(client, ws)
    recording = editor.recording
    ws.write("src/a.py", G2 + "\n\ndef h():\n    return 1\n")
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)
    result = await editor.start()
    assert result.capabilities.diagnostic_provider is not None  # pulled, never pushed
    await editor.execute("moor.check")
    new = editor.uri("memories/new.md")
    # Control: without a partial result token the pull is answered at once, as before.
    answered = await asyncio.wait_for(
        client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[])),
        TIMEOUT,
    )
    assert list(answered.items) == []  # retry.md is current
    held = asyncio.ensure_future(
        client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=[], partial_result_token=TOKEN)
        )
    )
    seen = await partial_result(recording, 0, lambda report: True)  # the whole report first
    ws.memory("new", "src/a.py#h")  # written in a terminal, never opened in the editor
    seen = await partial_result(recording, seen, lambda report: codes(report, new) == ["unbound"])
    bind = await asyncio.create_subprocess_exec(
        sys.executable, "-P", "-m", "moor", "bind", "memories/new.md", cwd=ws.root
    )
    assert await asyncio.wait_for(bind.wait(), TIMEOUT) == 0
    # The bind reaches the client on the same request: nothing pulled it again.
    await partial_result(recording, seen, lambda report: codes(report, new) == [])
    assert not held.done()
    assert client.diagnostics == {}  # nothing pushed
