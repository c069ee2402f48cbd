"""Running git on a workspace moor does not trust: nothing the repository configures runs.

A repository's own config can name commands git runs on its behalf (`core.fsmonitor`
runs on `ls-files` and `status`; hooks, external diff drivers and textconv filters on
other commands). Opening a folder in an editor must never run them, so every call here
overrides each one, ignores the system and global config, and never prompts.
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
)
_TIMEOUT = 30.0


def git(root: Path, *args: str, timeout: float = _TIMEOUT) -> bytes | None:
    """git's stdout for `args` run in `root`, or None when git is missing or fails."""
    return git_all(root, args, timeout=timeout)[0]


def git_all(
    root: Path, *commands: tuple[str, ...], timeout: float = _TIMEOUT
) -> list[bytes | None]:
    """The stdout of each git command, run at the same time (each None when it fails)."""
    import subprocess  # ~5 ms at start-up, for the commands that run git at all

    environment = _environment()
    running: list[subprocess.Popen[bytes] | None] = []
    for args in commands:
        try:
            running.append(
                subprocess.Popen(
                    _command(args),
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


def _command(args: tuple[str, ...]) -> list[str]:
    command = ["git"]
    for setting in _SAFE_CONFIG:
        command += ["-c", setting]
    return [*command, "--no-optional-locks", *args]


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
