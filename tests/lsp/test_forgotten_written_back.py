"""A forgotten memory whose file is written back (an editor's save of the buffer it still
held): the language server says what `moor check` says of it — retired, by the tombstone —
right after the write-back and after a restart; a new memory never forgotten is `unbound`
in both (the control)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from tests.conftest import Workspace
from tests.lsp.client_buffers import ClientBuffers
from tests.lsp.conftest import G2, G3, Editor, bind_all
from tests.lsp.test_retire_actions import ASKS, offered_forget

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

OLD = "memories/old.md"
COPY = "memories/copy.md"  # the forgotten text saved under a path never bound
FRESH = "memories/fresh.md"


def codes(items: Sequence[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in items)


def cli_state(ws: Workspace, rel: str) -> tuple[str, str]:
    memory = ws.states()[rel]
    return memory["state"], memory["code"]


def drifted_old(ws: Workspace) -> str:
    """memories/old.md bound to src/a.py#g, whose code then drifted (so that the server
    shows a diagnostic on it until it is forgotten); its text."""
    ws.write("src/a.py", G2)
    ws.memory("old", "src/a.py#g", body="G returns two.")
    bind_all(ws)
    ws.write("src/a.py", G3)
    return ws.read(OLD)


def write_back(ws: Workspace, text: str) -> None:
    """The forgotten text saved again at its own path and at a new one; and a new memory."""
    ws.write(OLD, text)
    ws.write(COPY, text)
    ws.memory("fresh", "src/a.py#g", body="A new memory, never bound.")


async def agree(editor: Editor) -> None:
    """The server's diagnostics on the written-back memories and on a fresh one are what
    `moor check --format json` says of them."""
    ws = editor.ws
    await editor.one(FRESH, "unbound")  # control: never forgotten, never bound
    assert cli_state(ws, FRESH)[0] == "unbound"
    for rel in (OLD, COPY):
        assert cli_state(ws, rel) == ("retired", "tombstoned")
        items = await editor.diagnostics(rel, lambda items: bool(items))
        assert codes(items) == ["retired"], items
        assert "forgotten on" in items[0].message, items[0].message


async def test_forgotten_text_saved_back_after_a_cli_forget_is_retired_as_moor_check_says(
    editor: Editor,
) -> None:
    ws = editor.ws
    text = drifted_old(ws)
    await editor.start()
    await editor.one(OLD, "drifted")

    ws.moor("forget", OLD, "--why", "it never held", check=True)
    assert not await editor.diagnostics(OLD, lambda items: not items)  # the forget was seen
    write_back(ws, text)  # the editor saves the buffer it still held

    await agree(editor)


async def test_forgotten_text_saved_back_after_the_servers_forget_is_retired_as_moor_check_says(
    client: LanguageClient, ws: Workspace
) -> None:
    editor = Editor(client, ws, "emacs", client_capabilities("emacs"))  # keeps the buffer
    text = drifted_old(ws)
    ws.memory("other", "src/a.py#g", body="Another memory about g.")
    bind_all(ws)
    buffers = ClientBuffers(editor)
    await editor.start(ASKS)
    buffers.open(OLD)
    await offered_forget(editor)

    result = await editor.execute("moor.forget", str(ws.root / OLD), "it never held")
    assert result["done"], result
    assert not (ws.root / OLD).exists()
    write_back(ws, text)  # `:w` of the buffer the client kept open
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=editor.document(OLD))
    )

    await agree(editor)


async def test_forgotten_text_saved_back_is_retired_in_a_server_started_after_it(
    editor: Editor,
) -> None:
    ws = editor.ws
    text = drifted_old(ws)
    ws.moor("forget", OLD, "--why", "it never held", check=True)
    write_back(ws, text)
    await editor.start()

    await agree(editor)
