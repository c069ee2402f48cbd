"""The workspace: where its root is, which files are memories, which files are code."""

from __future__ import annotations

import fnmatch
import os
import subprocess
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from moor_engine.config import BUILTIN_IGNORES, Config, load_config
from moor_engine.gitignore import GitIgnores

STATE_DIR = ".moor"
JOURNAL_FILE = "journal.sqlite"
LOCK_FILE = "moor.lock"
_ROOT_MARKERS = ("moor.toml", "moor.lock", ".git")


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` with moor.toml, moor.lock or .git; else `start`."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in _ROOT_MARKERS):
            return folder
    return start


@dataclass
class Workspace:
    root: Path
    config: Config

    @classmethod
    def open(cls, start: Path) -> Workspace:
        root = find_root(start)
        return cls(root=root, config=load_config(root))

    @property
    def lock_path(self) -> Path:
        return self.root / LOCK_FILE

    @property
    def journal_path(self) -> Path:
        return self.root / STATE_DIR / JOURNAL_FILE

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.root).as_posix()

    def is_ignored(self, rel: str) -> bool:
        parts = rel.split("/")
        if any(part in BUILTIN_IGNORES for part in parts):
            return True
        return any(
            fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, pattern.rstrip("/") + "/*")
            for pattern in self.config.ignore
        )

    def is_memory_path(self, rel: str) -> bool:
        return rel.endswith(".md") and any(
            rel == root or rel.startswith(root + "/") for root in self.config.memory_roots
        )

    def memory_paths(self) -> list[str]:
        """Every memory file, sorted; hidden folders and ignored paths are skipped."""
        found: list[str] = []
        for memory_root in self.config.memory_roots:
            base = self.root / memory_root
            if not base.is_dir():
                continue
            for folder, dirs, files in os.walk(base):
                rel_folder = Path(folder).relative_to(self.root).as_posix()
                dirs[:] = [
                    d
                    for d in dirs
                    if not d.startswith(".") and not self.is_ignored(f"{rel_folder}/{d}")
                ]
                for name in files:
                    rel = f"{rel_folder}/{name}"
                    if name.endswith(".md") and not self.is_ignored(rel):
                        found.append(rel)
        return sorted(set(found))

    @cached_property
    def code_paths(self) -> list[str]:
        """Every file that moved code could now live in: git's view when there is one."""
        listed = self._git_files()
        if listed is None:
            listed = self._walk_files()
        return sorted(
            rel for rel in listed if not self.is_ignored(rel) and not self.is_memory_path(rel)
        )

    def _git_files(self) -> list[str] | None:
        if not (self.root / ".git").exists():
            return None
        try:
            result = subprocess.run(
                ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                cwd=self.root,
                capture_output=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if result.returncode != 0:
            return None
        return [p for p in result.stdout.decode("utf-8", "replace").split("\0") if p]

    def _walk_files(self) -> list[str]:
        """Every file, when git cannot list them: skipping what a `.gitignore` would."""
        found: list[str] = []
        ignores = GitIgnores(self.root)
        for folder, dirs, files in os.walk(self.root):
            rel_folder = Path(folder).relative_to(self.root).as_posix()
            prefix = "" if rel_folder == "." else rel_folder + "/"
            dirs[:] = [
                d
                for d in dirs
                if not d.startswith(".")
                and d not in BUILTIN_IGNORES
                and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
                and not ignores.ignored(prefix + d, folder=True)
            ]
            found.extend(prefix + name for name in files if not ignores.ignored(prefix + name))
        return found
