"""Go-to-definition from an `about:` reference to the code, and document links."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import G2, Editor, bind_all, bound_retry

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]
CODE = "# é😀 before\n\n\nclass Client:\n    # ü😀\n    def send(self):\n        pass\n"
LINE = 'about: ["src/données😀.py", "src/a.py#Client.send", "src/a.py#Nope", "src/a.py"]'


async def test_a_reference_jumps_to_the_symbols_definition_line(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.write("src/données😀.py", "X = 1\n")
    ws.write("memories/nav.md", f"---\n{LINE}\n---\n# Navigation\n")
    await editor.start()
    editor.open("memories/nav.md")

    def at(text: str) -> int:
        """A character a little inside the reference `text` on the about line."""
        return editor.units(LINE[: LINE.index(text) + 3])

    send = await editor.definition("memories/nav.md", 1, at("src/a.py#Client.send"))
    whole = await editor.definition("memories/nav.md", 1, at('src/a.py"'))
    missing = await editor.definition("memories/nav.md", 1, at("src/a.py#Nope"))
    title = await editor.definition("memories/nav.md", 3, 2)

    assert isinstance(send, list) and len(send) == 1
    link = send[0]
    assert isinstance(link, types.LocationLink)  # both clients take links
    assert link.target_uri == editor.uri("src/a.py")
    assert link.target_selection_range.start == types.Position(line=5, character=4)
    assert link.target_selection_range.end.character == len("    def send(self):")
    assert link.target_range.start.line == 5
    assert link.origin_selection_range is not None
    start = editor.units(LINE[: LINE.index("src/a.py#Client.send")])
    assert link.origin_selection_range.start.character in (start, start - 1)  # quote or not
    assert isinstance(whole, list) and len(whole) == 1
    assert whole[0].target_uri == editor.uri("src/a.py")
    assert whole[0].target_range.start == types.Position(line=0, character=0)
    assert missing is None
    assert title is None


async def test_references_to_existing_code_are_document_links(editor: Editor) -> None:
    if editor.name != "visual-studio-code":
        pytest.skip("Neovim does not ask for document links")
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.write("src/données😀.py", "X = 1\n")
    ws.write("memories/nav.md", f"---\n{LINE}\n---\n# Navigation\n")
    await editor.start()

    links = await editor.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=editor.document("memories/nav.md"))
    )

    assert links is not None
    targets = [link.target for link in links]
    assert targets == [
        editor.uri("src/données😀.py"),
        editor.uri("src/a.py") + "#L6",
        editor.uri("src/a.py"),
    ]  # not src/a.py#Nope, which is not there
    assert links[1].range.start.character >= editor.units(LINE[: LINE.index("src/a.py#C")]) - 1


async def test_a_moved_reference_jumps_to_where_the_engine_found_the_code(editor: Editor) -> None:
    ws = editor.ws
    bound_retry(ws)  # memories/retry.md about src/a.py#g
    ws.write("src/c.py", "X = 1\n\n\ndef h():\n    return 1\n")
    ws.memory("stays", "src/c.py#h")
    bind_all(ws)
    ws.write("src/a.py", "def other():\n    return 1\n")
    ws.write("src/b.py", "# moved here\n\n\n" + G2)
    await editor.start()
    moved = await editor.one("memories/retry.md", "moved")

    found = await editor.definition("memories/retry.md", moved.range.start.line, 6)
    # Control: a reference whose code did not move still jumps to its own place.
    stays = await editor.definition("memories/stays.md", 2, 6)

    assert isinstance(found, list) and len(found) == 1
    assert found[0].target_uri == editor.uri("src/b.py")
    assert found[0].target_selection_range.start.line == 3
    assert isinstance(stays, list) and len(stays) == 1
    assert stays[0].target_uri == editor.uri("src/c.py")
    assert stays[0].target_selection_range.start.line == 3
