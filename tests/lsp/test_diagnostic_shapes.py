"""Diagnostics per client capability (issue 10): pull with refresh, pull without refresh
(Neovim 0.11), push only (Emacs eglot, Helix) — each through the real server process."""

from __future__ import annotations

import asyncio

import attrs
import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from tests.conftest import Workspace
from tests.lsp.conftest import G2, G3, Editor, bind_all

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


async def _pushed(client: LanguageClient, uri: str, code: str | None, timeout: float = 30) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        items = client.diagnostics.get(uri)
        if items is not None and (
            (code is None and not items) or any(d.code == code for d in items)
        ):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"never pushed {code!r} for {uri}: {client.diagnostics.get(uri)}")


async def test_a_client_that_pulls_without_refresh_is_not_offered_pull_and_gets_every_change_pushed(
    client: LanguageClient, ws: Workspace
) -> None:
    neovim = client_capabilities("neovim")  # textDocument.diagnostic, no refreshSupport
    assert neovim.text_document is not None and neovim.text_document.diagnostic is not None
    editor = Editor(client, ws, "neovim", neovim)
    ws.write("src/a.py", G2)
    ws.memory("retry", "src/a.py#g")
    ws.memory("other", "src/a.py#g")  # never opened
    bind_all(ws)
    result = await editor.start()
    assert result.capabilities.diagnostic_provider is None
    uri = editor.uri("memories/retry.md")
    ws.write("src/a.py", G3)  # a change the editor did not make (`sed`, `git checkout`)
    await _pushed(client, uri, "drifted")
    await _pushed(client, editor.uri("memories/other.md"), "drifted")
    ws.write("src/a.py", G2)
    await _pushed(client, uri, None)  # cleared, pushed too (the next test is the control:
    # a client that can be told to refresh is offered pull and never pushed to)


async def test_a_pull_client_with_refresh_is_offered_pull(
    client: LanguageClient, ws: Workspace
) -> None:
    neovim = client_capabilities("neovim")
    assert neovim.workspace is not None
    capabilities = attrs.evolve(
        neovim,
        workspace=attrs.evolve(
            neovim.workspace,
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
        ),
    )
    editor = Editor(client, ws, "neovim", capabilities)
    ws.write("src/a.py", G3)
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)
    ws.write("src/a.py", G2)
    result = await editor.start()
    assert result.capabilities.diagnostic_provider is not None
    await editor.one("memories/retry.md", "drifted")  # pulled
    assert client.diagnostics == {}


async def test_a_push_client_opening_a_memory_after_the_first_scan_is_sent_its_diagnostics(
    client: LanguageClient, ws: Workspace
) -> None:
    eglot = client_capabilities("visual-studio-code")  # push only, as eglot and Helix
    editor = Editor(client, ws, "eglot", eglot)
    ws.write("src/a.py", G3)
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)
    ws.write("src/a.py", G2)
    await editor.start()
    uri = editor.uri("memories/retry.md")
    await _pushed(client, uri, "drifted")  # control: published at the first scan
    client.diagnostics.pop(uri)  # as eglot does for a file that was not open
    editor.open("memories/retry.md")
    await _pushed(client, uri, "drifted")
