"""Hover on an `about:` reference: trust state, journal history, questions, diff."""

from __future__ import annotations

import os

import pytest
from lsprotocol import types
from moor_store.lockfile import parse_lock

from tests.cli.test_hook_answers import backdate
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


async def test_hover_on_a_moved_reference_shows_where_the_code_is_now(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", "def g():\n    return 2\n")
    ws.write("src/c.py", "def h():\n    return 3\n")
    ws.memory("retry", "src/a.py#g")
    ws.memory("still", "src/c.py#h")
    bind_all(ws)
    ws.write("src/a.py", "def other():\n    return 1\n")
    ws.write("src/b.py", "# moved here\n\n\ndef g():\n    return 2\n")
    await editor.start()
    moved = await editor.one("memories/retry.md", "moved")

    hover = await editor.hover("memories/retry.md", moved.range.start.line, 6)
    still = await editor.hover("memories/still.md", moved.range.start.line, 6)

    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert "`src/a.py#g` — **moved**" in text
    assert f"**Now at** [`src/b.py#g`]({editor.uri('src/b.py')}#L4) (line 4)" in text
    # Control: a reference that did not move has no "now at".
    assert still is not None and isinstance(still.contents, types.MarkupContent)
    assert "`src/c.py#h` — **current**" in still.contents.value
    assert "Now at" not in still.contents.value


async def test_hover_puts_the_reason_and_diff_first_and_collapses_unchanged_checks(
    editor: Editor,
) -> None:
    from moor.main import main

    ws = editor.ws
    g = "def g():\n    return 2\n"
    ws.write("src/a.py", g + "\n\ndef h():\n    return 0\n")
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)
    for other in range(1, 4):  # three saves of the file that leave g alone
        ws.write("src/a.py", g + f"\n\ndef h():\n    return {other}\n")
        assert main(["-C", str(ws.root), "check"]) == 0
    ws.write("src/a.py", "def g():\n    return 3\n")
    await editor.start()
    await editor.one("memories/retry.md", "drifted")
    await editor.execute("moor.reaffirm", "memories/retry.md", "three is fine")
    ws.write("src/a.py", "def g():\n    return 4\n")
    drifted = await editor.one("memories/retry.md", "drifted")

    hover = await editor.hover("memories/retry.md", drifted.range.start.line, 6)

    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert "“three is fine”" in text[: text.index("**Since bound**")]  # the reason first …
    assert text.index("**Since bound**") < text.index("**History**")  # … then the diff
    history = text[text.index("**History**") :]
    assert history.count("checked 3 times since") == 1, history
    assert "checked: the file changed" not in history, history  # the run is one line
    assert history.index("bound") < history.index("checked 3 times")  # control: in order
    assert "`moor log memories/retry.md`" in text


async def test_hover_follows_another_writers_lock_even_with_its_size_and_mtime_unchanged(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", "def g():\n    return 2\n")
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)
    backdate(ws.root)  # out of the racy window: the lock is known by its stat key
    await editor.start()

    async def state() -> str:
        hover = await editor.hover("memories/retry.md", 2, 6)
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        return hover.contents.value

    assert "**current**" in await state()  # control: as bound
    lock = ws.root / "moor.lock"
    original, before = lock.read_bytes(), lock.stat()
    body = parse_lock(original.decode()).memories["memories/retry.md"].anchors["src/a.py#g"]
    digest = body.axes["body"]
    other = digest[:-1] + ("0" if digest[-1] != "0" else "1")
    lock.write_bytes(original.replace(digest.encode(), other.encode()))  # another writer
    os.utime(lock, ns=(before.st_atime_ns, before.st_mtime_ns))

    assert "**drifted**" in await editor.until(state, lambda text: "**drifted**" in text)

    lock.write_bytes(original)  # and back, the same size and mtime again
    os.utime(lock, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert "**current**" in await editor.until(state, lambda text: "**current**" in text)
