"""When a cache row may vouch for a file without reading it: the stat that git trusts.

Size and mtime alone are not enough: `cp -p`, `rsync -a`, `tar x` and `touch -r` put an
old mtime back on new bytes of the same size. Whatever sets an mtime moves the ctime, and
a file replaced by a rename is a new inode, so the key is what git's index compares:
size, mtime, ctime, inode and device. A file whose mtime is within the racy window of
the moment its row is written could change again within the same timestamp tick without
its stat moving ("racy clean", as git calls it): such a row never vouches. As in git, the
ctime is compared but not checked for raciness: two mtime-restoring writes within one
clock tick of each other and of a check is the one case left (memory:
parse-cache-keyed-by-stat-then-content).
"""

from __future__ import annotations

import os
from typing import NamedTuple

# Files changed less than this long before their cache row is written are re-hashed later.
RACY_WINDOW_NS = 2_000_000_000
_NEVER = -1  # an mtime no stat has: a row stored with it never matches


class StatKey(NamedTuple):
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int


def stat_key(info: os.stat_result) -> StatKey:
    return StatKey(
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        _signed64(info.st_ino),
        _signed64(info.st_dev),
    )


def unstatted(size: int) -> StatKey:
    """The key of bytes that came from no file (an editor's buffer, a commit)."""
    return StatKey(size, _NEVER, _NEVER, _NEVER, _NEVER)


def stored(key: StatKey, now_ns: int, window_ns: int = RACY_WINDOW_NS) -> StatKey:
    """The key to store in a cache row written at `now_ns`: one that never matches a
    stat again when the file was modified within the racy window."""
    if key.mtime_ns >= now_ns - window_ns:
        return key._replace(mtime_ns=_NEVER)
    return key


def _signed64(value: int) -> int:
    """SQLite integers are signed 64-bit; some file systems hand out larger inodes."""
    return value - (1 << 64) if value >= 1 << 63 else value
