"""Running git on a workspace moor does not trust: nothing the repository configures runs.

A repository's own config can name commands git runs on its behalf (`core.fsmonitor`
runs on `ls-files` and `status`; hooks, external diff drivers and textconv filters on
other commands). Opening a folder in an editor must never run them, so every call here
overrides each one, ignores the system and global config, and never prompts.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "diff.external=",
    "protocol.allow=never",
)
_TIMEOUT = 30.0


def git(root: Path, *args: str, timeout: float = _TIMEOUT) -> bytes | None:
    """git's stdout for `args` run in `root`, or None when git is missing or fails."""
    command = ["git"]
    for setting in _SAFE_CONFIG:
        command += ["-c", setting]
    command += ["--no-optional-locks", *args]
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
    try:
        result = subprocess.run(
            command,
            cwd=root,
            capture_output=True,
            timeout=timeout,
            check=False,
            env=environment,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None
