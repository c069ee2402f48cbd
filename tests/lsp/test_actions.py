"""Quick fixes: reaffirm, follow, bind, open the code and show the diff since bound, run by
the real server."""

from __future__ import annotations

import pytest
from lsprotocol import types
from moor_store.journal import Journal
from pygls.exceptions import JsonRpcInvalidParams

from tests.lsp.client_buffers import ClientBuffers
from tests.lsp.conftest import G2, G3, Editor, bind_all, bound_retry, drifted_retry

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
    buffers = ClientBuffers(editor)
    await editor.start()
    drifted = await editor.one("memories/retry.md", "drifted")

    actions = await editor.actions("memories/retry.md", drifted)
    assert "Follow" not in " ".join(a.title for a in actions)  # nothing moved
    reaffirm = titled(actions, "Reaffirm")
    assert reaffirm.kind == types.CodeActionKind.QuickFix
    assert reaffirm.command is not None
    assert reaffirm.command.command == "moor.reaffirm"
    # The memory's absolute path: it names the root too (one server, several folders).
    assert list(reaffirm.command.arguments or []) == [str(ws.root.resolve() / "memories/retry.md")]

    # A client that supplies the reason itself (VS Code's input box) is not asked: the
    # server reaffirms, re-checks and clears the diagnostic (asking: test_reaffirm_reason).
    result = await editor.execute(
        "moor.reaffirm", *(reaffirm.command.arguments or []), "3 is the new retry budget"
    )
    assert result["refused"] == []
    assert buffers.questions == []
    assert list(await editor.diagnostics("memories/retry.md", lambda items: not items)) == []
    with Journal(ws.root / ".moor/journal.sqlite") as journal:
        entries = journal.entries(anchor="src/a.py#g")
    reaffirmed = [e for e in entries if e.kind == "revise" and e.code == "reaffirm"]
    assert [e.reason for e in reaffirmed] == ["3 is the new retry budget"]


async def test_follow_rewrites_the_moved_reference(editor: Editor) -> None:
    ws = editor.ws
    bound_retry(ws)
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


DIFF_FILE = ".moor/diffs/memories__retry.md.diff"


async def test_show_diff_since_bound_opens_the_unified_diff_of_the_drifted_symbol(
    editor: Editor,
) -> None:
    ws = editor.ws
    drifted_retry(ws)
    await editor.start()
    drifted = await editor.one("memories/retry.md", "drifted")

    show = titled(await editor.actions("memories/retry.md", drifted), "Show diff since bound")
    assert show.kind == types.CodeActionKind.QuickFix
    assert show.command is not None
    assert show.command.command == "moor.showDiff"
    memory = str(ws.root.resolve() / "memories/retry.md")
    assert list(show.command.arguments or []) == [memory, "src/a.py#g"]
    result = await editor.execute(show.command.command, *(show.command.arguments or []))

    diff = result["diff"]
    assert diff.startswith("# memories/retry.md — src/a.py#g: bound ")
    assert "-    return 2\n" in diff and "+    return 3\n" in diff
    saved = ws.root / DIFF_FILE
    assert saved.read_text(encoding="utf-8") == diff
    assert result["uri"] == saved.as_uri()
    assert [d.uri for d in editor.client.shown_documents] == [saved.as_uri()]
    assert editor.client.shown_documents[0].take_focus is True
    # Only read: the memory is still drifted, the lock untouched.
    assert [d.code for d in await editor.now("memories/retry.md")] == ["drifted"]


async def test_show_diff_is_not_offered_on_a_current_memory_but_is_once_it_drifts(
    editor: Editor,
) -> None:
    ws = editor.ws
    bound_retry(ws)
    await editor.start()
    reference = types.Range(  # the line `  - "src/a.py#g"` of the memory
        start=types.Position(line=2, character=0), end=types.Position(line=2, character=16)
    )

    async def offered() -> list[str]:
        result = await editor.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=editor.document("memories/retry.md"),
                range=reference,
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        return [a.title for a in result or []]

    assert await offered() == []  # current: no diagnostic, so no diff
    ws.write("src/a.py", G3)  # the same setup, drifted on disk
    await editor.one("memories/retry.md", "drifted")
    assert "Show diff since bound" in await offered()


