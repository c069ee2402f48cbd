"""Running git on a workspace moor does not trust: nothing the repository configures runs.

A repository's own config can name commands git runs on its behalf (`core.fsmonitor`
runs on `ls-files` and `status`; a filter driver's `clean` on `diff` of a changed file;
`gpg.program` on `log` when `log.showSignature` is set; hooks, external diff drivers and
textconv filters on other commands). Opening a folder in an editor must never run them, so
every call here overrides each one (the filter drivers by the names the config gives
them), ignores the system and global config, and never prompts. git itself is the one
found on an absolute `PATH` entry: an empty or relative one (`PATH=$PATH:`) would name
a `git` of the workspace, where git runs (memory: child-processes-run-isolated-from-the-workspace).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

_SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "diff.external=",
    "protocol.allow=never",
    # What `diff-files` vouches for (`worktree.py`) must be what git's default stat check
    # compares: a repository cannot switch it to mtime-only or off.
    "core.checkStat=default",
    "core.trustctime=true",
    "core.ignoreStat=false",
    "log.showSignature=false",
    # `git diff` looks into a submodule with a git of the submodule's own config.
    "diff.ignoreSubmodules=all",
)
# Each filter driver configured is emptied (no filter) and made optional, so git compares
# the file's own bytes instead of failing.
_FILTER_OFF = ("clean=", "smudge=", "process=", "required=false")
_TIMEOUT = 30.0


def git(root: Path, *args: str, timeout: float = _TIMEOUT) -> bytes | None:
    """git's stdout for `args` run in `root`, or None when git is missing or fails."""
    return git_all(root, args, timeout=timeout)[0]


def git_all(
    root: Path, *commands: tuple[str, ...], timeout: float = _TIMEOUT
) -> list[bytes | None]:
    """The stdout of each git command, run at the same time (each None when it fails)."""
    import subprocess  # ~5 ms at start-up, for the commands that run git at all

    program = _program()
    if program is None:
        return [None] * len(commands)
    environment = _environment()
    filters_off = _filters_off(root, program, environment, timeout)
    if filters_off is None:
        return [None] * len(commands)
    safe = [*_SAFE_CONFIG, *filters_off]
    running: list[subprocess.Popen[bytes] | None] = []
    for args in commands:
        try:
            running.append(
                subprocess.Popen(
                    _command(program, safe, args),
                    cwd=root,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=environment,
                )
            )
        except OSError:
            running.append(None)
    deadline = time.monotonic() + timeout
    results: list[bytes | None] = []
    for process in running:
        if process is None:
            results.append(None)
            continue
        try:
            out, _err = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            results.append(None)
            continue
        results.append(out if process.returncode == 0 else None)
    return results


def _command(program: str, safe: list[str], args: tuple[str, ...]) -> list[str]:
    command = [program]
    for setting in safe:
        command += ["-c", setting]
    return [*command, "--no-optional-locks", *args]


def _program() -> str | None:
    """The `git` on the first absolute `PATH` entry that has one; None when there is none."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder, "git")
        if os.path.isabs(folder) and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _filters_off(
    root: Path, program: str, environment: dict[str, str], timeout: float
) -> list[str] | None:
    """Settings that switch off every filter driver the repository's config names (reading
    the config runs nothing); None, and git is not run, when that cannot be told or a name
    cannot be written as `-c NAME=VALUE` (one with a `=`)."""
    import subprocess

    try:
        listed = subprocess.run(
            [program, "config", "-z", "--name-only", "--get-regexp", r"^filter\."],
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=environment,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if listed.returncode not in (0, 1):  # 1: no filter driver at all
        return None
    drivers = {
        name[len("filter.") : name.rindex(".")]
        for name in listed.stdout.decode("utf-8", "surrogateescape").split("\0")
        if name.count(".") >= 2
    }
    if any("=" in driver for driver in drivers):
        return None
    return [f"filter.{driver}.{setting}" for driver in sorted(drivers) for setting in _FILTER_OFF]


def _environment() -> dict[str, str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") or key in ("GIT_CEILING_DIRECTORIES",)
    }
    environment.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_PAGER="cat",
    )
    return environment
