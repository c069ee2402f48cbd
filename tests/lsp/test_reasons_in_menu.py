"""Where the client cannot be asked (eglot declares no `window.showMessage`, and a question
there dies with the request that raised it at eglot's 10 s request timeout), reasons are in
the code action menu: each prepared reason is an action that carries it, and writing one's
own is an edit that puts the reason line in the buffer. Nothing waits on the person."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from tests.conftest import Workspace
from tests.lsp.client_buffers import ClientBuffers, apply_text_edits
from tests.lsp.conftest import Editor, bind_all, drifted_retry
from tests.lsp.test_reaffirm_reason import WRITTEN, reasons

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

MEMORY = "memories/retry.md"


def eglot(client: LanguageClient, ws: Workspace) -> Editor:
    """pytest-lsp's recorded eglot (Emacs 29.1): no `window.showMessage`, as eglot 1.9."""
    capabilities = client_capabilities("emacs")
    assert capabilities.window is not None and capabilities.window.show_message is None
    return Editor(client, ws, "emacs", capabilities)


def titles(actions: list[types.CodeAction]) -> list[str]:
    return [a.title for a in actions]


async def test_eglot_gets_the_prepared_reasons_as_actions_and_is_never_asked(
    client: LanguageClient, ws: Workspace
) -> None:
    editor = eglot(client, ws)
    drifted_retry(ws)
    buffers = ClientBuffers(editor)
    await editor.start()
    buffers.open(MEMORY)
    drifted = await editor.one(MEMORY, "drifted")

    offered = await editor.actions(MEMORY, drifted)

    assert titles(offered)[:3] == [
        "Reaffirm: Reviewed the change: the memory still holds",
        "Reaffirm: Refactor only: behaviour unchanged",
        "Reaffirm with my own reason (a line to write it on)…",
    ], titles(offered)
    first = offered[0]
    assert first.command is not None
    result = await editor.execute(first.command.command, *(first.command.arguments or []))
    assert result["done"] and not result["refused"], result
    assert buffers.questions == []  # never asked: nothing waited on the person
    assert reasons(ws.root) == ["Reviewed the change: the memory still holds"]
    assert list(await editor.diagnostics(MEMORY, lambda items: not items)) == []


async def test_eglot_writes_its_own_reason_on_the_line_the_menus_edit_inserts(
    client: LanguageClient, ws: Workspace
) -> None:
    editor = eglot(client, ws)
    drifted_retry(ws)
    buffers = ClientBuffers(editor)
    await editor.start()
    buffers.open(MEMORY)
    drifted = await editor.one(MEMORY, "drifted")
    saved = ws.read(MEMORY)

    [own] = [a for a in await editor.actions(MEMORY, drifted) if "my own reason" in a.title]

    assert own.command is None and own.edit is not None and own.edit.changes is not None
    [(_uri, edits)] = own.edit.changes.items()
    text = apply_text_edits(buffers.text(MEMORY), list(edits), editor.encoding)  # eglot applies it
    lines = text.splitlines()
    assert lines[4] == "<!-- moor reaffirm because:  -->", lines
    lines[4] = "<!-- moor reaffirm because: three retries are still the budget -->"
    buffers.type(MEMORY, "\n".join(lines) + "\n")
    line = types.Range(
        start=types.Position(line=4, character=0), end=types.Position(line=4, character=0)
    )
    actions = await editor.until(
        lambda: editor.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=editor.document(MEMORY),
                range=line,
                context=types.CodeActionContext(diagnostics=[]),
            )
        ),
        lambda found: found is not None and WRITTEN in titles(found),
    )
    [written] = [a for a in actions if a.title == WRITTEN]
    assert written.command is not None
    result = await editor.execute(written.command.command, *(written.command.arguments or []))
    assert result["done"], result
    assert buffers.questions == []
    assert reasons(ws.root) == ["three retries are still the budget"]
    assert buffers.text(MEMORY) == ws.read(MEMORY) == saved  # the line is gone again


async def test_eglot_forgets_and_supersedes_with_reasons_from_the_menu(
    client: LanguageClient, ws: Workspace
) -> None:
    editor = eglot(client, ws)
    ws.write("src/a.py", "def g():\n    return 2\n")
    ws.memory("retry", "src/a.py#g")
    ws.memory("budget", "src/a.py#g")
    bind_all(ws)
    buffers = ClientBuffers(editor)
    await editor.start()
    buffers.open(MEMORY)
    head = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
    )

    offered = await editor.until(
        lambda: editor.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=editor.document(MEMORY),
                range=head,
                context=types.CodeActionContext(diagnostics=[]),
            )
        ),
        lambda found: found is not None and any("Forget" in t for t in titles(found)),
    )

    by_title = {a.title: a for a in offered}
    forget = by_title[f"Forget {MEMORY}: it never held…"]
    assert forget.command is None and forget.edit is not None  # the reason line, no question
    prepared = [
        a for a in offered if a.title.startswith(f"Supersede {MEMORY} by memories/budget.md: ")
    ]
    assert len(prepared) == 1 and prepared[0].command is not None, titles(offered)
    assert f"Supersede {MEMORY} by memories/budget.md with my own reason…" in by_title
    result = await editor.execute(
        prepared[0].command.command, *(prepared[0].command.arguments or [])
    )
    assert result["done"], result
    assert buffers.questions == []


async def test_a_client_that_can_be_asked_still_gets_one_reaffirm_that_asks(
    editor: Editor,
) -> None:
    # The control: VS Code and Neovim declare window.showMessage; their menu is unchanged.
    drifted_retry(editor.ws)
    await editor.start()
    drifted = await editor.one(MEMORY, "drifted")
    offered = titles(await editor.actions(MEMORY, drifted))
    assert "Reaffirm: the memory still holds for the code as it is now…" in offered, offered
    assert not any("my own reason" in t for t in offered), offered
