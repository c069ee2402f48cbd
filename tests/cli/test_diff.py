"""`moor diff` works exactly when it is needed (issue 8, part D), through the real command."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import Workspace, git

CODE = """
def subtotal(rows):
    total = 0
    for row in rows:
        total += row.amount * row.rate
    return total
"""


def test_diff_of_moved_code_shows_it_beside_its_new_place_and_exits_as_check_does(
    ws: Workspace,
) -> None:
    ws.write("a.py", CODE)
    ws.memory("sub", "a.py#subtotal")
    ws.moor("bind", check=True)
    (ws.root / "a.py").unlink()
    ws.write("b.py", CODE.replace("row.rate", "row.rate + 1"))
    run = ws.moor("diff", "memories/sub.md")
    assert run.code == 1
    assert "--- a.py#subtotal (bound)" in run.out
    assert "+++ b.py#subtotal (now)" in run.out
    assert "+        total += row.amount * row.rate + 1" in run.out
    # Control: moved without a change, the diff says so and exits 0, as check has no axes.
    ws.write("b.py", CODE)
    run = ws.moor("diff", "memories/sub.md")
    assert run.code == 0, run.out
    assert "no watched axis changed" in run.out


def test_diff_of_gone_code_shows_the_bound_code_removed(ws: Workspace) -> None:
    ws.write("a.py", CODE + "\n\ndef other():\n    return 1\n")
    ws.memory("sub", "a.py#subtotal")
    ws.moor("bind", check=True)
    ws.write("a.py", "def other():\n    return 1\n")
    run = ws.moor("diff", "memories/sub.md")
    assert run.code == 1
    assert "gone" in run.out
    assert "-def subtotal(rows):" in run.out
    assert "+++ a.py#subtotal (gone)" in run.out


def test_a_blank_line_change_in_markdown_is_no_difference_for_diff_as_for_check(
    ws: Workspace,
) -> None:
    ws.write("docs/guide.md", "# Guide\n\n## Install\n\nRun make.\nThen test.\n")
    ws.memory("guide", "docs/guide.md#Guide > Install")
    ws.moor("bind", check=True)
    ws.write("docs/guide.md", "# Guide\n\n## Install\n\n\nRun make.\n\nThen test.\n")
    assert ws.state("memories/guide.md") == "current"
    run = ws.moor("diff", "memories/guide.md")
    assert run.code == 0, run.out
    # Control: a changed word is a difference for both.
    ws.write("docs/guide.md", "# Guide\n\n## Install\n\nRun make.\nThen lint.\n")
    assert ws.state("memories/guide.md") == "drifted"
    assert ws.moor("diff", "memories/guide.md").code == 1


def test_a_fresh_clone_without_a_journal_recovers_the_bound_code_from_git(
    ws: Workspace, tmp_path: Path
) -> None:
    ws.write("a.py", CODE)
    ws.memory("sub", "a.py#subtotal")
    ws.write(".gitignore", ".moor/\n")
    ws.moor("bind", check=True)
    git(ws.root, "init", "-q")
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "bound")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(ws.root), str(clone))
    assert not (clone / ".moor").exists()
    (clone / "a.py").write_text(CODE.replace("row.rate", "row.rate * 2"), encoding="utf-8")
    cloned = Workspace(clone)
    run = cloned.moor("diff", "memories/sub.md")
    assert run.code == 1
    assert "(bound, from git " in run.out
    assert "+        total += row.amount * row.rate * 2" in run.out
    # Control: when the committed code is not what was bound, git is not believed.
    other = tmp_path / "other"
    other.mkdir()
    (other / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    second = Workspace(other)
    second.write("a.py", CODE)
    second.memory("sub", "a.py#subtotal")
    second.moor("bind", check=True)
    second.write("a.py", CODE.replace("total = 0", "total = 0.0"))  # edited before committing
    git(other, "init", "-q")
    git(other, "add", "a.py", "memories", "moor.toml", "moor.lock")
    git(other, "commit", "-qm", "lock and code that differ")
    shutil.rmtree(other / ".moor")
    run = second.moor("diff", "memories/sub.md")
    assert run.code == 1
    assert "git history does not hold it" in run.out
    assert "(bound, from git" not in run.out


def test_a_planted_git_fsmonitor_never_runs(ws: Workspace) -> None:
    ws.write("a.py", CODE)
    ws.memory("sub", "a.py#subtotal")
    ws.moor("bind", check=True)
    git(ws.root, "init", "-q")
    marker = ws.root.parent / "fsmonitor-ran"
    git(ws.root, "config", "core.fsmonitor", f"touch {marker}; false")
    ws.write("a.py", "def other():\n    return 1\n")  # gone: relocation lists files with git
    run = ws.moor("status")
    assert run.code == 1 and "gone" in run.out
    assert not marker.exists()
    # Control: git itself, run plainly, does run the planted command.
    subprocess.run(["git", "status"], cwd=ws.root, capture_output=True, check=False)
    assert marker.exists()


def test_a_fresh_clone_recovers_a_followed_anchors_code_from_before_the_follow(
    ws: Workspace, tmp_path: Path
) -> None:
    ws.write("a.py", CODE)
    ws.memory("sub", "a.py#subtotal")
    ws.write(".gitignore", ".moor/\n")
    ws.moor("bind", check=True)
    git(ws.root, "init", "-q")
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "bound")
    os.unlink(ws.root / "a.py")
    ws.write("b.py", CODE.replace("def subtotal(rows)", "def subtotal(rows, rate=1)"))
    ws.moor("follow", "memories/sub.md", check=True)
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "moved and followed")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(ws.root), str(clone))
    cloned = Workspace(clone)
    assert cloned.anchor("memories/sub.md")["axes"] == ["signature"]  # drifted since bound
    run = cloned.moor("diff", "memories/sub.md")
    assert run.code == 1
    assert "(bound, from git " in run.out  # the code as it was bound, at its old place
    assert "-def subtotal(rows):" in run.out and "+def subtotal(rows, rate=1):" in run.out
