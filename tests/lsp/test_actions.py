"""Quick fixes: reaffirm, follow, bind and open the code, run by the real server."""

from __future__ import annotations

import pytest
from lsprotocol import types
from moor_store.journal import Journal
from pygls.exceptions import JsonRpcInvalidParams

from tests.lsp.conftest import G2, G3, Editor, bind_all, drifted_retry

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


def titled(actions: list[types.CodeAction], word: str) -> types.CodeAction:
    matching = [a for a in actions if word in a.title]
    assert len(matching) == 1, [a.title for a in actions]
    return matching[0]


async def test_reaffirm_clears_the_drift_and_journals_the_reason(editor: Editor) -> None:
    ws = editor.ws
    drifted_retry(ws)
    await editor.start()
    drifted = await editor.one("memories/retry.md", "drifted")

    actions = await editor.actions("memories/retry.md", drifted)
    assert "Follow" not in " ".join(a.title for a in actions)  # nothing moved
    reaffirm = titled(actions, "Reaffirm")
    assert reaffirm.kind == types.CodeActionKind.QuickFix
    assert reaffirm.command is not None
    assert reaffirm.command.command == "moor.reaffirm"
    assert list(reaffirm.command.arguments or []) == ["memories/retry.md"]

    # The client must supply the reason: without one the server refuses …
    with pytest.raises(JsonRpcInvalidParams, match="needs a reason"):
        await editor.execute("moor.reaffirm", "memories/retry.md")
    assert [d.code for d in await editor.now("memories/retry.md")] == ["drifted"]
    # … and with one it reaffirms, re-checks and clears the diagnostic.
    result = await editor.execute(
        "moor.reaffirm", *(reaffirm.command.arguments or []), "3 is the new retry budget"
    )
    assert result["refused"] == []
    assert list(await editor.diagnostics("memories/retry.md", lambda items: not items)) == []
    with Journal(ws.root / ".moor/journal.sqlite") as journal:
        entries = journal.entries(anchor="src/a.py#g")
    reaffirmed = [e for e in entries if e.kind == "revise" and e.code == "reaffirm"]
    assert [e.reason for e in reaffirmed] == ["3 is the new retry budget"]


async def test_follow_rewrites_the_moved_reference(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", G2)
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)
    ws.write("src/a.py", "def other():\n    return 1\n")
    ws.write("src/b.py", G2)
    await editor.start()
    moved = await editor.one("memories/retry.md", "moved")

    actions = await editor.actions("memories/retry.md", moved)
    assert "Reaffirm" not in " ".join(a.title for a in actions)  # refused while moved
    follow = titled(actions, "Follow")
    assert follow.is_preferred
    assert follow.command is not None
    await editor.execute(follow.command.command, *(follow.command.arguments or []))

    assert '"src/b.py#g"' in ws.read("memories/retry.md")
    assert "src/a.py#g" not in ws.read("memories/retry.md")
    assert list(await editor.diagnostics("memories/retry.md", lambda items: not items)) == []


async def test_bind_records_an_unbound_memory(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", G2)
    ws.memory("retry", "src/a.py#g")
    await editor.start()
    unbound = await editor.one("memories/retry.md", "unbound")

    bind = titled(await editor.actions("memories/retry.md", unbound), "Bind")
    assert bind.command is not None
    await editor.execute(bind.command.command, *(bind.command.arguments or []))

    assert list(await editor.diagnostics("memories/retry.md", lambda items: not items)) == []
    assert "memories/retry.md" in (ws.root / "moor.lock").read_text(encoding="utf-8")


async def test_open_the_code_shows_the_symbol_in_the_editor(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", "import os\n\n\n" + G2)
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)
    ws.write("src/a.py", "import os\n\n\n" + G3)
    await editor.start()
    drifted = await editor.one("memories/retry.md", "drifted")

    # A cursor anywhere on the reference (a zero-width range) is enough.
    cursor = types.Range(start=drifted.range.end, end=drifted.range.end)
    result = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri("memories/retry.md")),
            range=cursor,
            context=types.CodeActionContext(diagnostics=[drifted]),
        )
    )
    assert result is not None
    show = titled([a for a in result if isinstance(a, types.CodeAction)], "Open")
    assert show.command is not None
    await editor.execute(show.command.command, *(show.command.arguments or []))

    assert len(editor.client.shown_documents) == 1
    shown = editor.client.shown_documents[0]
    assert shown.uri == editor.uri("src/a.py")
    assert shown.selection is not None
    assert shown.selection.start == types.Position(line=3, character=0)


async def test_no_action_is_offered_away_from_a_diagnostic(editor: Editor) -> None:
    ws = editor.ws
    drifted_retry(ws)
    await editor.start()
    drifted = await editor.one("memories/retry.md", "drifted")
    title_line = types.Position(line=drifted.range.start.line + 3, character=0)

    away = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri("memories/retry.md")),
            range=types.Range(start=title_line, end=title_line),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    on_it = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri("memories/retry.md")),
            range=drifted.range,
            context=types.CodeActionContext(diagnostics=[]),  # no data from the client
        )
    )
    assert away is None
    assert on_it is not None and any("Reaffirm" in a.title for a in on_it)
