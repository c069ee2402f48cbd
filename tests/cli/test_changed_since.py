"""`moor check --changed-since REV`, on real git history: only the memories about what the
change touched (committed since the merge base, staged, unstaged, untracked, renamed,
deleted, the memories and their moor.lock entries themselves)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from moor.main import main

from tests.conftest import Workspace


def check(
    ws: Workspace, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, dict[str, str], str]:
    """Exit status, {memory: state} and stderr of an in-process `moor check --format json`."""
    capsys.readouterr()
    code = main(["-C", str(ws.root), "check", "--format", "json", "--no-progress", *args])
    captured = capsys.readouterr()
    states = {}
    if code in (0, 1):
        states = {m["path"]: m["state"] for m in json.loads(captured.out)["memories"]}
    return code, states, captured.err


def function(name: str, value: int) -> str:
    return f"def {name}():\n    total = {value}\n    return total * {value}\n"


def commit(ws: Workspace, message: str) -> None:
    ws.git("add", "-A")
    ws.git("commit", "-q", "-m", message)


@pytest.fixture
def history(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> Workspace:
    """A repository where main has: every memory bound (c0), then b.py drifted (c1, tag
    `base`); the branch `feature` starts at `base`; main then drifts d.py (c2)."""
    ws.git("init", "-q", "-b", "main")
    ws.write(".gitignore", ".moor/\n")
    for name in ("a", "b", "c", "d", "old", "r"):
        ws.write(f"src/{name}.py", function(name, 1))
        ws.memory(f"m{name}", f"src/{name}.py#{name}")
    assert main(["-C", str(ws.root), "bind"]) == 0
    commit(ws, "c0: bound")
    ws.write("src/b.py", function("b", 2))
    commit(ws, "c1: b drifts before the branch")
    ws.git("tag", "base")
    ws.git("checkout", "-q", "-b", "feature")
    ws.git("checkout", "-q", "main")
    ws.write("src/d.py", function("d", 2))
    commit(ws, "c2: d drifts on main after the branch")
    ws.git("checkout", "-q", "feature")
    capsys.readouterr()
    return ws


def test_only_memories_about_files_the_branch_touched_are_checked(
    history: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = history
    ws.write("src/a.py", function("a", 3))  # committed on the branch: drifted
    ws.git("rm", "-q", "src/old.py")  # deleted: its memory's code is gone
    ws.git("mv", "src/r.py", "src/renamed.py")  # renamed: the old path counts
    commit(ws, "feature: a drifts, old is deleted, r is renamed")
    ws.write("src/c.py", function("c", 3))  # unstaged
    ws.memory("fresh", "src/b.py#b")  # untracked: a new memory, not bound

    code, states, err = check(ws, capsys, "--changed-since", "main")

    assert code == 1
    assert states == {
        "memories/ma.md": "drifted",
        "memories/mc.md": "drifted",
        "memories/mold.md": "gone",
        "memories/mr.md": "moved",  # found again in src/renamed.py
        "memories/fresh.md": "unbound",
    }
    assert "5 of 7 memories are about the 6 file(s) changed since main" in err
    # Control: mb, drifted before the branch, is outside the change; a full check reports
    # it. src/d.py differs from main (main changed it after the branch: a two-dot diff
    # lists it) but not since the merge base, so md is not the branch's to check.
    full_code, full, _ = check(ws, capsys)
    assert (full_code, full["memories/mb.md"]) == (1, "drifted")
    assert "src/d.py" in ws.git("diff", "--name-only", "main")


def test_drift_outside_the_change_does_not_fail_it(
    history: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = history
    ws.write("README.txt", "not code any memory is about\n")
    commit(ws, "feature: a file no memory names")

    code, states, err = check(ws, capsys, "--changed-since", "base")

    assert (code, states) == (0, {})
    assert "0 of 6 memories are about the 1 file(s) changed since base" in err
    full_code, full, _ = check(ws, capsys)  # control: mb is drifted, and fails a full check
    assert (full_code, full["memories/mb.md"]) == (1, "drifted")


def test_a_reaffirmed_memory_and_a_changed_config_are_in_the_change(
    history: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = history
    assert main(["-C", str(ws.root), "reaffirm", "memories/mb.md", "--why", "still holds"]) == 0
    commit(ws, "feature: b reaffirmed (moor.lock only)")

    code, states, err = check(ws, capsys, "--changed-since", "base")
    assert (code, states) == (0, {"memories/mb.md": "current"}), err

    ws.write("moor.toml", 'memory_roots = ["memories"]\n# read differently\n')
    code, states, _ = check(ws, capsys, "--changed-since", "base")
    assert len(states) == 6  # how every file is read may have changed: all of them


def test_a_workspace_below_the_repository_top_sees_its_own_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = Workspace(tmp_path / "repo" / "sub")
    ws.write("moor.toml", 'memory_roots = ["memories"]\n')
    ws.write("src/a.py", function("a", 1))
    ws.write("src/b.py", function("b", 1))
    ws.memory("ma", "src/a.py#a")
    ws.memory("mb", "src/b.py#b")
    top = Workspace(tmp_path / "repo")
    top.git("init", "-q", "-b", "main")
    top.write(".gitignore", ".moor/\n")
    top.write("src/a.py", "# the repository's own src/a.py, outside the workspace\n")
    assert main(["-C", str(ws.root), "bind"]) == 0
    commit(top, "bound")
    top.write("src/a.py", "# changed outside the workspace\n")
    ws.write("src/b.py", function("b", 2))

    code, states, _ = check(ws, capsys, "--changed-since", "HEAD")

    assert (code, states) == (1, {"memories/mb.md": "drifted"})


def test_a_revision_git_does_not_know_is_a_usage_error(
    history: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for revision in ("no-such-branch", "--output=/tmp/x", ""):
        code, _, err = check(history, capsys, f"--changed-since={revision}")
        assert code == 2, revision
        assert err.startswith(f"moor: --changed-since {revision}: "), err
        assert "Traceback" not in err
    code, _, err = check(history, capsys, "--changed-since=base")  # control: a known one
    assert (code, "0 of 6 memories" in err) == (0, True)

    plain = Workspace(tmp_path / "plain")
    plain.write("moor.toml", 'memory_roots = ["memories"]\n')
    plain.write("memories/.keep", "")
    code, _, err = check(plain, capsys, "--changed-since", "HEAD")
    assert code == 2
    assert "is not in a git repository" in err


def test_unrelated_histories_say_why_there_is_no_diff(
    history: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = history
    ws.git("checkout", "-q", "--orphan", "elsewhere")
    commit(ws, "a history of its own")
    ws.git("checkout", "-q", "feature")

    code, _, err = check(ws, capsys, "--changed-since", "elsewhere")

    assert code == 2
    assert "no common ancestor" in err
