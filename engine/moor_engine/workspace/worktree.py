"""What git already knows about the worktree, from one look: which tracked files it vouches
for (their bytes are the blob its index names) and a digest of every code file's state.

Looking for vanished code needs every file of a language up to date (`definition_index`);
a stat of each of 50,000 files from Python costs more than the rest of a check. git keeps
the stat of every tracked file in its index and compares them in C: `diff-files` names the
files whose worktree bytes may differ from the index (it compares size, mtimes, inode and
device, and re-reads a "racily clean" entry), so every other tracked file holds exactly
the blob `ls-files -s` gives for it.

Nothing is vouched for when git's answer could be wrong or inconsistent: entries marked
assume-unchanged or skip-worktree (git stops looking at those), unmerged entries, an index
rewritten while the commands ran, a `.git` that is not a folder (a linked worktree or
submodule: its index is elsewhere). Callers then stat those files themselves.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from moor_store.inside import read_inside, stat_inside

from moor_engine.workspace.filestat import RACY_WINDOW_NS, stat_key
from moor_engine.workspace.git import git_all
from moor_engine.workspace.gitignore import git_would_block

# `ls-files -s -v` entries: tag, mode, blob, stage, tab, path. Tag "H" is a cached entry
# git looks at ("h": assume-unchanged, "S": skip-worktree); mode 100644/100755 a file.
_LOOKED_AT = re.compile(r"(?:^|(?<=\0))H 100[0-7]{3} ([0-9a-f]+) 0\t([^\0]*)\0")
_NOT_LOOKED_AT = re.compile(r"(?:^|(?<=\0))[^H\0] [0-7]+ [0-9a-f]+ [0-3]\t([^\0]*)\0")
# One entry before its path: tag, mode, blob, stage.
_HEAD = re.compile(r"([^ ]) ([0-7]+) ([0-9a-f]+) ([0-3])")
# Every entry's path, as bytes.
_PATH = re.compile(rb"(?:^|(?<=\0))[^\0 ] [0-7]+ [0-9a-f]+ [0-3]\t([^\0]*)\0")
# Any stage but 0 (a path holding this text is also taken for unmerged: never vouched).
_UNMERGED = re.compile(r" [1-3]\t([^\0]*)\0")
# A file changed just now is read into the digest up to this size; a larger one is not
# digested at all (nothing is kept for that change set).
_RACY_READ_LIMIT = 8 * 1024 * 1024


@dataclass(frozen=True)
class Worktree:
    """One consistent look: the index's entries, the files that may differ from them, and
    the files git does not track but does not ignore."""

    root: Path
    tracked: bytes  # `ls-files -s -v`
    modified: bytes  # `diff-files --name-only`
    untracked: bytes  # `ls-files --others --exclude-standard`

    def vouched_blobs(self) -> dict[str, str]:
        """Path -> blob id of every tracked file git vouches is unchanged in the worktree."""
        text = self.tracked.decode("utf-8", "surrogateescape")
        unsure = set(self.modified.decode("utf-8", "surrogateescape").split("\0"))
        unmerged = set(_UNMERGED.findall(text))
        return {
            path: oid
            for oid, path in _LOOKED_AT.findall(text)
            if path not in unsure and path not in unmerged and path.isprintable()
        }

    @cached_property
    def index_digest(self) -> str:
        """A digest of git's index entries (paths, modes, blobs, stages, tags): equal
        digests, equal entries, so a file git vouched for then holds the same blob now
        unless `diff-files` names it."""
        return hashlib.sha256(self.tracked).hexdigest()[:32]

    @cached_property
    def changed_paths(self) -> frozenset[str]:
        """The files whose bytes may differ from git's index, and the untracked ones."""
        return frozenset(_decoded(self.modified) + _decoded(self.untracked))

    @cached_property
    def untracked_paths(self) -> frozenset[str]:
        return frozenset(_decoded(self.untracked))

    def vouched_blob(self, rel: str) -> str | None:
        """The blob of one file git vouches is unchanged (as `vouched_blobs` would give
        it), found without reading every entry; None when git does not vouch for it."""
        if rel in self.changed_paths or not rel.isprintable():
            return None
        entry = self.entry(rel)
        if entry is None:
            return None
        tag, mode, blob, stage = entry
        return blob if tag == "H" and mode.startswith("100") and stage == "0" else None

    def entry(self, rel: str) -> tuple[str, str, str, str] | None:
        """The tag, mode, blob and stage of git's first index entry for `rel`."""
        name = b"\t" + rel.encode("utf-8") + b"\0"
        at = self.tracked.find(name)
        while at >= 0:
            start = self.tracked.rfind(b"\0", 0, at) + 1
            head = _HEAD.fullmatch(self.tracked[start:at].decode("ascii", "replace"))
            if head is not None:  # else the name ended another path holding a tab
                tag, mode, blob, stage = head.groups()
                return tag, mode, blob, stage
            at = self.tracked.find(name, at + 1)
        return None

    def _unlooked(self) -> set[str]:
        """The paths of entries git does not look at or that are unmerged. Most indexes
        have none: counts in C tell, before two regular expressions over 50,000 entries
        would (every entry tagged "H" and at stage 0; with no tab in any path, each " 0\t"
        is an entry's stage — one count where a search per other stage cost three)."""
        tracked = self.tracked
        entries = tracked.count(b"\0")
        looked_at = tracked.startswith(b"H ") + tracked.count(b"\0H ")
        if looked_at == entries == tracked.count(b" 0\t") == tracked.count(b"\t"):
            return set()
        text = tracked.decode("utf-8", "surrogateescape")
        return {*_NOT_LOOKED_AT.findall(text), *_UNMERGED.findall(text)}

    def paths(self) -> list[str]:
        """Every file git lists, tracked or untracked and not ignored (as `ls-files
        --cached --others --exclude-standard` does), each once; a name that is not UTF-8
        is left out, as `Workspace.code_paths` leaves it out."""
        names = {*_PATH.findall(self.tracked), *self.untracked.split(b"\0")}
        names.discard(b"")
        found: list[str] = []
        for raw in names:
            try:
                found.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                continue
        return found

    def digest(self, also: str, ignored: Callable[[str], bool]) -> str | None:
        """A digest of the state of every file git lists — the index's blobs, and the stat
        of each file that may differ from them or is untracked (its bytes, when it changed
        too recently for a stat to vouch for it: git's "racy" window), leaving out what
        `ignored` leaves out (moor's own state changes on every check) — and of `also`.
        Equal digests: no listed file changed in between. None when a file cannot be
        looked at."""
        hasher = hashlib.sha256(also.encode("utf-8"))
        # The entries' own digest: a pass over a 50,000-file index's 3.5 MB costs 2-3 ms.
        hasher.update(b"\0" + self.index_digest.encode("ascii"))
        racy_after = time.time_ns() - RACY_WINDOW_NS
        listed = {*self.modified.split(b"\0"), *self.untracked.split(b"\0")} - {b""}
        # Entries git does not look at (assume-unchanged, skip-worktree) or that are
        # unmerged: `diff-files` would not name their changes.
        listed |= {os.fsencode(path) for path in self._unlooked()}
        for raw in sorted(listed):
            rel = os.fsdecode(raw)
            if ignored(rel):
                continue
            try:
                info = stat_inside(self.root, rel)
            except FileNotFoundError:
                hasher.update(b"\0missing\0" + raw)
                continue
            except OSError:
                return None
            key = stat_key(info)
            hasher.update(b"\0" + raw + b"\0" + ":".join(map(str, key)).encode())
            if key.mtime_ns >= racy_after or key.ctime_ns >= racy_after:
                try:
                    hasher.update(read_inside(self.root, rel, limit=_RACY_READ_LIMIT))
                except OSError:
                    return None
        return hasher.hexdigest()


