"""A journal written by an older schema is migrated in place, its history kept, against a
real SQLite file shaped exactly as schema 1 left it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from moor_store.journal import SCHEMA_VERSION, CachedFile, Journal, NewEntry

# The parse cache table as schema 1 created it.
SCHEMA_1_FILES = """
CREATE TABLE files (
    path       TEXT PRIMARY KEY,
    size       INTEGER NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    sha        TEXT NOT NULL,
    derivation TEXT NOT NULL,
    payload    TEXT NOT NULL
)
"""


def schema_1_journal(path: Path) -> None:
    """A journal as moor with schema 1 left it: one entry, one cache row."""
    with Journal(path) as journal:
        journal.append([NewEntry("still", "a.py#f", address="addr1")])
    db = sqlite3.connect(path)
    with db:
        db.execute("DROP TABLE files")
        db.execute(SCHEMA_1_FILES)
        db.execute(
            "INSERT INTO files VALUES ('a.py', 10, 1000, 'sha1', 'd/1', '{}')",
        )
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    db.close()


def test_a_schema_1_journal_is_migrated_keeping_its_entries_and_its_rows_never_vouch(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    schema_1_journal(path)
    with Journal(path) as journal:
        assert [e.address for e in journal.entries()] == ["addr1"]
        row = journal.cached_file("a.py")
        assert row is not None
        assert (row.size, row.mtime_ns, row.sha) == (10, 1000, "sha1")
        # The stat fields schema 1 never had match no file's stat.
        assert (row.ctime_ns, row.inode, row.device) == (-1, -1, -1)
        journal.store_files([CachedFile("b.py", 1, 2, "sha2", "d/1", "{}", 3, 4, 5)])
        stored = journal.cached_file("b.py")
        assert stored is not None and (stored.ctime_ns, stored.inode, stored.device) == (3, 4, 5)
    db = sqlite3.connect(path)
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    db.close()
    assert version == (str(SCHEMA_VERSION),) and SCHEMA_VERSION == 2
    # Control: opening it again migrates nothing twice (a second ALTER would fail).
    with Journal(path) as journal:
        assert journal.cached_file("b.py") == stored
