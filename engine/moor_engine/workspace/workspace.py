"""The workspace: where its root is, which files are memories, which files are code."""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from moor_engine.workspace.config import BUILTIN_IGNORES, Config, ConfigError, load_config
from moor_engine.workspace.git import git
from moor_engine.workspace.gitignore import (
    GitIgnores,
    compile_ignore_file,
    git_pattern,
    git_would_block,
)

# Re-exported: the root and its files are decided in `roots`, which imports nothing heavy.
from moor_engine.workspace.roots import JOURNAL_FILE as JOURNAL_FILE
from moor_engine.workspace.roots import LOCK_FILE as LOCK_FILE
from moor_engine.workspace.roots import STATE_DIR as STATE_DIR
from moor_engine.workspace.roots import find_root as find_root

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


def shown_name(rel: str) -> str:
    """A path as it can be printed and stored: bytes that are not UTF-8 as `\\xff`."""
    return os.fsencode(rel).decode("utf-8", "backslashreplace")


# Files an editor keeps beside the one it edits: Emacs's lock link `.#x.md` (made as soon
# as a buffer is modified) and auto-save `#x.md#`, backups `x.md~` (Emacs, Vim, nano),
# Vim's swap files `.x.md.swp` (`.swo`, … `.swa`) and its write probe `4913` (then 5036,
# 5159, … when taken), Kate's `.x.md.kate-swp`, JetBrains' safe-write `x.md___jb_tmp___`.
_EDITOR_FILE = re.compile(
    r"\.#.*|#.*#|.*~|\..+\.sw[a-p]|\..+\.kate-swp|.+___jb_(?:tmp|old)___",
    re.DOTALL,
)
_VIM_PROBE, _VIM_PROBE_STEP = 4913, 123


def is_editor_file(name: str) -> bool:
    """Whether a file's name is one an editor gives its own files (lock, swap, backup,
    auto-save, write probe): never a memory, never code, whatever its suffix."""
    if name.isdigit() and int(name) >= _VIM_PROBE:
        return (int(name) - _VIM_PROBE) % _VIM_PROBE_STEP == 0
    return _EDITOR_FILE.fullmatch(name) is not None


