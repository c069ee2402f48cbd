"""Show diff never writes through a planted link (issue 9.6), through the real server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.lsp.conftest import Editor, drifted_retry

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

DIFF_FILE = ".moor/diffs/memories__retry.md.diff"


async def test_show_diff_replaces_a_planted_link_instead_of_writing_through_it(
    editor: Editor, tmp_path: Path
) -> None:
    ws = editor.ws
    drifted_retry(ws)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    (ws.root / ".moor/diffs").mkdir(parents=True, exist_ok=True)
    os.symlink(victim, ws.root / DIFF_FILE)
    await editor.start()
    await editor.one("memories/retry.md", "drifted")

    result = await editor.execute("moor.showDiff", "memories/retry.md")

    assert victim.read_text(encoding="utf-8") == "precious\n"
    saved = ws.root / DIFF_FILE
    assert not saved.is_symlink()
    assert saved.read_text(encoding="utf-8") == result["diff"]  # control: the diff was saved
    assert "+    return 3\n" in result["diff"]
