"""What git ignores in a workspace: every `.gitignore` (nested ones too) and `.git/info/exclude`.

Patterns are matched by `pathspec`'s `GitIgnoreSpec`, which follows git's own rules (`**`,
anchoring, `dir/` patterns, `!` negations, the last matching pattern wins). Files are read
lazily, one folder at a time, and remembered until `forget`. As in git, a deeper file's
patterns override a shallower one's, and nothing inside an ignored folder can be
re-included by a negation.
"""

from __future__ import annotations

from pathlib import Path

from pathspec import GitIgnoreSpec

IGNORE_FILE = ".gitignore"
EXCLUDE_FILE = ".git/info/exclude"  # the repository's own, untracked ignore rules


class GitIgnores:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, list[GitIgnoreSpec]] = {}  # folder ("" for root) -> specs
        self._folders: dict[str, bool] = {}  # folder -> ignored (a cache)

    def forget(self) -> None:
        """Read the ignore files again when next asked (one of them changed)."""
        self._specs.clear()
        self._folders.clear()

    def ignored(self, rel: str, folder: bool = False) -> bool:
        """Whether git ignores the workspace-relative path `rel` (a folder when `folder`)."""
        parts = [part for part in rel.split("/") if part]
        if not parts:
            return False
        if self._in_ignored_folder(parts[:-1]):
            return True
        return self._decides(parts, folder)

    def _in_ignored_folder(self, parts: list[str]) -> bool:
        for depth in range(1, len(parts) + 1):
            key = "/".join(parts[:depth])
            if key not in self._folders:
                self._folders[key] = self._decides(parts[:depth], True)
            if self._folders[key]:
                return True
        return False

    def _decides(self, parts: list[str], folder: bool) -> bool:
        """The deepest ignore file with a pattern matching `parts` decides; none: kept."""
        for depth in range(len(parts) - 1, -1, -1):
            base = "/".join(parts[:depth])
            below = "/".join(parts[depth:]) + ("/" if folder else "")
            for spec in reversed(self._load(base)):
                verdict = spec.check_file(below).include
                if verdict is not None:
                    return verdict
        return False

    def _load(self, base: str) -> list[GitIgnoreSpec]:
        if base not in self._specs:
            files = [IGNORE_FILE] if base else [EXCLUDE_FILE, IGNORE_FILE]
            folder = self.root / base if base else self.root
            specs = []
            for name in files:
                try:
                    text = (folder / name).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                specs.append(GitIgnoreSpec.from_lines(text.splitlines()))
            self._specs[base] = specs
        return self._specs[base]
