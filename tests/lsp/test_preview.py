"""Unsaved edits in an open code buffer preview the drift a save would cause, and write
nothing; `moor.check` checks everything from scratch."""

from __future__ import annotations

import pytest
from lsprotocol import types
from moor_store.journal import Journal

from tests.lsp.conftest import G2, G3, Editor, bind_all, bound_retry, drifted_retry

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]
PREVIEW = "(unsaved changes in the editor)"


def change(editor: Editor, rel: str, text: str, version: int) -> None:
    editor.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=editor.uri(rel), version=version
            ),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def transitions(editor: Editor, anchor: str) -> int:
    with Journal(editor.ws.root / ".moor/journal.sqlite") as journal:
        return sum(1 for e in journal.entries() if e.anchor == anchor and e.kind == "transition")


async def test_an_unsaved_edit_previews_drift_without_touching_the_journal_or_the_lock(
    editor: Editor,
) -> None:
    ws = editor.ws
    bound_retry(ws)
    lock = ws.read("moor.lock")
    await editor.start()
    await editor.execute("moor.check")  # answers once the workspace is checked
    assert await editor.now("memories/retry.md") == []
    editor.open("src/a.py")
    change(editor, "src/a.py", G3, 2)  # typed, not saved

    drifted = await editor.one("memories/retry.md", "drifted")
    assert drifted.message.endswith(PREVIEW)
    assert isinstance(drifted.data, dict) and drifted.data.get("preview") is True
    titles = [a.title for a in await editor.actions("memories/retry.md", drifted)]
    assert not any(t.startswith("Reaffirm") for t in titles)  # it would accept the disk
    assert ws.read("moor.lock") == lock and ws.read("src/a.py") == G2
    assert transitions(editor, "src/a.py#g") == 0

    # Undone in the buffer: the file on disk holds again.
    change(editor, "src/a.py", G2, 3)
    assert not await editor.diagnostics("memories/retry.md", lambda items: not items)
    assert transitions(editor, "src/a.py#g") == 0
    # Control: the same edit saved is real drift, journalled, not a preview.
    change(editor, "src/a.py", G3, 4)
    await editor.one("memories/retry.md", "drifted")
    ws.write("src/a.py", G3)
    editor.client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=editor.document("src/a.py"))
    )
    saved = await editor.diagnostics(
        "memories/retry.md",
        lambda items: any(d.code == "drifted" and not d.message.endswith(PREVIEW) for d in items),
    )
    assert isinstance(saved[0].data, dict) and "preview" not in saved[0].data
    await editor.until(lambda: _count(editor), lambda count: count == 1)


async def _count(editor: Editor) -> int:
    return transitions(editor, "src/a.py#g")


async def test_closing_an_unsaved_buffer_gives_the_memory_back_its_state_on_disk(
    editor: Editor,
) -> None:
    ws = editor.ws
    drifted_retry(ws)  # on disk: drifted
    await editor.start()
    await editor.one("memories/retry.md", "drifted")
    editor.open("src/a.py")
    change(editor, "src/a.py", G2, 2)  # the buffer puts the bound code back
    assert not await editor.diagnostics("memories/retry.md", lambda items: not items)
    editor.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=editor.document("src/a.py"))
    )
    after = await editor.one("memories/retry.md", "drifted")
    assert not after.message.endswith(PREVIEW)


async def test_check_workspace_answers_the_counts_and_updates_diagnostics(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", G2)
    ws.memory("retry", "src/a.py#g")
    ws.memory("other", "src/a.py#g")
    bind_all(ws)
    await editor.start()
    answer = await editor.execute("moor.check")
    assert await editor.now("memories/retry.md") == []
    assert answer["memories"] == 2 and answer["attention"] == 0
    assert answer["summary"] == {"current": 2}
    # Control: after a change the same command counts it.
    ws.write("src/a.py", G3)
    answer = await editor.execute("moor.check")
    assert answer["summary"] == {"drifted": 2} and answer["attention"] == 2
    await editor.one("memories/retry.md", "drifted")


async def test_the_hover_and_show_diff_show_the_code_as_the_unsaved_buffer_has_it(
    editor: Editor,
) -> None:
    ws = editor.ws
    bound_retry(ws)
    await editor.start()
    await editor.execute("moor.check")
    # Control: saved code unchanged, the hover says so.
    hover = await editor.hover("memories/retry.md", 2, 6)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "unchanged since bound" in hover.contents.value
    editor.open("src/a.py")
    change(editor, "src/a.py", G3, 2)  # typed, not saved
    drifted = await editor.one("memories/retry.md", "drifted")

    hover = await editor.hover("memories/retry.md", drifted.range.start.line, 6)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    diff = hover.contents.value[hover.contents.value.index("```diff") :]
    assert "src/a.py#g (unsaved, in the editor)" in diff
    assert "-    return 2" in diff and "+    return 3" in diff
    shown = await editor.execute("moor.showDiff", "memories/retry.md", "src/a.py#g")
    assert "(unsaved, in the editor)" in shown["diff"] and "+    return 3" in shown["diff"]
    assert ws.read("src/a.py") == G2
