"""git, run by moor in a repository, runs nothing the repository names (issue 20.1): not a
`git` program of its own found through an empty or relative `PATH` entry, not a filter
driver of its `.git/config`, not a signature program its config asks `git log` for."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from moor_engine.agents.agent_hooks import RECENT_COMMITS

from tests.cli.test_hook_answers import backdate, code, with_functions
from tests.conftest import Workspace
from tests.hostile.planted import moor_command
from tests.hostile.test_planted_modules import hook

SHOWN = 'path="memories/m2.md"'  # a memory about the changed file: `git diff` answered


def changed(ws: Workspace) -> None:
    """`ws` with its functions, committed long enough ago that only `git diff` tells of
    the file they are in, which is then changed."""
    with_functions(ws)
    for n in range(RECENT_COMMITS):
        ws.git("commit", "-q", "--allow-empty", "-m", f"later {n}")
    ws.write("src/many.py", code({2: "2 * 2"}))
    backdate(ws.root)


def program(path: Path, marker: Path) -> str:
    """An executable at `path` that leaves `marker` behind; its path."""
    path.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def test_a_git_program_of_the_repository_is_not_run_through_an_empty_path_entry(
    ws: Workspace, tmp_path: Path
) -> None:
    changed(ws)
    marker = tmp_path / "git-ran"
    program(ws.root / "git", marker)
    path = os.pathsep + os.environ["PATH"]  # `PATH=$PATH:` and the like: the working folder

    context = hook(ws, "session-start", env={"PATH": path})

    assert SHOWN in context  # the control: moor ran git (the real one), and used its answer
    assert not marker.exists()
    # The control: the same PATH, looked up as a process is started there, finds the plant.
    subprocess.run(["git", "--version"], cwd=ws.root, env={**os.environ, "PATH": path})
    assert marker.exists()


def test_a_filter_driver_of_the_repositorys_git_config_never_runs(
    ws: Workspace, tmp_path: Path
) -> None:
    changed(ws)
    marker = tmp_path / "filter-ran"
    ws.git("config", "filter.the.thing.clean", program(tmp_path / "clean", marker))
    ws.git("config", "filter.the.thing.required", "true")
    ws.write(".gitattributes", "*.py filter=the.thing\n")
    backdate(ws.root)

    context = hook(ws, "session-start")

    assert SHOWN in context
    assert not marker.exists()
    # The control: git itself, run plainly, runs the driver on the changed file.
    subprocess.run(["git", "diff", "--name-only", "HEAD"], cwd=ws.root, capture_output=True)
    assert marker.exists()


def test_a_signature_program_of_the_repositorys_git_config_never_runs(
    ws: Workspace, tmp_path: Path
) -> None:
    changed(ws)
    head = ws.git("rev-parse", "HEAD").strip()
    tree = ws.git("rev-parse", "HEAD^{tree}").strip()
    signed = (
        f"tree {tree}\nparent {head}\nauthor t <t@t> 1600000000 +0000\n"
        "committer t <t@t> 1600000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n"
        " AAAA\n -----END PGP SIGNATURE-----\n\na signed commit\n"
    )
    commit = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=ws.root,
        input=signed,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ws.git("update-ref", "HEAD", commit)
    marker = tmp_path / "gpg-ran"
    ws.git("config", "gpg.program", program(tmp_path / "gpg", marker))
    ws.git("config", "log.showSignature", "true")

    context = hook(ws, "session-start")

    assert SHOWN in context
    assert not marker.exists()
    # The control: git itself, run plainly, asks the program about the signed commit.
    subprocess.run(["git", "log", "-3", "--name-only"], cwd=ws.root, capture_output=True)
    assert marker.exists()


def test_a_filter_driver_whose_name_cannot_be_overridden_keeps_moor_from_running_git(
    ws: Workspace, tmp_path: Path
) -> None:
    changed(ws)
    marker = tmp_path / "filter-ran"
    # `-c filter.x=y.clean=` would set `filter.x` to `y.clean=`: this driver cannot be
    # switched off on git's command line, so git is not run at all.
    ws.git("config", "filter.x=y.clean", program(tmp_path / "clean", marker))
    ws.write(".gitattributes", "*.py filter=x=y\n")
    backdate(ws.root)

    hook(ws, "session-start")
    checked = subprocess.run(
        [*moor_command(), "check", "--format", "json"],
        cwd=ws.root,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert not marker.exists()
    # The control: moor still judged the change without git …
    states = {m["path"]: m["state"] for m in json.loads(checked.stdout)["memories"]}
    assert states["memories/m2.md"] == "drifted" and states["memories/m1.md"] == "current"
    # … and git itself, run plainly, runs the driver on the changed file.
    subprocess.run(["git", "diff", "--name-only", "HEAD"], cwd=ws.root, capture_output=True)
    assert marker.exists()
