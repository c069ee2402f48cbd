"""A gone anchor costs a check a bounded share of it, however many files there are (9.13);
the definition index it is looked up in follows every change, through the real command."""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from pathlib import Path

from tests.conftest import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import relocation_scale


def test_gone_anchors_in_3000_files_cost_a_bounded_ratio_of_a_check_without() -> None:
    result = relocation_scale.measure(3000, (1, 20), rounds=5)  # best of 5: load only adds
    # Before the index, 20 gone anchors cost ~3x at this size and ~26x at 50,000 files
    # (every anchor opened every file). In CPU seconds: a busy machine stretches the clock
    # (a wall ratio of 4.3 was seen at load 12), not the work.
    assert result.cpu_ratio(1) < 3.0, result
    assert result.cpu_ratio(20) < 4.0, result
    # The first check after the anchors went finds the index `moor bind` built and parses
    # only the changed files: in CPU seconds (robust to a busy machine), a bounded ratio
    # (building it there cost ~6x at this size, ~50x at 50,000 files).
    assert result.cpu_ratio(1, 0) < 3.0, result
    # One index for all anchors: 20 gone cost little more than one.
    assert result.gone[20][1].cpu < 2.5 * result.gone[1][1].cpu, result  # CPU: load only adds
    # After an unrelated edit every search is made again: bounded too (the walk per anchor
    # it replaced cost 26x at 50,000 files).
    assert result.edited.cpu < 8.0 * result.baseline.cpu, result


def index_row(ws: Workspace) -> str | None:
    if not (ws.root / ".moor" / "journal.sqlite").exists():
        return None
    with sqlite3.connect(ws.root / ".moor" / "journal.sqlite") as db:
        row = db.execute("SELECT payload FROM files WHERE path = 'index:python'").fetchone()
    return None if row is None else str(row[0])


def test_the_index_follows_edited_and_new_files_between_checks(ws: Workspace) -> None:
    for n in range(40):
        ws.write(f"pkg/m{n}.py", f"def f{n}(x):\n    return x + {n}\n")
    ws.write("pkg/a.py", "def send(payload, retries=3):\n    return payload * retries\n")
    ws.memory("send", "pkg/a.py#send")
    past = time.time() - 60  # stats old enough to vouch for a file (not "racy")
    for path in (ws.root / "pkg").iterdir():
        os.utime(path, (past, past))
    assert index_row(ws) is None  # the control: nothing has built it yet
    assert ws.moor("bind").code == 0
    kept = index_row(ws)  # built when the anchors were bound, before any is gone
    assert kept is not None and "f39" in kept
    ws.write("pkg/a.py", "def other():\n    return 1\n")
    os.utime(ws.root / "pkg/a.py", (past, past + 1))
    assert ws.anchor("memories/send.md")["state"] == "gone"
    assert ws.anchor("memories/send.md")["state"] == "gone"  # from the kept index
    # An edited file that now defines it: found, though its index row was written before.
    ws.write(
        "pkg/m7.py",
        "def f7(x):\n    return x + 7\n\n\ndef send(payload, retries=3):\n"
        "    return payload * retries\n",
    )
    anchor = ws.anchor("memories/send.md")
    assert anchor["state"] == "moved" and anchor["moved_to"] == "pkg/m7.py#send"
    # Removed from there and written into a new file: found there, not at the old place.
    ws.write("pkg/m7.py", "def f7(x):\n    return x + 7\n")
    ws.write("pkg/new.py", "def send(payload, retries=3):\n    return payload * retries\n")
    anchor = ws.anchor("memories/send.md")
    assert anchor["state"] == "moved" and anchor["moved_to"] == "pkg/new.py#send"
    # Control: with the new file gone too, nothing is left to follow.
    (ws.root / "pkg/new.py").unlink()
    assert ws.anchor("memories/send.md")["state"] == "gone"
