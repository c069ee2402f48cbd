"""Reaffirm gets its reason in any client: the server asks (`window/showMessageRequest`)
with prepared reasons, or lets the person write one on a line in the open memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from moor_store.journal import Journal

from tests.lsp.client_buffers import ClientBuffers
from tests.lsp.conftest import G2, Editor, bound_retry, drifted_retry

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

MEMORY = "memories/retry.md"
WRITE_OWN = "Write my own reason…"
WRITTEN = "Reaffirm with the reason written here"


def reasons(ws_root: object) -> list[str | None]:
    with Journal(ws_root / ".moor/journal.sqlite") as journal:  # type: ignore[operator]
        entries = journal.entries(anchor="src/a.py#g")
    return [e.reason for e in entries if e.kind == "revise" and e.code == "reaffirm"]


async def test_reaffirm_without_a_reason_asks_and_journals_the_prepared_reason_picked(
    editor: Editor,
) -> None:
    drifted_retry(editor.ws)
    buffers = ClientBuffers(editor)
    buffers.pick = lambda params: (params.actions or [])[0].title
    await editor.start()
    await editor.one(MEMORY, "drifted")

    result = await editor.execute("moor.reaffirm", MEMORY)

    [asked] = buffers.questions
    assert asked.type == types.MessageType.Info
    assert asked.message == (
        f"Reaffirm {MEMORY}: body of g changed since bound. Why does it still hold?"
    )
    titles = [action.title for action in asked.actions or []]
    assert titles == [
        "Reviewed the change: the memory still holds",
        "Refactor only: behaviour unchanged",
        WRITE_OWN,
        "Cancel",
    ]
    assert result["refused"] == [] and result["done"], result
    # The same write result `moor reaffirm --format json` and MCP's memory_reaffirm answer.
    written = result["written"]
    assert (written["action"], written["ok"], written["path"]) == ("reaffirm", True, MEMORY)
    assert written["done"] == result["done"] and written["refused"] == []
    assert reasons(editor.ws.root) == ["Reviewed the change: the memory still holds"]
    assert list(await editor.diagnostics(MEMORY, lambda items: not items)) == []


@pytest.mark.parametrize("answer", [None, "Cancel"])
async def test_a_dismissed_or_cancelled_question_changes_nothing_and_answers_a_result(
    editor: Editor, answer: str | None
) -> None:
    drifted_retry(editor.ws)
    buffers = ClientBuffers(editor)
    buffers.pick = lambda _params: answer
    await editor.start()
    await editor.one(MEMORY, "drifted")
    lock = (editor.ws.root / "moor.lock").read_bytes()

    result = await editor.execute("moor.reaffirm", MEMORY)

    assert result == {"done": [], "refused": [], "cancelled": True}
    assert len(buffers.questions) == 1
    assert (editor.ws.root / "moor.lock").read_bytes() == lock
    assert reasons(editor.ws.root) == []
    assert [d.code for d in await editor.now(MEMORY)] == ["drifted"]
    # The control: the second prepared reason, picked, is journalled.
    buffers.pick = lambda params: (params.actions or [])[1].title
    result = await editor.execute("moor.reaffirm", MEMORY)
    assert result["done"] and not result["refused"], result
    assert reasons(editor.ws.root) == ["Refactor only: behaviour unchanged"]
    assert (editor.ws.root / "moor.lock").read_bytes() != lock


async def test_writing_ones_own_reason_inserts_a_line_whose_action_reaffirms_and_removes_it(
    editor: Editor,
) -> None:
    ws = editor.ws
    drifted_retry(ws)
    buffers = ClientBuffers(editor)
    buffers.pick = lambda _params: WRITE_OWN
    await editor.start()
    buffers.open(MEMORY)
    drifted = await editor.one(MEMORY, "drifted")
    saved = ws.read(MEMORY)
    lock = (ws.root / "moor.lock").read_bytes()

    result = await editor.execute("moor.reaffirm", MEMORY)

    assert result["done"] == [] and "line 5" in result["next"], result
    lines = buffers.text(MEMORY).splitlines()
    assert lines[4] == "<!-- moor reaffirm because:  -->", lines
    assert ws.read(MEMORY) == saved  # only the buffer has the line
    assert (ws.root / "moor.lock").read_bytes() == lock
    # The cursor is put where the reason goes.
    assert editor.client.shown_documents[-1].selection is not None
    assert editor.client.shown_documents[-1].selection.start.line == 4
    # Nothing written yet: no action to reaffirm with it, and no reaffirm on the unsaved
    # buffer either …
    line = types.Range(
        start=types.Position(line=4, character=0), end=types.Position(line=4, character=0)
    )
    titles = [a.title for a in await editor.actions(MEMORY, drifted)]
    assert WRITTEN not in titles and not any("Reaffirm:" in t for t in titles), titles
    # … once written, the action is there (anywhere in the memory).
    lines[4] = "<!-- moor reaffirm because: three retries are still the budget -->"
    buffers.type(MEMORY, "\n".join(lines) + "\n")
    actions = await editor.until(
        lambda: editor.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=editor.document(MEMORY),
                range=line,
                context=types.CodeActionContext(diagnostics=[]),
            )
        ),
        lambda found: found is not None and any(a.title == WRITTEN for a in found),
    )
    [written] = [a for a in actions if a.title == WRITTEN]
    assert isinstance(written, types.CodeAction) and written.command is not None
    # The memory's absolute path, as every code action carries it (it names the root).
    memory = str(ws.root.resolve() / MEMORY)
    assert list(written.command.arguments or []) == [memory, "three retries are still the budget"]

    result = await editor.execute(written.command.command, *(written.command.arguments or []))

    assert result["done"] and not result["refused"], result
    assert reasons(ws.root) == ["three retries are still the budget"]
    assert buffers.text(MEMORY) == ws.read(MEMORY) == saved  # the line is gone again
    assert list(await editor.diagnostics(MEMORY, lambda items: not items)) == []


async def test_a_memory_saved_with_its_reason_line_is_refused_with_a_message(
    editor: Editor,
) -> None:
    ws = editor.ws
    drifted_retry(ws)
    clean = ws.read(MEMORY)
    head, tail = clean.split("---\n", 2)[1:]
    ws.write_bytes(
        MEMORY, f"---\n{head}---\n<!-- moor reaffirm because: it holds -->\n{tail}".encode()
    )
    buffers = ClientBuffers(editor)
    await editor.start()
    buffers.open(MEMORY)
    lock = (ws.root / "moor.lock").read_bytes()

    result = await editor.execute("moor.reaffirm", MEMORY, "it holds")

    assert result["done"] == [] and "saved with the reason line" in result["refused"][0]
    assert any("saved with the reason line" in m.message for m in editor.client.messages)
    assert (ws.root / "moor.lock").read_bytes() == lock
    assert buffers.applied == []
    # The control: without the line in the file, the same command reaffirms.
    ws.write_bytes(MEMORY, clean.encode())
    buffers.type(MEMORY, clean)
    await editor.diagnostics(MEMORY, lambda items: [d.code for d in items] == ["drifted"])
    result = await editor.execute("moor.reaffirm", MEMORY, "it holds")
    assert result["done"] and not result["refused"], result


async def test_a_memory_that_cannot_be_reaffirmed_is_refused_without_asking(
    editor: Editor,
) -> None:
    ws = editor.ws
    bound_retry(ws)
    ws.write("src/a.py", "def other():\n    return 1\n")
    ws.write("src/b.py", G2)  # g moved: reaffirm is blocked until it is followed
    buffers = ClientBuffers(editor)
    buffers.pick = lambda params: (params.actions or [])[0].title
    await editor.start()
    await editor.one(MEMORY, "moved")

    result = await editor.execute("moor.reaffirm", MEMORY)

    assert result["done"] == [] and "moor follow" in result["refused"][0], result
    assert buffers.questions == []
    # The control: followed (its code changed on the way: drifted), the question is asked.
    editor.ws.write("src/b.py", G2.replace("2", "5"))
    await editor.execute("moor.follow", MEMORY)
    await editor.one(MEMORY, "drifted")
    result = await editor.execute("moor.reaffirm", MEMORY)
    assert len(buffers.questions) == 1 and result["done"], result


async def test_a_reaffirm_that_could_not_journal_its_reason_says_nothing_was_recorded(
    editor: Editor, tmp_path: Path
) -> None:
    ws = editor.ws
    drifted_retry(ws)
    await editor.start()
    await editor.one(MEMORY, "drifted")
    # The control: with its journal, a reaffirm records its reason and tells nothing more.
    result = await editor.execute("moor.reaffirm", MEMORY, "three retries are still the budget")
    assert result["done"] and result["refused"] == result.get("warnings", []) == [], result
    assert reasons(ws.root) == ["three retries are still the budget"]
    ws.write("src/a.py", "def g():\n    return 4\n")  # drifted again
    await editor.one(MEMORY, "drifted")
    for name in ("journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"):
        (ws.root / ".moor" / name).unlink(missing_ok=True)
    elsewhere = tmp_path / "elsewhere.sqlite"
    (ws.root / ".moor" / "journal.sqlite").symlink_to(elsewhere)
    messages = len(editor.client.messages)

    result = await editor.execute("moor.reaffirm", MEMORY, "four retries now")

    assert result["done"] and not result["refused"], result  # moor.lock was written
    shown = [m.message for m in editor.client.messages[messages:]]
    told = (
        "the journal was not opened: .moor/journal.sqlite is a symbolic link; "
        "this run records nothing"
    )
    assert f"moor reaffirm: {told}" in shown, shown  # as `moor reaffirm` says on stderr
    assert result.get("warnings") == [told], result
    assert not elsewhere.exists()
