"""Links between memories in the editor, through the protocol: a link to a memory that does
not exist and a `contradicts` of a current memory are diagnostics on the link itself (kept
fresh as the other memory's state changes), and the hover on code shows each memory's links
and cobound memories."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import CODE, Editor, bind_all

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


def linked(about: str, relation: str, *targets: str) -> str:
    listed = "".join(f"    - {target}\n" for target in targets)
    return f"---\nabout:\n  - {about}\nlinks:\n  {relation}:\n{listed}---\n# Linked\n\nText.\n"


async def test_a_link_to_a_missing_memory_is_a_diagnostic_with_did_you_mean(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.memory("retry", "src/a.py#g")
    ws.write(
        "memories/see.md",
        linked("src/a.py#h", "see-also", "memories/retry.md", "memories/retyr.md"),
    )
    bind_all(ws)
    await editor.start()

    missing = await editor.one("memories/see.md", "missing_link")
    assert missing.range.start == types.Position(line=6, character=6)
    assert missing.severity == types.DiagnosticSeverity.Warning
    assert "did you mean memories/retry.md?" in missing.message
    # Control: the correct link on line 5 has none.
    items = await editor.diagnostics("memories/see.md", lambda items: True)
    assert [d.range.start.line for d in items] == [6]


async def test_contradicting_a_current_memory_is_flagged_until_it_drifts(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.memory("retry", "src/a.py#g")
    ws.write("memories/against.md", linked("src/a.py#h", "contradicts", "memories/retry.md"))
    bind_all(ws)
    await editor.start()

    flagged = await editor.one("memories/against.md", "contradicts_current")
    assert flagged.range.start.line == 5
    assert "contradicts memories/retry.md, which is current" in flagged.message

    # The contradicted memory drifts: the finding goes, though against.md did not change.
    ws.write("src/a.py", CODE.replace("return 2", "return 7", 1))
    await editor.one("memories/retry.md", "drifted")
    cleared = await editor.diagnostics(
        "memories/against.md", lambda items: not any(d.code == "contradicts_current" for d in items)
    )
    assert list(cleared) == []


async def test_hover_on_code_shows_links_and_cobound_memories(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.memory("retry", "src/a.py#g")
    ws.memory("logged", "src/a.py#g")
    ws.write("memories/more.md", linked("src/a.py#h", "elaborates", "memories/retry.md"))
    bind_all(ws)
    await editor.start()

    hover = await editor.hover("src/a.py", 0, 4)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    shown = hover.contents.value
    assert "← elaborates `memories/more.md`" in shown
    assert "cobound: `memories/logged.md`" in shown
    # Control: h's memory has the link the other way, and no cobound memory.
    other = await editor.hover("src/a.py", 4, 4)
    assert other is not None and isinstance(other.contents, types.MarkupContent)
    assert "→ elaborates `memories/retry.md`" in other.contents.value
    assert "cobound" not in other.contents.value


async def test_hover_on_a_reference_shows_the_memorys_links_and_who_else_is_bound_there(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.memory("retry", "src/a.py#g")
    ws.memory("logged", "src/a.py#g")
    ws.write(
        "memories/more.md",
        linked("src/a.py#h", "see-also", "memories/retry.md", "memories/nowhere.md"),
    )
    bind_all(ws)
    await editor.start()
    await editor.one("memories/more.md", "missing_link")  # the first check is done

    on_g = await editor.hover("memories/retry.md", 2, 6)
    assert on_g is not None and isinstance(on_g.contents, types.MarkupContent)
    assert "**Also bound here**: `memories/logged.md`" in on_g.contents.value
    assert "**Links**" not in on_g.contents.value  # control: retry.md links to nothing

    on_h = await editor.hover("memories/more.md", 2, 6)
    assert on_h is not None and isinstance(on_h.contents, types.MarkupContent)
    shown = on_h.contents.value
    assert "- → see-also `memories/retry.md`\n" in shown + "\n"
    assert "- → see-also `memories/nowhere.md` (no such memory)" in shown
    assert "Also bound here" not in shown  # control: nobody else is bound to h


async def test_hover_on_a_reference_never_names_a_retired_memory_as_bound_there(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.memory("retry", "src/a.py#g")
    ws.memory("logged", "src/a.py#g")
    ws.memory("old", "src/a.py#g")
    bind_all(ws)
    ws.moor("supersede", "memories/old.md", "--by", "memories/logged.md", "--why", "x", check=True)
    await editor.start()
    await editor.one("memories/old.md", "retired")

    on_g = await editor.hover("memories/retry.md", 2, 6)
    assert on_g is not None and isinstance(on_g.contents, types.MarkupContent)
    # logged.md is bound alike and not retired: named (the control); old.md is retired.
    assert "**Also bound here**: `memories/logged.md`\n" in on_g.contents.value + "\n"


async def test_who_else_is_bound_there_follows_memories_edited_after_the_first_check(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.memory("retry", "src/a.py#g")
    ws.memory("logged", "src/a.py#g")
    ws.memory("other", "src/a.py#h")
    bind_all(ws)
    await editor.start()
    first = await editor.hover("memories/retry.md", 2, 6)
    assert first is not None and isinstance(first.contents, types.MarkupContent)
    assert "**Also bound here**: `memories/logged.md`\n" in first.contents.value + "\n"

    # logged.md now names h, other.md now names g: each checked alone, incrementally.
    ws.memory("logged", "src/a.py#h")
    ws.memory("other", "src/a.py#g")
    await editor.one("memories/other.md", "unbound")
    await editor.one("memories/logged.md", "unbound")

    again = await editor.hover("memories/retry.md", 2, 6)
    assert again is not None and isinstance(again.contents, types.MarkupContent)
    assert "**Also bound here**: `memories/other.md`\n" in again.contents.value + "\n"
