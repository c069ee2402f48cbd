"""The language server and special files in the workspace — a memory or a code file that
is a FIFO, or a link out of the workspace — where it reads them: a memory's text for its
diagnostics' positions, an open code buffer compared with the file on disk, a memory's
file compared with its open buffer. Each is refused at once, never waited on: every test
then sees another memory checked (the control that the server is still working), and a
regression fails on the harness's timeout instead of hanging."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.client_buffers import ClientBuffers
from tests.lsp.conftest import G2, G3, TIMEOUT, Editor, bind_all, bound_retry, drifted_retry

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

RETRY = "memories/retry.md"
PIPE = "memories/pipe.md"
H = "def h():\n    return 1\n"


async def test_a_memory_that_is_a_fifo_is_diagnosed_and_the_others_are_still_checked(
    editor: Editor,
) -> None:
    drifted_retry(editor.ws)
    os.mkfifo(editor.ws.root / PIPE)
    await editor.start()
    await editor.one(RETRY, "drifted")  # control: the check that met the FIFO finished
    refused = await editor.one(PIPE, "invalid")
    assert "FIFO" in refused.message, refused


async def test_a_memory_linked_outside_is_diagnosed_and_its_text_never_read(
    editor: Editor, tmp_path: Path
) -> None:
    drifted_retry(editor.ws)
    outside = tmp_path / "theirs.md"
    outside.write_text(editor.ws.read(RETRY), encoding="utf-8")
    os.symlink(outside, editor.ws.root / "memories/linked.md")
    await editor.start()
    await editor.one(RETRY, "drifted")  # control: the same text inside is read
    refused = await editor.one("memories/linked.md", "invalid")
    assert "outside" in refused.message, refused


async def test_a_code_file_that_is_a_fifo_opened_in_the_editor_is_unverified_never_waited_on(
    editor: Editor,
) -> None:
    ws = editor.ws
    bound_retry(ws)
    ws.write("src/b.py", H)
    ws.memory("h", "src/b.py#h")
    bind_all(ws)
    await editor.start()
    await editor.execute("moor.check")
    os.unlink(ws.root / "src/a.py")
    os.mkfifo(ws.root / "src/a.py")
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=editor.uri("src/a.py"), language_id="python", version=1, text=G2
            )
        )
    )
    await editor.one(RETRY, "unverified")
    # Control: the engine compared the buffer with the FIFO and went on to check more.
    ws.write("src/b.py", H.replace("1", "2"))
    await editor.one("memories/h.md", "drifted")


async def test_reaffirming_a_memory_that_is_a_fifo_with_its_buffer_open_is_refused_at_once(
    editor: Editor,
) -> None:
    ws = editor.ws
    drifted_retry(ws)
    text = ws.read(RETRY)
    os.mkfifo(ws.root / PIPE)
    buffers = ClientBuffers(editor)
    await editor.start()
    await editor.one(PIPE, "invalid")
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=editor.uri(PIPE), language_id="markdown", version=1, text=text
            )
        )
    )
    # Bounded: a server blocked on the FIFO would never answer.
    result = await asyncio.wait_for(editor.execute("moor.reaffirm", PIPE, "it holds"), TIMEOUT)
    assert result["done"] == [] and result["refused"], result
    # Control: the same reaffirm of a regular memory is done.
    buffers.open(RETRY)
    result = await editor.execute("moor.reaffirm", RETRY, "it holds")
    assert result["done"] and not result["refused"], result
    assert G3 in ws.read("src/a.py")


async def test_go_to_definition_into_a_fifo_or_a_link_leading_out_answers_nothing_at_once(
    editor: Editor, tmp_path: Path
) -> None:
    ws = editor.ws
    ws.write("src/a.py", G2)
    os.mkfifo(ws.root / "src/pipe.py")
    outside = tmp_path / "theirs.py"
    outside.write_text(G2, encoding="utf-8")
    os.symlink(outside, ws.root / "src/out.py")
    line = 'about: ["src/a.py#g", "src/pipe.py#g", "src/out.py#g"]'
    ws.write("memories/nav.md", f"---\n{line}\n---\n# Navigation\n")
    await editor.start()
    editor.open("memories/nav.md")

    async def jump(ref: str) -> object:
        character = editor.units(line[: line.index(ref) + 3])
        return await asyncio.wait_for(editor.definition("memories/nav.md", 1, character), TIMEOUT)

    found = await jump("src/a.py#g")  # control: a regular file inside is read and jumped to
    assert isinstance(found, list) and found[0].target_uri == editor.uri("src/a.py")
    assert await jump("src/pipe.py#g") is None
    assert await jump("src/out.py#g") is None