def _is_utf8(name: str) -> bool:
    """Whether a name from the file system is text (undecodable bytes arrive as surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass
class Workspace:
    """A workspace: its root, its settings, and what listing it found."""

    root: Path
    config: Config
    _virtualenvs: dict[str, bool] = field(default_factory=dict, repr=False, compare=False)
    # What the listings had to leave out or could not name (surfaces print them).
    warnings: list[str] = field(default_factory=list, repr=False, compare=False)
    # Folder -> whether the configured ignores leave it out: asked once per folder, not
    # once per file in it (50,000 files list in a third of the time).
    _ignored_folders: dict[str, bool] = field(default_factory=dict, repr=False, compare=False)

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

    @cached_property
    def _ignore_spec(self) -> GitIgnoreSpec:
        return compile_ignore_file("\n".join(self.config.ignore))

    @cached_property
    def gitignores(self) -> GitIgnores:
        return GitIgnores(self.root, warn=self._warn)

    def is_ignored(self, rel: str, folder: bool = False) -> bool:
        """Whether moor's configuration leaves `rel` out: a built-in ignore (tool state,
        dependency trees), an editor's own file (`is_editor_file`) or a configured `ignore`
        pattern, with git's ignore semantics (`build/` is any folder called build, `/build`
        only the top one, `!` re-includes)."""
        if "//" in rel or rel.startswith("/") or rel.endswith("/"):
            rel = "/".join(part for part in rel.split("/") if part)
        parent, _slash, name = rel.rpartition("/")
        if name in BUILTIN_IGNORES or (not folder and is_editor_file(name)):
            return True
        if parent and self._ignored_folder(parent):
            return True  # nothing inside an ignored folder counts
        # Called for every file of a large tree: an empty `ignore` is not matched at all.
        return self._has_ignores and self._ignore_spec.match_file(rel + ("/" if folder else ""))

    @cached_property
    def _has_ignores(self) -> bool:
        # Without a line that is a pattern, pathspec is not even imported (~10 ms of a
        # one-shot `moor recall`, which lists every memory).
        if all(git_pattern(line) is None for line in self.config.ignore):
            return False
        return any(pattern.include is not None for pattern in self._ignore_spec.patterns)

    def _ignored_folder(self, folder: str) -> bool:
        """Whether a built-in or configured ignore leaves out `folder` or a folder above it."""
        found = self._ignored_folders.get(folder)
        if found is None:
            parent, _slash, name = folder.rpartition("/")
            found = (
                name in BUILTIN_IGNORES
                or (bool(parent) and self._ignored_folder(parent))
                or (self._has_ignores and self._ignore_spec.match_file(folder + "/"))
            )
            self._ignored_folders[folder] = found
        return found

    def counts(self, rel: str, folder: bool = False) -> bool:
        """The one rule for which files count — where memories, moved code and completions
        are looked for, and which changes the editor's watcher reports: not left out by
        moor's configuration, not ignored by git, not a virtualenv. A memory file always
        counts (a memory is read even where git ignores it)."""
        if self.is_ignored(rel, folder):
            return False
        if not folder and self.is_memory_path(rel):
            return True
        parts = [part for part in rel.split("/") if part]
        folders = parts if folder else parts[:-1]
        if any(self._is_virtualenv("/".join(folders[: i + 1])) for i in range(len(folders))):
            return False
        return not self.gitignores.ignored(rel, folder=folder)

    def _is_virtualenv(self, folder: str) -> bool:
        """A folder holding pyvenv.cfg, whatever its name (remembered per folder)."""
        if folder not in self._virtualenvs:
            self._virtualenvs[folder] = (self.root / folder / "pyvenv.cfg").exists()
        return self._virtualenvs[folder]

    def is_memory_path(self, rel: str) -> bool:
        return (
            rel.endswith(".md")
            and not is_editor_file(rel.rpartition("/")[2])
            and any(rel == root or rel.startswith(root + "/") for root in self.config.memory_roots)
        )

    def memory_paths(self) -> list[str]:
        """Every memory file, sorted; hidden folders and ignored paths are skipped.

        A memory whose file name is not UTF-8 is listed under its escaped name (`\\xff`),
        which names no file: it is reported as unreadable, never silently left out."""
        found: list[str] = []
        for memory_root in self.config.memory_roots:
            base = self.root / memory_root
            if not base.is_dir():
                if self.config.roots_configured:
                    raise ConfigError(self._missing_root(memory_root))
                continue
            for folder, dirs, files in os.walk(base):
                rel_folder = Path(folder).relative_to(self.root).as_posix()
                dirs[:] = [
                    d
                    for d in dirs
                    if not d.startswith(".")
                    and self._named(f"{rel_folder}/{d}", "folder")
                    and not self.is_ignored(f"{rel_folder}/{d}")
                ]
                for name in files:
                    rel = f"{rel_folder}/{name}"
                    if not name.endswith(".md"):
                        continue
                    if not _is_utf8(name):
                        self._warn(
                            f"{shown_name(rel)}: the memory's file name is not UTF-8; "
                            "moor cannot read or record it under that name (rename it)"
                        )
                        found.append(shown_name(rel))
                    elif not self.is_ignored(rel):
                        found.append(rel)
        return sorted(set(found))

    def _named(self, rel: str, what: str) -> bool:
        """Whether `rel` has a UTF-8 name; if not, a warning names it and it is skipped."""
        if _is_utf8(rel):
            return True
        self._warn(f"{shown_name(rel)}: skipped this {what}: its name is not UTF-8")
        return False

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def _missing_root(self, memory_root: str) -> str:
        """A configured memory root that is not there: a typo must not read as "no
        memories" (and let `bind` drop every memory from moor.lock)."""
        message = (
            f"{self.config.source}: memory_roots: {memory_root!r} is not a folder in {self.root}"
        )
        parent = (self.root / memory_root).parent
        siblings = sorted(p.name for p in parent.iterdir() if p.is_dir()) if parent.is_dir() else []
        import difflib  # only to name a near miss

        close = difflib.get_close_matches(posixpath.basename(memory_root), siblings, n=1)
        if close:
            message += (
                f"; did you mean {posixpath.join(posixpath.dirname(memory_root), close[0])!r}?"
            )
        return message + " (create it, or correct memory_roots)"

    @cached_property
    def code_paths(self) -> list[str]:
        """Every file that moved code could now live in: git's view when there is one."""
        listed = self._git_files()
        if listed is None:
            listed = self._walk_files()
        return sorted(rel for rel in listed if self.is_code(rel))

    def is_code(self, rel: str) -> bool:
        """Whether a file git lists is one moved code could now live in."""
        return not self.is_ignored(rel) and not self.is_memory_path(rel)

    def _git_files(self) -> list[str] | None:
        if not (self.root / ".git").exists() or git_would_block(self.root):
            return None
        listed = git(self.root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        if listed is None:
            return None
        paths: list[str] = []
        for raw in listed.split(b"\0"):
            if not raw:
                continue
            try:
                paths.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                name = os.fsdecode(raw)
                if not self.is_memory_path(name):  # memory_paths reports those
                    self._named(name, "file")
        return paths

    def _walk_files(self) -> list[str]:
        """Every file, when git cannot list them: those that count (`counts`)."""
        found: list[str] = []
        for folder, dirs, files in os.walk(self.root):
            rel_folder = Path(folder).relative_to(self.root).as_posix()
            prefix = "" if rel_folder == "." else rel_folder + "/"
            dirs[:] = [
                d
                for d in dirs
                if not d.startswith(".")
                and self.counts(prefix + d, folder=True)
                and self._named(prefix + d, "folder")
            ]
            found.extend(
                prefix + name
                for name in files
                if self.counts(prefix + name)
                and (self.is_memory_path(prefix + name) or self._named(prefix + name, "file"))
            )
        return found
