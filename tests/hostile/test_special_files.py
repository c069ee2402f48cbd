"""A repository's special files — a FIFO, a link out of the workspace — in the places moor
reads besides memories and bound code: ignore files, `moor symbols`, code a memory is
about. Each is refused or skipped with a message, at once (every run is bounded by a
timeout, so a regression fails instead of hanging the suite), and each has a control: the
same content in a regular file inside the workspace is read and changes the result."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import Run, Workspace
from tests.hostile.common import CODE, bound_handler

# A hang guard, no speed claim: far above a healthy run (about a second, several on a busy
# machine); a blocked read never ends, so any bound fails it instead of hanging the suite.
BOUND_S = 120


def bounded(ws: Workspace, *args: str) -> Run:
    """`moor ARGS` as a real process that must end within BOUND_S (else the test fails)."""
    result = subprocess.run(
        [sys.executable, "-m", "moor", *args],
        cwd=ws.root,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        timeout=BOUND_S,
    )
    return Run(result.returncode, result.stdout, result.stderr)


def handler_moved_to_a_folder(ws: Workspace) -> None:
    """A bound `handler` moved into `moved/`: found there unless `moved/` is ignored (then
    it is gone), so whether an ignore file was read shows in the verdict."""
    bound_handler(ws)
    ws.write("moved/new.py", CODE)
    ws.write("app/handler.py", "x = 1\n")


def handler_state(ws: Workspace) -> tuple[str, Run]:
    run = bounded(ws, "check", "--format", "json")
    assert run.code in (0, 1), run.err
    (memory,) = run.json()["memories"]
    return str(memory["state"]), run


def test_a_gitignore_that_is_a_fifo_is_skipped_with_a_message_and_the_check_finishes(
    ws: Workspace,
) -> None:
    handler_moved_to_a_folder(ws)
    ws.write(".gitignore", "moved/\n")
    assert handler_state(ws)[0] == "gone"  # control: a readable .gitignore is applied
    os.unlink(ws.root / ".gitignore")
    os.mkfifo(ws.root / ".gitignore")
    state, run = handler_state(ws)
    assert state == "moved"  # still checked, without the unreadable patterns
    assert "moor: .gitignore: not read" in run.err and "FIFO" in run.err, run.err


def test_a_gitignore_linked_outside_the_workspace_is_not_followed(
    ws: Workspace, tmp_path: Path
) -> None:
    handler_moved_to_a_folder(ws)
    outside = tmp_path / "their-ignores"
    outside.write_text("moved/\n", encoding="utf-8")
    os.symlink(outside, ws.root / ".gitignore")
    state, run = handler_state(ws)
    assert state == "moved"
    assert "moor: .gitignore: not read" in run.err and "outside" in run.err, run.err
    os.unlink(ws.root / ".gitignore")
    ws.write("ignores", "moved/\n")
    os.symlink("ignores", ws.root / ".gitignore")
    assert handler_state(ws)[0] == "gone"  # control: the same patterns, linked inside


def test_an_excludes_file_that_is_a_fifo_is_skipped_with_a_message(ws: Workspace) -> None:
    handler_moved_to_a_folder(ws)
    ws.write(".git/info/exclude", "moved/\n")  # a .git folder git itself cannot read
    assert handler_state(ws)[0] == "gone"  # control: the excludes are applied
    os.unlink(ws.root / ".git/info/exclude")
    os.mkfifo(ws.root / ".git/info/exclude")
    state, run = handler_state(ws)
    assert state == "moved"
    assert "moor: .git/info/exclude: not read" in run.err, run.err


def test_symbols_of_a_fifo_or_a_link_leading_outside_is_refused_with_exit_2(
    ws: Workspace, tmp_path: Path
) -> None:
    ws.write("app/handler.py", CODE)
    listed = bounded(ws, "symbols", "app/handler.py")
    assert listed.code == 0 and "app/handler.py#handler" in listed.out  # control
    os.mkfifo(ws.root / "app/pipe.py")
    run = bounded(ws, "symbols", "app/pipe.py")
    assert run.code == 2 and "app/pipe.py" in run.err and "FIFO" in run.err, run.err
    assert "Traceback" not in run.err
    outside = tmp_path / "elsewhere.py"
    outside.write_text(CODE, encoding="utf-8")
    os.symlink(outside, ws.root / "app/out.py")
    run = bounded(ws, "symbols", "app/out.py")
    assert run.code == 2 and "outside" in run.err and "handler" not in run.out, run.err


def test_code_a_memory_is_about_linked_outside_is_refused_never_read(
    ws: Workspace, tmp_path: Path
) -> None:
    bound_handler(ws)
    outside = tmp_path / "elsewhere.py"
    outside.write_text(CODE, encoding="utf-8")
    ws.write("app/real.py", CODE)
    os.unlink(ws.root / "app/handler.py")
    os.symlink("real.py", ws.root / "app/handler.py")
    assert handler_state(ws)[0] == "current"  # control: a link inside is read
    os.unlink(ws.root / "app/handler.py")
    os.symlink(outside, ws.root / "app/handler.py")
    state, run = handler_state(ws)
    (anchor,) = run.json()["memories"][0]["anchors"]
    # Refused before any read (memory: references-are-refused-before-any-read).
    assert (state, anchor["code"]) == ("invalid", "outside_workspace")


def test_in_a_git_repository_a_fifo_gitignore_is_not_handed_to_git_to_block_on(
    ws: Workspace,
) -> None:
    handler_moved_to_a_folder(ws)
    ws.git("init", "-q")
    ws.write(".gitignore", "moved/\n")
    ws.git("add", "-A")
    ws.git("commit", "-qm", "handler")
    ws.write("app/handler.py", "x = 1\n")
    started = time.monotonic()
    assert handler_state(ws)[0] == "gone"  # control: git's view applies the .gitignore
    baseline = time.monotonic() - started  # the same check on the same machine, just now
    os.unlink(ws.root / ".gitignore")
    os.mkfifo(ws.root / ".gitignore")
    started = time.monotonic()
    state, run = handler_state(ws)
    # git would wait on the FIFO until moor's git timeout (30 s a call) killed it: 30 s
    # more than the baseline (~1 s; several on a busy machine), never under this bound.
    assert time.monotonic() - started < 2 * baseline + 15, (run.err, baseline)
    assert state == "moved"
    assert "moor: .gitignore: not read" in run.err and "FIFO" in run.err, run.err