async def test_show_diff_in_an_untrusted_workspace_answers_the_text_and_writes_no_file(
    editor: Editor,
) -> None:
    ws = editor.ws
    drifted_retry(ws)
    lock = (ws.root / "moor.lock").read_bytes()
    await editor.start({"trusted": False})
    drifted = await editor.one("memories/retry.md", "drifted")

    titles = [a.title for a in await editor.actions("memories/retry.md", drifted)]
    assert not any("Reaffirm" in t for t in titles), titles  # read-only …
    show = titled(await editor.actions("memories/retry.md", drifted), "Show diff")  # … reads
    assert show.command is not None
    result = await editor.execute(show.command.command, *(show.command.arguments or []))

    assert result["uri"] is None
    assert "-    return 2\n" in result["diff"] and "+    return 3\n" in result["diff"]
    assert not (ws.root / ".moor/diffs").exists()
    assert editor.client.shown_documents == []
    assert (ws.root / "moor.lock").read_bytes() == lock


async def test_show_diff_of_an_unchanged_anchor_says_so_rather_than_nothing(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", G2 + "\n\n" + "def h():\n    return 2\n")
    ws.memory("retry", ["src/a.py#g", "src/a.py#h"])
    bind_all(ws)
    ws.write("src/a.py", G3 + "\n\n" + "def h():\n    return 2\n")
    await editor.start()
    await editor.one("memories/retry.md", "drifted")

    result = await editor.execute("moor.showDiff", "memories/retry.md")  # every anchor

    diff = result["diff"]
    assert "# memories/retry.md — src/a.py#g: bound " in diff
    assert "+    return 3\n" in diff
    assert "# memories/retry.md — src/a.py#h: bound " in diff
    assert "# moor: src/a.py#h: unchanged since bound" in diff
    with pytest.raises(JsonRpcInvalidParams, match="no reference"):
        await editor.execute("moor.showDiff", "memories/retry.md", "src/a.py#nope")


LOAD = (
    "class Store:\n    def _load(self, key):\n        if key not in self._cache:\n"
    "            self._cache[key] = read(join(self.root, key)).strip()\n"
    "        return self._cache[key]\n"
)


async def test_gone_code_offers_to_follow_each_ranked_candidate(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/store.py", LOAD)
    ws.memory("load", "src/store.py#Store._load")
    bind_all(ws)
    ws.write("src/store.py", LOAD.replace("_load", "load").replace("_cache", "cache"))
    await editor.start()
    gone = await editor.one("memories/load.md", "gone")
    assert "perhaps now src/store.py#Store.load" in gone.message
    follow = titled(await editor.actions("memories/load.md", gone), "Follow to")
    assert follow.title.startswith("Follow to src/store.py#Store.load (")
    assert follow.command is not None
    result = await editor.execute(follow.command.command, *(follow.command.arguments or []))
    assert result["refused"] == []
    assert "src/store.py#Store.load" in ws.read("memories/load.md")
    # Followed, it is judged against the code it was bound to: the body changed.
    await editor.one("memories/load.md", "drifted")


async def test_a_typo_in_a_reference_offers_the_closest_one_as_an_edit(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", G2)
    ws.memory("typo", "src/a.py#gg")
    await editor.start()
    gone = await editor.one("memories/typo.md", "gone")
    assert "did you mean src/a.py#g?" in gone.message
    change = titled(await editor.actions("memories/typo.md", gone), "Change to")
    assert change.title == "Change to src/a.py#g"
    assert change.edit is not None and change.edit.changes is not None
    (edit,) = next(iter(change.edit.changes.values()))
    assert edit.new_text == '"src/a.py#g"'  # quoted, as the reference was written
    assert edit.range == gone.range
    # The edit is what fixes it: written to the file, the reference names the code.
    ws.write(
        "memories/typo.md", ws.read("memories/typo.md").replace('"src/a.py#gg"', edit.new_text)
    )
    await editor.one("memories/typo.md", "unbound")


async def test_the_actions_are_offered_anywhere_on_the_references_line(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", G2)
    ws.write("memories/retry.md", '---\nabout: ["src/a.py#g"]\n---\n# Retry\n\nText.\n')
    bind_all(ws)
    ws.write("src/a.py", G3)
    await editor.start()
    drifted = await editor.one("memories/retry.md", "drifted")
    assert drifted.range.start.line == 1 and drifted.range.start.character > 0

    async def titles_at(line: int, character: int, sent: list[types.Diagnostic]) -> list[str]:
        at = types.Position(line=line, character=character)
        result = await editor.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=editor.document("memories/retry.md"),
                range=types.Range(start=at, end=at),
                context=types.CodeActionContext(diagnostics=sent),
            )
        )
        return [a.title for a in result or []]

    # Column 1 of the `about:` line, where Neovim's sign is: the line's diagnostics are sent.
    at_sign = await titles_at(1, 0, [drifted])
    assert "Show diff since bound" in at_sign, at_sign
    assert "Show diff since bound" in await titles_at(1, 0, [])  # no context: its own
    # The control: the next line is not the reference's.
    assert "Show diff since bound" not in await titles_at(3, 0, [])
