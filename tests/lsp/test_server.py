"""The core: client file events, pull refreshes, watcher registration, failure isolation."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

import attrs
import pytest
import pytest_lsp
from lsprotocol import types
from moor_lsp.features import Feature
from moor_lsp.server import MoorLanguageServer
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import Workspace
from tests.lsp.conftest import G2, G3, Editor, bind_all, make_client

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "moor_lsp", "--no-watch"], client_factory=make_client
    )
)
async def unwatched(lsp_client: LanguageClient) -> AsyncIterator[None]:
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 5)
    finally:
        if lsp_client._server is not None and lsp_client._server.returncode is None:
            lsp_client._server.kill()


async def test_the_clients_file_events_trigger_a_check_when_the_server_does_not_watch(
    unwatched: LanguageClient, ws: Workspace
) -> None:
    editor = Editor(unwatched, ws, "visual-studio-code", client_capabilities("visual-studio-code"))
    ws.write("src/a.py", G2)
    ws.write("src/b.py", G2)
    ws.memory("retry", "src/a.py#g")
    ws.memory("other", "src/b.py#g")
    bind_all(ws)
    ws.write("src/b.py", G3)
    await editor.start()
    await editor.one("memories/other.md", "drifted")  # the first check is done

    ws.write("src/a.py", G3)
    with pytest.raises(AssertionError, match="never matched"):  # nobody told the server
        await editor.diagnostics("memories/retry.md", lambda items: bool(items), timeout=1.5)
    unwatched.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=editor.uri("src/a.py"), type=types.FileChangeType.Changed)]
        )
    )
    await editor.one("memories/retry.md", "drifted")
    # VS Code allows dynamic registration, so the server asked it to watch files (and to
    # report setting changes).
    assert sorted(r.method for r in unwatched.registrations) == [  # type: ignore[attr-defined]
        types.WORKSPACE_DID_CHANGE_CONFIGURATION,
        types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
    ]


async def test_a_pulling_client_that_can_refresh_is_asked_to_after_a_change(
    unwatched: LanguageClient, ws: Workspace
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
    editor = Editor(unwatched, ws, "neovim", capabilities)
    ws.write("src/a.py", G2)
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)
    await editor.start()
    assert await editor.now("memories/retry.md") == []
    refreshes = unwatched.diagnostic_refresh_count

    ws.write("src/a.py", G3)
    unwatched.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=editor.uri("src/a.py"), type=types.FileChangeType.Changed)]
        )
    )
    await editor.one("memories/retry.md", "drifted")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60  # an event awaited: generous for a loaded machine
    while unwatched.diagnostic_refresh_count == refreshes and loop.time() < deadline:
        await asyncio.sleep(0.05)
    assert unwatched.diagnostic_refresh_count > refreshes
    assert unwatched.diagnostics == {}  # refreshed, never pushed


class Broken(Feature):
    name = "broken"

    def register(self) -> None:
        self.handle(types.TEXT_DOCUMENT_HOVER, self.hover, None)

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        raise RuntimeError("a bug in one feature")


async def test_a_failing_feature_answers_its_default_and_the_others_keep_working() -> None:
    server = MoorLanguageServer(watch=False, exclude=frozenset({"hover"}))
    broken = Broken(server)
    broken.register()
    server.features.append(broken)
    params = types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri="file:///nowhere/memories/a.md"),
        position=types.Position(line=0, character=0),
    )
    hover = server.protocol.fm.features[types.TEXT_DOCUMENT_HOVER]
    actions = server.protocol.fm.features[types.TEXT_DOCUMENT_CODE_ACTION]

    assert await hover(params) is None  # the error was logged, not raised
    # A healthy feature still answers (no workspace yet: nothing to offer).
    assert (
        await actions(
            types.CodeActionParams(
                text_document=params.text_document,
                range=types.Range(start=params.position, end=params.position),
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        is None
    )
