"""A search for vanished code is kept per change set and read back only while git's view
of the worktree is the one it was made in (issue 9.13): any change a fresh clone would see
— a tracked file edited with its mtime put back, an untracked file, a file git was told not
to look at — looks again and finds what a fresh clone finds."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

from moor_engine.grounding.check import Checker
from moor_engine.session import Session

from tests.conftest import Workspace

BOUND = "def send(payload, retries=3):\n    return payload * retries\n"
GONE = "def other(value):\n    return [value]\n"
PLAIN = "def g(x):\n    return x + 1\n"
# The same size as PLAIN: a same-size edit whose mtime can be put back.
DEFINES = "def send(x):\n    return x\n"


def searched(ws: Workspace) -> tuple[str, str | None, int]:
    """One check in the engine: the memory's anchor state, where it moved, and how many
    searches were read back instead of made."""
    with Session.open(ws.root) as session:
        checker = Checker(session.workspace, session.lock, session.journal, session.observer)
        evaluation = checker.evaluate(session.select([]))
        session.observer.flush()
        anchor = evaluation.report.memories[0].anchors[0]
        return anchor.state.value, anchor.moved_to, checker.memo.recalled


def fresh_clone(ws: Workspace, tmp_path: Path) -> tuple[str, object]:
    clone = tmp_path / "clone"
    shutil.copytree(ws.root, clone, ignore=shutil.ignore_patterns(".moor"))
    anchor = Workspace(clone).anchor("memories/send.md")
    return str(anchor["state"]), anchor.get("moved_to")


def gone_in_a_repository(ws: Workspace) -> None:
    ws.write("pkg/a.py", BOUND)
    ws.write("pkg/b.py", PLAIN)
    ws.memory("send", "pkg/a.py#send")
    ws.git("init", "-q")
    ws.git("add", "-A")
    ws.git("commit", "-qm", "code")
    ws.moor("bind", check=True)
    ws.write("pkg/a.py", GONE)


def same_size(path: Path, text: str) -> None:
    """Rewrite a file with other bytes of its size and put its mtime back (`cp -p`)."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_kept_search_is_read_back_until_a_file_changes_with_its_mtime_put_back(
    ws: Workspace, tmp_path: Path
) -> None:
    gone_in_a_repository(ws)
    assert searched(ws) == ("gone", None, 0)
    # Nothing changed: the search is read back (the control that it can be).
    assert searched(ws) == ("gone", None, 1)
    same_size(ws.root / "pkg/b.py", DEFINES.ljust(len(PLAIN) - 1) + "\n")
    assert fresh_clone(ws, tmp_path) == ("moved", "pkg/b.py#send")
    assert searched(ws) == ("moved", "pkg/b.py#send", 0)


def test_an_untracked_file_that_defines_the_code_is_searched_again(ws: Workspace) -> None:
    gone_in_a_repository(ws)
    assert searched(ws) == ("gone", None, 0)
    assert searched(ws) == ("gone", None, 1)
    ws.write("pkg/new.py", DEFINES)
    assert searched(ws) == ("moved", "pkg/new.py#send", 0)


def test_a_file_git_is_told_not_to_look_at_is_still_looked_at(ws: Workspace) -> None:
    gone_in_a_repository(ws)
    ws.git("update-index", "--assume-unchanged", "pkg/b.py")
    assert searched(ws) == ("gone", None, 0)
    assert searched(ws) == ("gone", None, 1)
    # git would not report this edit: moor stats the file itself.
    same_size(ws.root / "pkg/b.py", DEFINES.ljust(len(PLAIN) - 1) + "\n")
    diff = subprocess.run(
        ["git", "diff-files", "--name-only"], cwd=ws.root, capture_output=True, text=True
    )
    assert "pkg/b.py" not in diff.stdout  # the precondition: git itself does not see it
    assert searched(ws) == ("moved", "pkg/b.py#send", 0)


def test_a_damaged_kept_search_is_made_again(ws: Workspace) -> None:
    gone_in_a_repository(ws)
    ws.write("pkg/c.py", DEFINES)
    ws.git("add", "pkg/c.py")
    assert searched(ws) == ("moved", "pkg/c.py#send", 0)
    assert searched(ws) == ("moved", "pkg/c.py#send", 1)
    with sqlite3.connect(ws.root / ".moor/journal.sqlite") as db:
        db.execute("UPDATE files SET payload = '{\"digest\": 1' WHERE path = 'relocations:'")
    assert searched(ws) == ("moved", "pkg/c.py#send", 0)


def test_without_git_nothing_is_kept_and_the_search_is_made_each_time(ws: Workspace) -> None:
    ws.write("pkg/a.py", BOUND)
    ws.memory("send", "pkg/a.py#send")
    ws.moor("bind", check=True)
    ws.write("pkg/a.py", GONE)
    ws.write("pkg/b.py", DEFINES)
    assert searched(ws) == ("moved", "pkg/b.py#send", 0)
    assert searched(ws) == ("moved", "pkg/b.py#send", 0)
