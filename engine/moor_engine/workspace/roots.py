"""Where a workspace's root is and what moor keeps there: decided here, in a module that
imports nothing heavy, so a hook answered from its cache (`hook_answers`) finds the same
root `Workspace.open` does without importing the engine."""

from __future__ import annotations

from pathlib import Path

STATE_DIR = ".moor"
JOURNAL_FILE = "journal.sqlite"
LOCK_FILE = "moor.lock"
CONFIG_FILE = "moor.toml"
PYPROJECT = "pyproject.toml"  # its `[tool.moor]` holds the settings when there is no moor.toml
# What the settings and the bindings are read from: a kept answer rests on all three.
SETTINGS_FILES = (CONFIG_FILE, PYPROJECT, LOCK_FILE)
ROOT_MARKERS = (CONFIG_FILE, LOCK_FILE, ".git")


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` with moor.toml, moor.lock or .git; else `start`."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            return folder
    return start
