"""The language server and a save written in two steps by another process: the empty
file seen between them is waited for, never shown or journalled as `gone`; the finished
save is drift (issue 9, item 10)."""

from __future__ import annotations

import asyncio
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


async def test_a_stalled_save_is_waited_for_never_shown_gone_and_the_finished_one_drifted(
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

    # The writer empties the file, dated "just now" however slowly anything starts, and
    # writes the rest as soon as a reader has read the empty file: the server's watcher,
    # which reads a changed file to parse it ahead. (Were the machine so slow that the
    # server read it only after its check, this run would prove less, not fail.)
    writer = TwoStepWriter(code, SAVED)
    await asyncio.get_running_loop().run_in_executor(None, writer.finish)
    seen.extend(str(d.code) for d in await editor.now("memories/g.md"))
    await editor.diagnostics("memories/g.md", shows("drifted"))
    assert "gone" not in seen

    async def journalled() -> list[tuple[str, str]]:
        with sqlite3.connect(ws.root / ".moor/journal.sqlite") as db:
            return list(db.execute("SELECT kind, code FROM journal ORDER BY seq"))

    # Control: the finished save is journalled as the drift it is. (The server journals a
    # check just after publishing it, so the row may land a moment after the diagnostic.)
    kinds = await editor.until(journalled, lambda rows: ("transition", "drifted") in rows)
    assert ("transition", "gone") not in kinds
