"""A small real filesystem for a test: a tmpfs mounted on a temporary folder, which can be
filled to ENOSPC (then freed by exactly what a test wants) or remounted read-only, and is
always unmounted afterwards.

Mounting needs root. CI runs as root, so there a failing `mount` fails the test; elsewhere
(`os.geteuid() != 0`) the tests are skipped, saying why.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Workspace

_PAGE = 4096
_CHUNK = 64 * 1024


class Disk:
    """A mounted tmpfs of `size` bytes at `mount`."""

    def __init__(self, mount: Path) -> None:
        self.mount = mount
        self._filler = mount / ".filler"

    def workspace(self, name: str = "ws") -> Workspace:
        """A fresh workspace on this disk, as `moor init` leaves one."""
        root = self.mount / name
        root.mkdir()
        (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
        (root / "memories").mkdir()
        return Workspace(root)

    def free(self) -> int:
        found = os.statvfs(self.mount)
        return found.f_bavail * found.f_frsize

    def fill(self, leave: int = 0) -> None:
        """Write a filler file until the disk is full (ENOSPC), then give back `leave`
        bytes (rounded up to whole pages, tmpfs's unit)."""
        with open(self._filler, "ab", buffering=0) as filler:
            for size in (_CHUNK, _PAGE):
                block = b"\0" * size
                while True:
                    try:
                        filler.write(block)
                    except OSError as error:
                        assert error.errno == errno.ENOSPC, error
                        break
            if leave:
                filler.truncate(max(0, filler.tell() - -(-leave // _PAGE) * _PAGE))
        assert self.free() >= leave

    def empty(self) -> None:
        """Remove the filler: the disk has room again."""
        self._filler.unlink(missing_ok=True)

    def read_only(self) -> None:
        _mount("-o", "remount,ro", str(self.mount))

    def writable(self) -> None:
        _mount("-o", "remount,rw", str(self.mount))


def _mount(*args: str) -> None:
    run = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise RuntimeError(f"mount {' '.join(args)} failed ({run.returncode}): {run.stderr}")


@contextlib.contextmanager
def mounted_disk(where: Path, size: int = 8 * 1024 * 1024) -> Iterator[Disk]:
    """A tmpfs of `size` bytes mounted at `where` for the block's duration."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root, where these tests run)")
    where.mkdir(parents=True, exist_ok=True)
    try:
        _mount("-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where))
    except (RuntimeError, OSError) as error:
        pytest.fail(f"cannot mount a tmpfs as root, which these tests need: {error}")
    try:
        yield Disk(where)
    finally:
        # A process a test started may still hold a file there: detach lazily then.
        if subprocess.run(["umount", str(where)], capture_output=True, check=False).returncode:
            subprocess.run(["umount", "-l", str(where)], capture_output=True, check=True)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    with mounted_disk(tmp_path / "disk") as mounted:
        yield mounted


def snapshot(root: Path) -> dict[str, object]:
    """Every file under `root` and its bytes; for the journal, its history (the journal and
    sealed snapshots, not the parse cache a read may refresh). Left out: SQLite's -wal/-shm
    companions (opening a journal maps them) and the recall index (derived from memories)."""
    found: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or rel.endswith(("-wal", "-shm")) or "recall.sqlite" in rel:
            continue
        found[rel] = _history(path) if rel == ".moor/journal.sqlite" else path.read_bytes()
    return found


def _history(journal: Path) -> object:
    # Immutable: a read-only connection would still make -wal/-shm beside it. No moor is
    # running, and the last one to close folded its WAL in.
    wal = journal.with_name(journal.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0, "a WAL holds what the file lacks"
    db = sqlite3.connect(f"file:{journal}?immutable=1", uri=True)
    try:
        return (
            db.execute("SELECT * FROM journal ORDER BY seq").fetchall(),
            db.execute("SELECT * FROM snapshots ORDER BY address").fetchall(),
        )
    finally:
        db.close()