def look(root: Path) -> Worktree | None:
    """git's view of the worktree, or None when git cannot give a consistent one."""
    index = root / ".git" / "index"
    before = _index_stat(index)
    if before is None or git_would_block(root):
        return None
    tracked, modified, untracked = git_all(
        root,
        ("ls-files", "-z", "-s", "-v", "--cached"),
        ("diff-files", "-z", "--name-only", "--ignore-submodules"),
        ("ls-files", "-z", "--others", "--exclude-standard"),
    )
    if tracked is None or modified is None or untracked is None:
        return None
    if _index_stat(index) != before:
        return None  # the index was rewritten meanwhile: the answers may not agree
    return Worktree(root, tracked, modified, untracked)


def _decoded(listing: bytes) -> list[str]:
    """The UTF-8 names of a `-z` listing (another name names no file moor counts)."""
    found: list[str] = []
    for raw in listing.split(b"\0"):
        if raw:
            try:
                found.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                continue
    return found


def blob_id(data: bytes, like: str) -> str:
    """The id git gives these bytes as a blob, in the hash of the id `like` (a SHA-1 or a
    SHA-256 repository): what `vouched_blobs` compares with."""
    name = "sha256" if len(like) == 64 else "sha1"
    header = b"blob %d\0" % len(data)
    return hashlib.new(name, header + data, usedforsecurity=False).hexdigest()


def _index_stat(index: Path) -> tuple[int, int, int, int] | None:
    try:
        info = os.stat(index, follow_symlinks=False)
    except OSError:
        return None
    if not index.parent.is_dir() or index.parent.is_symlink():
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
