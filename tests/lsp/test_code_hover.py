"""Hover on code lists the memories about it (issue 11.11), through the protocol: each
with its trust state, how it stands to the code, and its title; retired ones left out."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import G3, Editor, bind_all

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

CODE = "class C:\n    def g(self):\n        return 2\n\n\ndef h():\n    return 2\n"


def text(hover: types.Hover | None) -> str:
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


async def test_hovering_a_definition_lists_the_memories_about_it_and_what_encloses_it(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.memory("on-g", "src/a.py#C.g")
    ws.memory("on-c", "src/a.py#C")
    ws.memory("on-h", "src/a.py#h")
    bind_all(ws)
    ws.write("src/a.py", CODE.replace("return 2\n\n", "return 3\n\n", 1))  # C.g drifted
    await editor.start()
    await editor.one("memories/on-g.md", "drifted")

    shown = text(await editor.hover("src/a.py", 1, 9))

    assert "2 memories about this code" in shown
    assert "`drifted` [memories/on-g.md]" in shown and "(exact): on-g" in shown
    assert "[memories/on-c.md]" in shown and "(enclosing): on-c" in shown
    assert "on-h" not in shown  # control: a memory about other code is not listed
    assert await editor.hover("src/a.py", 2, 9) is None  # inside the body: no card
    assert "memories/on-h.md" in text(await editor.hover("src/a.py", 5, 4))


async def test_code_with_only_retired_memories_has_no_hover_and_one_live_memory_does(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", G3)
    ws.memory("old", "src/a.py#g")
    ws.memory("new", "src/a.py#g")
    bind_all(ws)
    await editor.start()
    shown = text(await editor.hover("src/a.py", 0, 4))
    assert "2 memories about this code" in shown  # control: both live

    ws.moor("supersede", "memories/old.md", "--by", "memories/new.md", "--why", "x", check=True)
    shown = await editor.until(
        lambda: editor.hover("src/a.py", 0, 4),
        lambda hover: hover is not None and "memories/old.md" not in text(hover),
    )
    assert "1 memory about this code" in text(shown) and "memories/new.md" in text(shown)


async def test_hover_is_the_persons_whole_view_and_marks_each_agents_memory(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", G3)
    ws.memory("shared-g", "src/a.py#g")
    ws.write(
        "memories/alpha-g.md",
        "---\nabout:\n  - src/a.py#g\nagent: alpha\n---\n# alpha on g\n\nAlpha's note.\n",
    )
    bind_all(ws)
    # The control: an agent that names no namespace (the CLI) is not shown alpha's memory.
    plain = ws.moor("about", "--json", "src/a.py#g").json()
    assert [m["path"] for m in plain["memories"]] == ["memories/shared-g.md"]
    await editor.start()

    shown = text(await editor.hover("src/a.py", 0, 4))

    assert "2 memories about this code" in shown
    assert "alpha on g — agent `alpha`" in shown
    assert "[memories/shared-g.md]" in shown and "shared-g — agent" not in shown


GO_COMMAND = "package cli\n\ntype Command struct {\n\tName  string\n\tUsage string\n}\n"


async def test_hovering_a_struct_field_lists_the_memory_about_that_field(editor: Editor) -> None:
    ws = editor.ws
    ws.write("cli/command.go", GO_COMMAND)
    ws.memory("on-name", "cli/command.go#Command.Name")
    ws.memory("on-command", "cli/command.go#Command")
    bind_all(ws)
    await editor.start()

    on_name = text(
        await editor.until(
            lambda: editor.hover("cli/command.go", 3, 2),
            lambda hover: hover is not None and "on-name" in text(hover),
        )
    )
    on_usage = text(await editor.hover("cli/command.go", 4, 2))

    assert "[memories/on-name.md]" in on_name and "(exact): on-name" in on_name
    assert "(enclosing): on-command" in on_name
    assert "on-name" not in on_usage  # control: the sibling field is other code
    assert "(enclosing): on-command" in on_usage
