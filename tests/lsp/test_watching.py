"""Which changes on disk the server's watcher passes on to a check."""

from __future__ import annotations

import pytest
from moor_lsp.features.watching import ChangeFilter

from tests.conftest import Workspace
from tests.lsp.conftest import G2, G3, Editor, bind_all


def test_the_filter_skips_what_nested_ignore_files_ignore_but_never_the_files_memories_are_about(
    ws: Workspace,
) -> None:
    ws.write(".gitignore", "*.log\n")
    ws.write("sub/.gitignore", "*.py\n!keep.py\n")
    watched = {"sub/bound.py"}
    change_filter = ChangeFilter(ws.root, watched.__contains__)

    def relevant(rel: str) -> bool:
        return change_filter.relevant(ws.root / rel)

    assert not relevant("sub/a.py") and not relevant("x.log") and not relevant("sub/x.log")
    assert relevant("sub/keep.py") and relevant("a.py")  # negated; not ignored at all
    assert relevant("sub/bound.py")  # ignored, but a memory is about it
    assert relevant("sub/.gitignore") and relevant("memories/x.md")
    ws.write("sub/.gitignore", "# nothing\n")
    assert not relevant("sub/a.py")  # read once …
    change_filter.reload()  # … and again when an ignore file changes
    assert relevant("sub/a.py")


@pytest.mark.asyncio
@pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")
async def test_a_gitignored_file_a_memory_is_about_is_still_watched(editor: Editor) -> None:
    ws = editor.ws
    ws.write(".gitignore", "gen/\n")
    ws.write("gen/tool.py", G2)
    ws.memory("gen", "gen/tool.py#g")
    bind_all(ws)
    await editor.start()
    await editor.execute("moor.check")  # answers once the workspace is checked
    assert await editor.now("memories/gen.md") == []
    ws.write("gen/tool.py", G3)  # written by another process; no LSP notification
    await editor.one("memories/gen.md", "drifted")
