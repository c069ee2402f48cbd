"""Which memory files changed since a long-running process last asked: Linux's inotify on
every folder `Workspace.memory_paths` walks.

The kernel queues an event inside the system call that changes a file (whoever makes it:
this process, an editor, `git checkout`), so the queue read at the start of a request holds
every change that ended before the request began: no mtime compared, no same-second edit
missed, no thread, no delay. What the events cannot vouch for is told as "everything may
have changed" (the caller lists and stats every memory, as a process without a watch does):
the queue overflowed; a folder was made, removed or renamed (the watched folders are
another set); a memory root was missing when the watch began. A memory file that is a link
or has other hard links is changed through a name outside these folders, which no event
here names: such a file is reported changed on every ask. Elsewhere than Linux, or with no
inotify left (`fs.inotify.max_user_*`), there is no watch: `start` returns None.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from moor_engine.workspace.workspace import Workspace

_IN_MODIFY: Final = 0x002
_IN_ATTRIB: Final = 0x004
_IN_CLOSE_WRITE: Final = 0x008
_IN_MOVED_FROM: Final = 0x040
_IN_MOVED_TO: Final = 0x080
_IN_CREATE: Final = 0x100
_IN_DELETE: Final = 0x200
_IN_DELETE_SELF: Final = 0x400
_IN_MOVE_SELF: Final = 0x800
_IN_Q_OVERFLOW: Final = 0x4000
_IN_IGNORED: Final = 0x8000
_IN_ONLYDIR: Final = 0x01000000
_IN_ISDIR: Final = 0x40000000
_IN_NONBLOCK: Final = 0o4000
_IN_CLOEXEC: Final = 0o2000000
_FILE_EVENTS: Final = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
)
_MASK: Final = _FILE_EVENTS | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
# Of a folder itself, or of the queue: the watched set no longer says what changed.
_LOST: Final = _IN_Q_OVERFLOW | _IN_IGNORED | _IN_DELETE_SELF | _IN_MOVE_SELF
_HEADER: Final = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)
_READ_SIZE: Final = 64 * 1024


@dataclass(frozen=True)
class Changed:
    """What changed since the last ask: these memory paths (relative, maybe gone), or, with
    `everything`, anything."""

    paths: frozenset[str] = frozenset()
    everything: bool = False


@dataclass
class MemoryWatch:
    """One inotify instance over a workspace's memory folders (`start`; `close` when done)."""

    fd: int
    folders: dict[int, str]  # watch descriptor -> folder relative to the root
    # Memory files whose changes no event here names (links, several hard links).
    unwatched: set[str] = field(default_factory=set)
    complete: bool = True  # every memory root was there to watch
    _lost: bool = False

    @classmethod
    def start(cls, workspace: Workspace) -> MemoryWatch | None:
        """A watch of every folder `workspace.memory_paths` walks, or None (no inotify)."""
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return None
        watch = cls(fd, {})
        try:
            for memory_root in workspace.config.memory_roots:
                if not watch._add_tree(libc, workspace, memory_root):
                    watch.complete = False
        except OSError:
            watch.close()
            return None
        return watch

    def _add_tree(self, libc: ctypes.CDLL, workspace: Workspace, memory_root: str) -> bool:
        """Watch `memory_root` and the folders below it that `memory_paths` walks (the same
        rule: not hidden, a UTF-8 name, not ignored). False if it is not a folder."""
        base = workspace.root / memory_root
        spelt = Path(memory_root).as_posix() == memory_root and memory_root not in ("", ".")
        if not base.is_dir() or not spelt or ".." in memory_root.split("/"):
            return False  # not there, or not spelt as `memory_paths` spells its folders
        pending = [memory_root]
        while pending:
            folder = pending.pop()
            path = os.fsencode(workspace.root / folder)
            wd = libc.inotify_add_watch(self.fd, path, _MASK)
            if wd < 0:
                raise OSError(ctypes.get_errno(), "inotify_add_watch")
            self.folders[wd] = folder
            with os.scandir(workspace.root / folder) as entries:
                for entry in entries:
                    rel = f"{folder}/{entry.name}"
                    if entry.is_dir(follow_symlinks=False):
                        if (
                            not entry.name.startswith(".")
                            and _is_utf8(rel)
                            and not workspace.is_ignored(rel)
                        ):
                            pending.append(rel)
                    elif entry.name.endswith(".md") and _unwatched(entry):
                        self.unwatched.add(rel)
        return True

    def changes(self) -> Changed:
        """What changed since the last call (or since `start`)."""
        paths: set[str] = set(self.unwatched)
        everything = self._lost or not self.complete
        while True:
            try:
                data = os.read(self.fd, _READ_SIZE)
            except BlockingIOError:
                break
            except OSError as error:
                if error.errno == errno.EINTR:
                    continue
                everything = True
                break
            if not data:
                break
            offset = 0
            while offset + _HEADER.size <= len(data):
                wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                raw = data[offset + _HEADER.size : offset + _HEADER.size + length]
                offset += _HEADER.size + length
                name = os.fsdecode(raw.rstrip(b"\0"))
                folder = self.folders.get(wd)
                if mask & _LOST or folder is None or mask & _IN_ISDIR or not _is_utf8(name):
                    everything = True
                elif name.endswith(".md"):
                    paths.add(f"{folder}/{name}")
        if everything:
            self._lost = True  # until the caller starts a new watch
        return Changed(frozenset(paths), everything)

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        # A server dropped without closing (a test's, in one process) gives its inotify
        # instance back: a user has 128 of them.
        self.close()


def _unwatched(entry: os.DirEntry[str]) -> bool:
    """A memory file whose bytes can change through a name outside the watched folders."""
    try:
        return entry.is_symlink() or entry.stat(follow_symlinks=False).st_nlink > 1
    except OSError:
        return True


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_LIBC: list[ctypes.CDLL | None] = []


def _libc() -> ctypes.CDLL | None:
    if not _LIBC:
        found: ctypes.CDLL | None = None
        if sys.platform.startswith("linux"):
            try:
                found = ctypes.CDLL(None, use_errno=True)  # libc is loaded: no search, no process
                found.inotify_init1.argtypes = [ctypes.c_int]
                found.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            except (OSError, AttributeError):
                found = None
        _LIBC.append(found)
    return _LIBC[0]
