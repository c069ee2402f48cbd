"""The text work behind buffer edits: the reason line, and the whole-line edit that turns
one text into another (applied as an editor applies it)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from moor_lsp.buffer_text import (
    REASON_TEMPLATE,
    ReasonLine,
    find_reason,
    line_edit,
    reason_head,
    reason_template,
    with_reason_line,
    without_line,
)

from tests.lsp.client_buffers import apply_text_edits

MEMORY = '---\nabout:\n  - "src/a.py#g"\n---\n# retry\n\nBody.\n'
TEXTS = st.text(alphabet="ab \n\r😀é", max_size=30)


def edited(old: str, new: str, encoding: str) -> str:
    edit = line_edit(old, new, encoding)
    if edit is None:
        return old
    text_edit = types.TextEdit(
        range=types.Range(
            start=types.Position(line=edit.start_line, character=0),
            end=types.Position(line=edit.end_line, character=edit.end_character),
        ),
        new_text=edit.text,
    )
    return apply_text_edits(old, [text_edit], encoding)


@settings(max_examples=300, deadline=None)
@given(old=TEXTS, new=TEXTS, encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_the_line_edit_applied_by_an_editor_gives_exactly_the_new_text(
    old: str, new: str, encoding: str
) -> None:
    assert edited(old, new, encoding) == new


def test_the_line_edit_replaces_only_the_lines_that_differ() -> None:
    new = MEMORY.replace("src/a.py#g", "src/b.py#g")
    edit = line_edit(MEMORY, new, "utf-16")
    assert edit is not None
    assert (edit.start_line, edit.end_line, edit.end_character) == (2, 3, 0)
    assert edit.text == '  - "src/b.py#g"\n'
    assert line_edit(MEMORY, MEMORY, "utf-16") is None


def test_the_reason_line_goes_under_the_frontmatter_and_comes_out_whole() -> None:
    text, line = with_reason_line(MEMORY)
    assert line == 4 and text.splitlines()[4] == REASON_TEMPLATE
    found = find_reason(text)
    assert found is not None and found.line == 4 and found.reason == ""
    assert without_line(text, line) == MEMORY
    written = text.replace(REASON_TEMPLATE, "<!-- moor reaffirm because: still 3 -->")
    assert find_reason(written) == type(found)(4, "still 3")
    # A reason typed over the closing marker still counts; a memory without the line has none.
    unclosed = text.replace(REASON_TEMPLATE, "<!-- moor reaffirm because: still 3")
    assert find_reason(unclosed) == type(found)(4, "still 3")
    assert find_reason(MEMORY) is None


def test_a_reason_line_keeps_the_files_line_endings() -> None:
    crlf = MEMORY.replace("\n", "\r\n")
    text, line = with_reason_line(crlf)
    assert text.split("\r\n")[line] == REASON_TEMPLATE
    assert "\n" not in text.replace("\r\n", "")
    no_frontmatter = "just text"
    text, line = with_reason_line(no_frontmatter)
    assert (text, line) == ("just text\n" + REASON_TEMPLATE + "\n", 1)


def test_a_reason_line_names_its_action_and_supersedes_replacing_memory() -> None:
    for action, by in [("forget", None), ("restore", None), ("supersede", "memories/a b.md")]:
        text, line = with_reason_line(MEMORY, reason_template(action, by))
        assert text.splitlines()[line] == reason_head(action, by) + "  -->"
        written = text.replace("because:  -->", "because: it never held -->")
        assert find_reason(written) == ReasonLine(4, "it never held", action, by)
    # The control: a comment that names no action moor knows is no reason line.
    assert find_reason(MEMORY + "<!-- moor delete because: x -->\n") is None
