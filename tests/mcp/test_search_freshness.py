"""A warm MCP server's `memory_search` (issue 22.5): its recall index stays open between
calls and is synced by what the watch of the memory folders saw change, not by a stat of
every memory; yet a memory edited, added or removed between two calls is what the second
call sees — an edit within the same mtime tick, an edit by another process, a new folder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession

from tests.conftest import ALWAYS_PROCESS, Workspace
from tests.mcp.conftest import run, structured

CODE = "def send(payload):\n    return payload\n\n\ndef close():\n    return None\n"
NOTES = 40  # memories that match no query below


def workspace(ws: Workspace) -> None:
    ws.write("net/client.py", CODE)
    ws.memory("alpha", "net/client.py#send", body="The zebra protocol frames each payload.")
    for n in range(NOTES):
        ws.memory(f"note{n:02}", "net/client.py#close", body=f"Closing detail number {n}.")
    ws.moor("bind", check=True)


async def hits(session: ClientSession, query: str) -> list[str]:
    result = await session.call_tool("memory_search", {"query": query, "limit": 5})
    return [hit["path"] for hit in structured(result)["hits"]]


def same_tick_rewrite(path: Path, old: str, new: str) -> None:
    """Rewrite `path` in place with text of the same length and put its mtime back: a
    change no size or mtime can tell (only the ctime moves)."""
    assert len(old) == len(new)
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    with path.open("r+", encoding="utf-8") as file:  # in place: same inode, no rename
        file.write(text.replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )


def test_a_warm_server_sees_each_memory_edited_added_or_removed_between_two_calls(
    ws: Workspace,
) -> None:
    workspace(ws)
    alpha = ws.root / "memories/alpha.md"

    async def use(session: ClientSession) -> list[list[str]]:
        seen = [await hits(session, "zebra"), await hits(session, "quokka")]
        same_tick_rewrite(alpha, "zebra", "quokk")  # same length: "quokk" is a word too
        seen += [await hits(session, "zebra"), await hits(session, "quokk")]
        # Another process edits it (in place, as an editor that does not rename).
        script = (
            "import sys, pathlib; p = pathlib.Path(sys.argv[1]); "
            "p.write_text(p.read_text().replace('quokk', 'okapi'))"
        )
        subprocess.run([sys.executable, "-c", script, str(alpha)], check=True)
        seen += [await hits(session, "quokk"), await hits(session, "okapi")]
        ws.memory("beta", "net/client.py#send", body="The narwhal retry budget is three.")
        seen.append(await hits(session, "narwhal"))
        (ws.root / "memories/deeper").mkdir()
        ws.write(
            "memories/deeper/gamma.md",
            "---\nabout:\n  - net/client.py#send\n---\n# gamma\n\nThe axolotl rule.\n",
        )
        seen.append(await hits(session, "axolotl"))
        alpha.unlink()
        seen.append(await hits(session, "okapi"))
        return seen

    seen = run(ws.root, use)
    # The control: before any change the word written later finds nothing, the old one finds
    # the memory — so each later answer reflects a change, not a search that always matches.
    assert seen[0] == ["memories/alpha.md"] and seen[1] == []
    assert seen[2] == [] and seen[3] == ["memories/alpha.md"]  # same size, same mtime
    assert seen[4] == [] and seen[5] == ["memories/alpha.md"]  # by another process
    assert seen[6] == ["memories/beta.md"]  # added
    assert seen[7] == ["memories/deeper/gamma.md"]  # in a new folder
    assert seen[8] == []  # removed


@pytest.mark.skipif(ALWAYS_PROCESS, reason="counts the calls of the server in this process")
def test_a_warm_servers_search_stats_no_memory_file_when_nothing_changed(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace(ws)
    memories = str(ws.root / "memories")
    stats: list[str] = []
    real_stat: Callable[..., os.stat_result] = os.stat

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        name = os.fsdecode(path) if isinstance(path, str | bytes | os.PathLike) else ""
        if name.startswith(memories) and name.endswith(".md"):
            stats.append(name)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counting)
    counts: list[int] = []

    async def use(session: ClientSession) -> None:
        for query in ("zebra", "closing detail", "zebra protocol", "detail", "payload"):
            stats.clear()
            await hits(session, query)
            counts.append(len(stats))
        ws.memory("note00", "net/client.py#close", body="Closing detail rewritten.")
        stats.clear()
        assert await hits(session, "rewritten") == ["memories/note00.md"]
        counts.append(len(stats))

    run(ws.root, use)
    # The control: the first call stats every memory (the counter sees them), and so did
    # every call before the index was kept.
    assert counts[0] >= NOTES + 1, counts
    # Then nothing changed: no memory file is stat-ed to sync the index (the candidates'
    # check reads a few memories: bounded by the limit, not by the number of memories).
    assert all(count <= 5 for count in counts[1:5]), counts
    # One memory changed: it alone is looked at again.
    assert counts[5] <= 5, counts


def test_a_memory_file_that_is_a_link_is_seen_edited_through_its_target(ws: Workspace) -> None:
    workspace(ws)
    target = ws.write(
        "notes/linked.md",
        "---\nabout:\n  - net/client.py#send\n---\n# linked\n\nThe pelican rule.\n",
    )
    (ws.root / "memories/linked.md").symlink_to(target)

    async def use(session: ClientSession) -> list[list[str]]:
        seen = [await hits(session, "pelican"), await hits(session, "toucan")]
        # Written through the target's name: no event in the memory folder names it.
        same_tick_rewrite(target, "pelican", "toucan ")
        seen += [await hits(session, "pelican"), await hits(session, "toucan")]
        return seen

    seen = run(ws.root, use)
    assert seen[0] == ["memories/linked.md"] and seen[1] == []  # the control
    assert seen[2] == [] and seen[3] == ["memories/linked.md"]
