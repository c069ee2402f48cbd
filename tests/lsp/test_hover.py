"""Hover on an `about:` reference: trust state, journal history, questions, diff."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import Editor, bind_all

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


async def test_hover_shows_state_history_questions_and_diff(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", "def g():\n    return 2\n")
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)
    ws.write("src/a.py", "def g():\n    return 3\n")
    await editor.start()
    drifted = await editor.one("memories/retry.md", "drifted")
    await editor.execute("moor.reaffirm", "memories/retry.md", "three is fine")
    ws.write("src/a.py", "def g():\n    return 4\n")
    drifted = await editor.one("memories/retry.md", "drifted")

    hover = await editor.hover("memories/retry.md", drifted.range.start.line, 6)

    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert "`src/a.py#g` — **drifted**" in text
    history = text[text.index("**History**") : text.index("**When this changes, ask**")]
    assert history.index("bound") < history.index("**drifted**")
    assert history.index("**drifted**") < history.index("“three is fine”")
    assert "- Does it still hold?" in text
    diff = text[text.index("```diff") :]
    assert "-    return 3" in diff  # since the reaffirmation, not since the first bind
    assert "+    return 4" in diff
    assert "-    return 2" not in diff
    assert hover.range == drifted.range


async def test_no_hover_off_a_reference(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", "def g():\n    return 2\n")
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)
    await editor.start()

    on_title = await editor.hover("memories/retry.md", 4, 2)
    on_reference = await editor.hover("memories/retry.md", 2, 6)

    assert on_title is None
    assert on_reference is not None
    assert isinstance(on_reference.contents, types.MarkupContent)
    assert "**current**" in on_reference.contents.value
