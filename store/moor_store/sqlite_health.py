"""A read-only look at one of moor's SQLite files (`moor doctor`): SQLite's own integrity
check, through a `mode=ro` connection, so nothing is written, created or set aside."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote


def integrity(path: Path) -> list[str] | None:
    """None when there is no such file; [] when SQLite says it is sound; else what is wrong
    (at most 20 of `PRAGMA integrity_check`'s lines, or why it could not be read)."""
    if path.is_symlink() or not path.is_file():
        return None
    uri = "file:" + quote(str(path.absolute())) + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=5.0)
    except sqlite3.Error as error:
        return [f"cannot be opened: {error}"]
    try:
        lines = [str(row[0]) for row in db.execute("PRAGMA integrity_check(20)")]
    except sqlite3.Error as error:
        return [f"cannot be read: {error}"]
    finally:
        db.close()
    return [line for line in lines if line != "ok"]
