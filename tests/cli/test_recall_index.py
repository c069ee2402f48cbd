"""The recall index through the real `moor recall`: derived, incremental, robust."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap

from tests.conftest import Workspace

INDEX = ".moor/recall.sqlite"


def memories(ws: Workspace) -> None:
    ws.write("src/net/client.py", "class Client:\n    def send(self):\n        return 1\n")
    ws.memory("send", "src/net/client.py#Client.send", body="Sending is idempotent.")
    ws.memory("retry", "src/net/client.py#Client", body="Retries back off exponentially.")
    ws.memory("cache", "src/net/client.py", body="Responses are cached for a minute.")


def recall(ws: Workspace, *query: str) -> dict[str, object]:
    run = ws.moor("recall", "--json", *query)
    assert run.code in (0, 1), run.err
    value = run.json()
    value["stderr"] = run.err
    return value


def paths(value: dict[str, object]) -> list[str]:
    hits = value["hits"]
    assert isinstance(hits, list)
    return [hit["path"] for hit in hits]


def index(value: dict[str, object]) -> dict[str, object]:
    status = value["index"]
    assert isinstance(status, dict)
    return status


def test_only_memories_whose_text_changed_are_indexed_again(ws: Workspace) -> None:
    memories(ws)
    first = recall(ws, "idempotent")
    assert index(first)["reindexed"] == 3 and index(first)["rebuilt"] is True
    assert index(recall(ws, "idempotent"))["reindexed"] == 0
    # Rewritten with the same bytes (a new stat, the same content hash): not re-indexed.
    text = ws.read("memories/cache.md")
    ws.write("memories/cache.md", text)
    assert index(recall(ws, "idempotent"))["reindexed"] == 0
    ws.memory("send", "src/net/client.py#Client.send", body="Sending is at most once.")
    edited = recall(ws, "once")
    assert index(edited)["reindexed"] == 1 and index(edited)["memories"] == 3
    assert paths(edited) == ["memories/send.md"]
    assert paths(recall(ws, "idempotent")) == []  # the old text is gone from the index


def test_a_deleted_memory_leaves_the_index(ws: Workspace) -> None:
    memories(ws)
    assert paths(recall(ws, "cached")) == ["memories/cache.md"]  # control
    (ws.root / "memories/cache.md").unlink()
    after = recall(ws, "cached")
    assert index(after)["removed"] == 1 and index(after)["memories"] == 2
    assert paths(after) == []


def test_a_deleted_index_is_rebuilt_with_the_same_answers(ws: Workspace) -> None:
    memories(ws)
    before = recall(ws, "send", "retries")
    (ws.root / INDEX).unlink()
    for suffix in ("-wal", "-shm"):
        if (ws.root / (INDEX + suffix)).exists():
            (ws.root / (INDEX + suffix)).unlink()
    after = recall(ws, "send", "retries")
    assert index(after)["rebuilt"] is True and index(after)["reindexed"] == 3
    assert after["hits"] == before["hits"]


def test_a_corrupt_index_is_rebuilt_with_a_message_and_no_memory_is_touched(
    ws: Workspace,
) -> None:
    memories(ws)
    recall(ws, "send")
    texts = {p: (ws.root / p).read_bytes() for p in ("memories/send.md", "memories/cache.md")}
    for suffix in ("-wal", "-shm"):
        if (ws.root / (INDEX + suffix)).exists():
            (ws.root / (INDEX + suffix)).unlink()
    (ws.root / INDEX).write_bytes(b"this is not a database, it is garbage " * 200)
    run = ws.moor("recall", "idempotent")
    assert run.code == 0, run.err
    assert "recall index .moor/recall.sqlite was unusable" in run.err
    assert "rebuilt from the memories" in run.err
    assert "memories/send.md" in run.out
    assert {p: (ws.root / p).read_bytes() for p in texts} == texts
    # Control: the next run finds a sound index and says nothing.
    again = ws.moor("recall", "idempotent")
    assert again.code == 0 and "unusable" not in again.err


def test_an_index_truncated_mid_file_is_rebuilt(ws: Workspace) -> None:
    memories(ws)
    for n in range(40):
        ws.memory(f"filler{n}", "src/net/client.py", body=f"Filler number {n} about caching.")
    recall(ws, "send")
    db = sqlite3.connect(ws.root / INDEX)  # fold the WAL in: the pages are in the file
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = (ws.root / INDEX).read_bytes()
    assert len(data) > 8192
    (ws.root / INDEX).write_bytes(data[:4096] + b"\x00" * 4096 + data[8192:])
    run = ws.moor("recall", "--json", "idempotent")
    assert run.code == 0, run.err
    assert "was unusable" in run.err, run.err
    assert paths(run.json()) == ["memories/send.md"]


def test_a_busy_index_is_searched_in_memory_and_says_so(ws: Workspace) -> None:
    memories(ws)
    recall(ws, "send")
    ws.memory("send", "src/net/client.py#Client.send", body="Sending is at most once.")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sqlite3, sys
                db = sqlite3.connect({str(ws.root / INDEX)!r}, isolation_level=None)
                db.execute("BEGIN IMMEDIATE")
                print("held", flush=True)
                sys.stdin.readline()
                db.execute("ROLLBACK")
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        run = ws.moor("recall", "--json", "once", env={"MOOR_WRITE_WAIT": "0.2"}, process=True)
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=30)
    assert run.code == 0, run.err
    assert "is busy" in run.err and "built in memory" in run.err
    value = run.json()
    assert paths(value) == ["memories/send.md"]  # the edit is searched all the same
    assert index(value)["in_memory"] is True
    # Control: with the holder gone, the file itself is brought up to date.
    after = recall(ws, "once")
    assert index(after)["in_memory"] is False and index(after)["reindexed"] == 1


def test_an_index_file_that_is_a_link_out_of_the_workspace_is_never_opened(
    ws: Workspace, tmp_path: object
) -> None:
    memories(ws)
    outside = ws.root.parent / "outside.sqlite"
    outside.write_bytes(b"someone else's file")
    (ws.root / ".moor").mkdir(exist_ok=True)
    os.symlink(outside, ws.root / INDEX)
    run = ws.moor("recall", "--json", "idempotent")
    assert run.code == 0, run.err
    assert "was not opened" in run.err and "symbolic link" in run.err
    assert paths(run.json()) == ["memories/send.md"]  # searched in memory all the same
    assert outside.read_bytes() == b"someone else's file"
