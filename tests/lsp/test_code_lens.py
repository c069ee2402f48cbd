"""Code lenses on the symbols memories are about, and workspace symbols over memories."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import Editor, bind_all

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]
CODE = "class Client:\n    def send(self):\n        return 1\n\n\ndef connect():\n    return 2\n"


def titles(lenses: list[types.CodeLens]) -> dict[int, str]:
    return {lens.range.start.line: lens.command.title for lens in lenses if lens.command}


async def test_lenses_count_the_memories_and_follow_a_drift_on_disk(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.write("src/other.py", "def other():\n    return 3\n")
    ws.memory("one", "src/a.py#Client.send")
    ws.memory("two", ["src/a.py#Client.send", "src/a.py#connect"])
    ws.memory("whole", "src/a.py")
    bind_all(ws)
    await editor.start()

    before = await editor.until(lambda: editor.lenses("src/a.py"), lambda found: bool(found))
    assert titles(before) == {
        0: "1 memory · current",  # the whole file
        1: "2 memories · current",  # Client.send; nothing on Client itself
        5: "1 memory · current",  # connect
    }
    assert await editor.lenses("src/other.py") == []  # no memory is about it
    assert await editor.now("src/a.py") == []  # no diagnostics on code
    refreshes = editor.client.lens_refreshes  # type: ignore[attr-defined]

    ws.write("src/a.py", CODE.replace("return 1", "return 10"))

    after = await editor.until(
        lambda: editor.lenses("src/a.py"), lambda found: "drifted" in str(titles(found))
    )
    assert titles(after) == {
        0: "1 memory · 1 drifted",  # the file's content changed too
        1: "2 memories · 2 drifted",
        5: "1 memory · current",
    }
    if editor.name == "visual-studio-code":  # it can refresh lenses; Neovim cannot
        assert editor.client.lens_refreshes > refreshes  # type: ignore[attr-defined]
    connect = next(lens for lens in after if lens.range.start.line == 5)
    assert connect.command is not None
    assert list(connect.command.arguments or []) == [str(ws.root.resolve() / "memories/two.md")]
    shown = await editor.execute(connect.command.command, *connect.command.arguments)
    assert shown == {"shown": editor.uri("memories/two.md")}
    assert [d.uri for d in editor.client.shown_documents] == [editor.uri("memories/two.md")]


async def test_workspace_symbols_find_a_memory_by_a_word_of_its_title(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.write("memories/journal.md", "---\nabout: [src/a.py]\n---\n# The Journal is append-only\n")
    ws.write("memories/retry.md", "---\nabout: [src/a.py#connect]\n---\n# Retries back off\n")
    bind_all(ws)
    await editor.start()

    async def search(query: str) -> list[str]:
        found = await editor.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
        return [symbol.name for symbol in found or []]

    assert await search("journal") == ["The Journal is append-only"]
    assert await search("APPEND the") == ["The Journal is append-only"]
    assert await search("retry") == ["Retries back off"]  # by its path
    assert await search("") == ["The Journal is append-only", "Retries back off"]
    assert await search("nothing like it") == []
    found = await editor.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="back"))
    assert found is not None and len(found) == 1
    symbol = found[0]
    assert isinstance(symbol, types.SymbolInformation)
    assert symbol.location.uri == editor.uri("memories/retry.md")
    assert symbol.container_name == "memories/retry.md · current"


async def test_a_memory_that_moves_to_another_file_takes_its_lens_with_it(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.write("src/other.py", "def other():\n    return 3\n")
    ws.memory("one", "src/a.py#connect")
    ws.memory("two", "src/a.py#connect")
    bind_all(ws)
    await editor.start()

    before = await editor.until(lambda: editor.lenses("src/a.py"), lambda found: bool(found))
    assert titles(before) == {5: "2 memories · current"}  # control: both are counted here
    assert await editor.lenses("src/other.py") == []

    ws.memory("one", "src/other.py#other")  # now about the other file only

    moved = await editor.until(lambda: editor.lenses("src/other.py"), lambda found: bool(found))
    assert [lens.range.start.line for lens in moved] == [0]
    assert moved[0].command is not None
    assert list(moved[0].command.arguments or []) == [str(ws.root.resolve() / "memories/one.md")]
    assert titles(await editor.lenses("src/a.py")) == {5: "1 memory · current"}
