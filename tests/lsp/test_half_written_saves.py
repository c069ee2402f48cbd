"""The language server and a save written in two steps by another process: the file seen
between them is `unverified`, never `gone`; the finished save is drift (issue 9, item 10)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

import pytest
from lsprotocol import types

from tests.engine.test_half_written_saves import CODE, SAVED, TwoStepWriter
from tests.lsp.conftest import Editor, bind_all

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


async def test_a_stalled_save_is_shown_unverified_never_gone_and_the_finished_one_drifted(
    editor: Editor,
) -> None:
    ws = editor.ws
    code = ws.write("app/code.py", CODE)
    ws.memory("g", "app/code.py#g")
    bind_all(ws)
    await editor.start()
    await editor.execute("moor.check")
    assert await editor.now("memories/g.md") == []
    seen: list[str] = []

    def shows(state: str) -> Callable[[Sequence[types.Diagnostic]], bool]:
        def until(items: Sequence[types.Diagnostic]) -> bool:
            seen.extend(str(d.code) for d in items)
            return any(d.code == state for d in items)

        return until

    writer = TwoStepWriter(code, SAVED)  # the file is empty until it is released
    try:
        changing = await editor.diagnostics("memories/g.md", shows("unverified"))
        assert any("file_changing" in d.message or "emptied" in d.message for d in changing)
    finally:
        writer.finish()
    await editor.diagnostics("memories/g.md", shows("drifted"))
    assert "gone" not in seen
    with sqlite3.connect(ws.root / ".moor/journal.sqlite") as db:
        kinds = list(db.execute("SELECT kind, code FROM journal ORDER BY seq"))
    assert ("transition", "gone") not in kinds
    # Control: the finished save is journalled as the drift it is.
    assert ("transition", "drifted") in kinds
