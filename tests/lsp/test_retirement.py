"""Retired and tombstoned memories in the editor (issue 11.2, 11.3): struck through
(`Deprecated`), a hint for a retired one, a warning for forgotten text written back."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import G2, G3, Editor, bind_all

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


async def test_a_retired_memory_is_one_struck_through_hint_whatever_its_code_did(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", G2)
    ws.memory("old", "src/a.py#g")
    ws.memory("new", "src/a.py#g")
    bind_all(ws)
    ws.moor("supersede", "memories/old.md", "--by", "memories/new.md", "--why", "x", check=True)
    ws.write("src/a.py", G3)  # the code both are about drifted
    await editor.start()

    # Control: the live memory about the same code is warned about its drift.
    drifted = await editor.one("memories/new.md", "drifted")
    assert drifted.severity == types.DiagnosticSeverity.Warning
    items = await editor.diagnostics("memories/old.md", lambda items: bool(items))
    assert [d.code for d in items] == ["retired"]  # no drift warning on a retired memory
    [retired] = items
    assert retired.severity == types.DiagnosticSeverity.Hint
    assert list(retired.tags or []) == [types.DiagnosticTag.Deprecated]
    assert "superseded by memories/new.md" in retired.message


async def test_a_file_saying_what_was_forgotten_is_flagged_with_the_tombstone(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", G2)
    ws.memory("wrong", "src/a.py#g", body="G returns two, always.")
    bind_all(ws)
    ws.moor("forget", "memories/wrong.md", "--why", "it never held", check=True)
    ws.memory("again", "src/a.py#g", body="g returns TWO -- always")
    ws.memory("fine", "src/a.py#g", body="G returns two today.")
    ws.moor("bind", "memories/fine.md", check=True)  # binding `again` is refused (its text)
    await editor.start()

    flagged = await editor.one("memories/again.md", "retired")

    assert flagged.severity == types.DiagnosticSeverity.Warning
    assert list(flagged.tags or []) == [types.DiagnosticTag.Deprecated]
    assert "forgotten on" in flagged.message and "it never held" in flagged.message
    assert await editor.now("memories/fine.md") == []  # control: another text is not flagged
