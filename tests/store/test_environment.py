"""Which failures are the environment's (`moor_store.environment.kind_of`): the one place
that decides whether a journal may be set aside. The end-to-end behaviour on real full and
read-only disks is in tests/cli/test_full_disk.py and tests/cli/test_read_only_disk.py;
this covers the kinds a tmpfs cannot produce (a quota, an I/O error, no memory)."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest
from moor_store.environment import Unavailable, kind_of, unavailable


def _sqlite_error(code: int) -> sqlite3.Error:
    error = sqlite3.OperationalError("as SQLite reports it")
    error.sqlite_errorcode = code  # set by SQLite's C code on a real failure
    return error


@pytest.mark.parametrize(
    ("number", "kind"),
    [
        (errno.ENOSPC, "disk_full"),
        (errno.EDQUOT, "quota_exceeded"),
        (errno.EROFS, "read_only"),
        (errno.EIO, "io_error"),
        (errno.ENOMEM, "out_of_memory"),
    ],
)
def test_each_failing_errno_is_the_environment_s(tmp_path: Path, number: int, kind: str) -> None:
    assert kind_of(OSError(number, "failed"), tmp_path) == kind
    failure = unavailable(OSError(number, "failed"), tmp_path, "write x")
    assert isinstance(failure, Unavailable) and failure.code == kind
    assert failure.errno == number and "nothing was changed" in str(failure)


def test_sqlite_s_environment_codes_are_the_environment_s_and_corruption_is_not(
    tmp_path: Path,
) -> None:
    assert kind_of(_sqlite_error(sqlite3.SQLITE_FULL), tmp_path) == "disk_full"
    assert kind_of(_sqlite_error(sqlite3.SQLITE_NOMEM), tmp_path) == "out_of_memory"
    assert kind_of(_sqlite_error(sqlite3.SQLITE_READONLY), tmp_path) == "read_only"
    assert kind_of(_sqlite_error(sqlite3.SQLITE_CANTOPEN), tmp_path) == "io_error"
    assert kind_of(_sqlite_error(sqlite3.SQLITE_IOERR), tmp_path) == "io_error"
    # An I/O error with room on a writable disk stays an I/O error (the control for the
    # refinement a full or read-only disk gets: tests/cli).
    assert kind_of(_sqlite_error(sqlite3.SQLITE_IOERR_SHMSIZE), tmp_path) == "io_error"
    assert kind_of(MemoryError(), tmp_path) == "out_of_memory"
    for data in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_ERROR):
        assert kind_of(_sqlite_error(data), tmp_path) is None
    assert kind_of(OSError(errno.ENOENT, "gone"), tmp_path) is None
    assert kind_of(ValueError("a bug"), tmp_path) is None
