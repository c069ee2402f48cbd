"""Whether a failure is the environment's — a full or read-only disk, a quota, an I/O error,
no memory — rather than the data's.

One answer for every file moor keeps: such a failure says nothing about the bytes already
on disk, so it changes nothing and is reported as itself (`Unavailable`, exit 2). Only data
that is unusable in itself (a corrupt journal, another program's file) may be set aside.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Final, Literal

from .refusal import RefusalError

__all__ = ["Kind", "Unavailable", "free_bytes", "kind_of", "unavailable"]

Kind = Literal["disk_full", "quota_exceeded", "read_only", "io_error", "out_of_memory"]

_BY_ERRNO: Final[dict[int, Kind]] = {
    errno.ENOSPC: "disk_full",
    errno.EDQUOT: "quota_exceeded",
    errno.EROFS: "read_only",
    errno.EIO: "io_error",
    errno.ENOMEM: "out_of_memory",
}
_ERRNO_OF: Final[dict[Kind, int]] = {kind: number for number, kind in _BY_ERRNO.items()}

# SQLite's primary result codes for a failing environment. SQLITE_CANTOPEN is one: SQLite
# cannot create the file or its -shm (a read-only folder, no space for a new inode), which
# says nothing about the journal's bytes. SQLITE_CORRUPT and SQLITE_NOTADB are not here:
# they are the data's.
# By number (SQLite's C API fixes them): importing sqlite3 for its names cost a prompt hook
# answered from its kept answer, which opens no database, ~15 ms (tests/store hold them).
_BY_SQLITE: Final[dict[int, Kind]] = {
    13: "disk_full",  # SQLITE_FULL
    8: "read_only",  # SQLITE_READONLY
    10: "io_error",  # SQLITE_IOERR
    14: "io_error",  # SQLITE_CANTOPEN
    7: "out_of_memory",  # SQLITE_NOMEM
}

# Below this much free space an I/O error is taken for a full disk: SQLite reports a -shm or
# WAL file it cannot grow as SQLITE_IOERR, not SQLITE_FULL.
_NEARLY_FULL: Final = 256 * 1024


class Unavailable(OSError, RefusalError):
    """The environment refused a write or an open: nothing was changed. `code` is the
    `Kind`; the message names the place, what was wanted and, for a full disk, the space."""

    line: int | None = None

    def __init__(self, kind: Kind, message: str, *, path: Path | None = None) -> None:
        super().__init__(_ERRNO_OF[kind], message)
        self.code: Kind = kind
        self.message = message
        self.path: Path | None = path

    def __str__(self) -> str:
        return self.message


def free_bytes(where: Path) -> int | None:
    """Bytes an unprivileged writer may still use on the filesystem holding `where`."""
    for place in (where, *where.parents):
        try:
            found = os.statvfs(place)
        except OSError:
            continue
        return found.f_bavail * found.f_frsize
    return None


def _read_only(where: Path) -> bool:
    for place in (where, *where.parents):
        try:
            return bool(os.statvfs(place).f_flag & os.ST_RDONLY)
        except OSError:
            continue
    return False


def kind_of(error: BaseException, where: Path) -> Kind | None:
    """The environment's failure `error` is, or None when it is not one (it is the data's,
    or a bug). `where`: the file or folder it happened at, to tell a full or read-only
    filesystem behind SQLite's generic I/O codes."""
    if isinstance(error, MemoryError):
        return "out_of_memory"
    if isinstance(error, Unavailable):
        return error.code
    if isinstance(error, OSError):
        return _BY_ERRNO.get(error.errno or 0)
    sqlite3 = sys.modules.get("sqlite3")  # not imported: no error of it can be here
    if sqlite3 is not None and isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        if code is None:
            return None
        kind = _BY_SQLITE.get(code & 0xFF)
        if kind in ("io_error", "read_only"):
            if _read_only(where):
                return "read_only"
            free = free_bytes(where)
            if free is not None and free < _NEARLY_FULL:
                return "disk_full"
        return kind
    return None


def unavailable(
    error: BaseException, where: Path, action: str, *, needed: int | None = None
) -> Unavailable | None:
    """`error` as an `Unavailable` saying what could not be done and why (None: it is not
    the environment's)."""
    kind = kind_of(error, where)
    if kind is None:
        return None
    return refusal(kind, where, action, needed=needed, detail=str(error))


def refusal(
    kind: Kind, where: Path, action: str, *, needed: int | None = None, detail: str = ""
) -> Unavailable:
    """An `Unavailable` of `kind` for `action` at `where`."""
    unchanged = "nothing was changed"
    if kind == "disk_full":
        free = free_bytes(where)
        space = "" if free is None else f"{free:,} bytes free"
        if needed is not None:
            space += ("; " if space else "") + f"at least {needed:,} bytes needed"
        message = (
            f"cannot {action}: the disk holding {where} is full"
            + (f" ({space})" if space else "")
            + f"; {unchanged}. Free some space and run moor again"
        )
    elif kind == "quota_exceeded":
        message = (
            f"cannot {action}: the disk quota for {where} is exhausted; {unchanged}. "
            "Free some space and run moor again"
        )
    elif kind == "read_only":
        message = f"cannot {action}: {where} is on a read-only filesystem; {unchanged}"
    elif kind == "out_of_memory":
        message = f"cannot {action}: out of memory; {unchanged}"
    else:
        message = (
            f"cannot {action}: an I/O error at {where}"
            + (f" ({detail})" if detail else "")
            + f"; {unchanged} and no file was set aside"
        )
    return Unavailable(kind, message, path=where)
