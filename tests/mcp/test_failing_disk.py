"""The MCP server on a read-only or full disk (issue 20.3, 20.8), through the SDK's client:
a search still answers from what it can read; a write, a reaffirmation and a checkpoint
refuse in the one refusal shape with the disk's code (`read_only`, `disk_full`), and change
nothing. The control: the same calls succeed once the disk is writable or has room."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli.disks import Disk, mounted_disk, snapshot
from tests.conftest import Workspace
from tests.mcp.conftest import call, refusal, structured

WRITES: dict[str, dict[str, Any]] = {
    "memory_write": {"text": "Retries of f are safe.", "about": ["app.py#f"]},
    "memory_reaffirm": {"path": "memories/g.md", "why": "still holds"},
    "checkpoint_save": {"agent": "a", "summary": "where it stands"},
}


def _workspace(disk: Disk) -> Workspace:
    ws = disk.workspace()
    ws.write("app.py", "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x - 1\n")
    ws.memory("g", "app.py#g", body="g never returns a negative number; retries are safe.")
    ws.moor("bind", check=True)
    ws.write("app.py", "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x - 2\n")
    ws.moor("log", "memories/g.md", check=True)  # the journal at rest, its WAL folded in
    return ws


@pytest.mark.parametrize("how", ["read_only", "disk_full"])
def test_mcp_reads_answer_and_writes_refuse_on_a_failing_disk(tmp_path: Path, how: str) -> None:
    with mounted_disk(tmp_path / "disk") as disk:
        ws = _workspace(disk)
        before = snapshot(ws.root)
        if how == "read_only":
            disk.read_only()
        else:
            disk.fill()

        found = structured(call(ws.root, "memory_search", {"query": "retries"}))
        assert [hit["path"] for hit in found["hits"]] == ["memories/g.md"], found
        for tool, arguments in WRITES.items():
            entry = refusal(call(ws.root, tool, arguments), how)
            assert "read-only filesystem" in entry["message"] or "is full" in entry["message"]

        if how == "read_only":
            disk.writable()
        else:
            disk.empty()
        assert snapshot(ws.root) == before
        for tool, arguments in WRITES.items():
            structured(call(ws.root, tool, arguments))  # the control: now each is done
        assert snapshot(ws.root) != before
