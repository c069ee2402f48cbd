"""After a forget the memory's buffer is closed, so a habitual save cannot write it back;
a forgotten memory written back anyway is offered Restore, on its first line and on the
diagnostic that says it was forgotten."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from tests.conftest import Workspace
from tests.lsp.client_buffers import ClientBuffers
from tests.lsp.conftest import G2, Editor, bind_all
from tests.lsp.test_retire_actions import ASKS, offered_forget, titles

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

OLD = "memories/old.md"
RESTORE = f"Restore {OLD}: it holds after all…"


def two_about_g(ws: Workspace) -> None:
    ws.write("src/a.py", G2)
    ws.memory("old", "src/a.py#g", body="G returns two.")
    ws.memory("new", "src/a.py#g", body="G returns two, and only two.")
    bind_all(ws)


async def test_forget_closes_the_forgotten_memorys_buffer_where_the_client_deletes_files(
    editor: Editor,
) -> None:
    two_about_g(editor.ws)
    buffers = ClientBuffers(editor)
    await editor.start(ASKS)
    buffers.open(OLD)
    buffers.open("memories/new.md")
    await offered_forget(editor)
    operations = editor.capabilities.workspace.workspace_edit.resource_operations  # type: ignore[union-attr]
    assert operations and types.ResourceOperationKind.Delete in operations

    result = await editor.execute("moor.forget", str(editor.ws.root / OLD), "it never held")

    assert result["done"], result
    [deleted] = buffers.deleted
    assert deleted.uri == editor.uri(OLD)
    assert deleted.options is not None and deleted.options.ignore_if_not_exists
    assert "memories/new.md" in str(buffers.texts)  # control: the other buffer stays open


async def test_a_client_that_deletes_no_files_is_told_not_to_save_the_forgotten_buffer(
    client: LanguageClient, ws: Workspace
) -> None:
    editor = Editor(client, ws, "emacs", client_capabilities("emacs"))  # eglot: no deletes
    two_about_g(ws)
    buffers = ClientBuffers(editor)
    await editor.start(ASKS)
    buffers.open(OLD)
    await offered_forget(editor)

    result = await editor.execute("moor.forget", str(ws.root / OLD), "it never held")

    assert result["done"], result
    assert buffers.deleted == []
    told = [m.message for m in client.messages if "close its buffer without saving" in m.message]
    assert told and "moor restore memories/old.md" in told[0], client.messages


async def test_a_retired_memory_is_offered_restore_on_the_diagnostic_that_says_so(
    editor: Editor,
) -> None:
    ws = editor.ws
    two_about_g(ws)
    await editor.start(ASKS)
    await offered_forget(editor)
    new = str(ws.root / "memories/new.md")
    done = await editor.execute("moor.supersede", str(ws.root / OLD), new, "new says it better")
    assert done["done"], done

    diagnostic = await editor.one(OLD, "retired")
    assert "restore" in diagnostic.message, diagnostic.message
    on_diagnostic = [a.title for a in await editor.actions(OLD, diagnostic)]
    assert RESTORE in on_diagnostic, on_diagnostic
    assert RESTORE not in await titles(editor, "memories/new.md")  # control: a live memory

    result = await editor.execute("moor.restore", str(ws.root / OLD), "it held after all")

    assert result["done"], result
    assert list(await editor.diagnostics(OLD, lambda items: not items)) == []
