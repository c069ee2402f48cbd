"""The recall index: `.moor/recall.sqlite`, an SQLite FTS5 table of memory documents.

A derived file: every row is made from a memory file, so deleting the index (or finding it
corrupt) costs a rebuild and nothing else. It lives in its own file rather than in the
journal so that a broken index can be thrown away without touching history.

This module stores and searches documents; what a document holds (fields, tokens, signals)
is the engine's business (`moor_engine.recall_index`). Rows are keyed by memory path and
carry the memory's content hash, so an update re-indexes only memories whose text changed.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from moor_store.inside import SQLITE_SIDE_FILES, sqlite_files_inside

INDEX_FILE: Final = "recall.sqlite"
SCHEMA_VERSION: Final = 1
# "moor" + 1: marks the file as moor's recall index, as the journal's id marks the journal.
APPLICATION_ID: Final = 0x6D6F6F73
FIELDS: Final = ("title", "questions", "refs", "body")
_BUSY_TIMEOUT_S: Final = 2.0
_SIDE_FILES: Final = SQLITE_SIDE_FILES

_SCHEMA: Final = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, "
    "hash TEXT NOT NULL, stat TEXT, declares INTEGER NOT NULL, meta TEXT NOT NULL, "
    "words TEXT NOT NULL, owner TEXT NOT NULL)",
    "CREATE INDEX docs_owner ON docs (owner)",
    "CREATE VIRTUAL TABLE fts USING fts5("
    + ", ".join(FIELDS)
    + ", tokenize = 'porter unicode61 remove_diacritics 2')",
    # Per owner, so that what a reader is told of the vocabulary comes from the documents
    # it may see only (the engine decides which owners those are).
    "CREATE TABLE vocab (word TEXT NOT NULL, owner TEXT NOT NULL, docs INTEGER NOT NULL, "
    "PRIMARY KEY (word, owner)) WITHOUT ROWID",
)


class IndexBroken(Exception):
    """The index file cannot be used (corrupt, another program's, a link): rebuild it."""


class IndexBusy(Exception):
    """Another process holds the index's write lock for longer than moor waits."""


@dataclass(frozen=True)
class Document:
    """One memory as indexed: its searchable fields (text already tokenised by the
    engine), its distinct words (for the vocabulary) and opaque metadata for ranking."""

    path: str
    content_hash: str
    fields: tuple[str, str, str, str]  # in the order of FIELDS
    words: frozenset[str]
    meta: Mapping[str, object]
    stat: Sequence[int] | None = None  # the file's stat key when read (None: never vouches)
    declares: bool = False  # it declares `supersedes:`
    owner: str | None = None  # its namespace, opaque here (None: shared)


@dataclass(frozen=True)
class Indexed:
    content_hash: str
    stat: str | None  # as `stat_text` spells it


@dataclass(frozen=True)
class Match:
    path: str
    bm25: float  # FTS5's bm25(): lower is better (negative)
    meta: Mapping[str, object]
    rowid: int = 0


def _is_busy(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(error) or "busy" in str(error)


def _busy_timeout() -> float:
    raw = os.environ.get("MOOR_WRITE_WAIT")
    if raw:
        with contextlib.suppress(ValueError):
            return min(max(0.0, float(raw)), _BUSY_TIMEOUT_S)
    return _BUSY_TIMEOUT_S


def check_contained(root: Path, state_dir: str) -> None:
    """NotInside unless `state_dir` is a folder inside `root` and the index's files in it
    are regular files, not links (the rule for every SQLite file moor opens)."""
    sqlite_files_inside(root, state_dir, INDEX_FILE)


def remove_files(path: Path) -> None:
    """Delete the index and its side files (it is derived: this loses nothing)."""
    for suffix in _SIDE_FILES:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


class RecallIndex:
    """One open index. `path` None: a private index in memory (when the file is busy)."""

    def __init__(self, path: Path | None, derivation: str) -> None:
        self.path = path
        self.derivation = derivation
        self.rebuilt = False  # the schema was (re)created by this open
        self._newest: dict[tuple[str, ...], str] = {}
        self._size: int | None = None
        target = ":memory:" if path is None else str(path)
        try:
            self._db = sqlite3.connect(target, isolation_level=None, timeout=_busy_timeout())
        except sqlite3.Error as error:
            raise IndexBroken(f"cannot open {path}: {error}") from error
        try:
            self._open()
        except sqlite3.Error as error:
            self._db.close()
            if _is_busy(error):
                raise IndexBusy(str(error)) from error
            raise IndexBroken(str(error)) from error
        except IndexBroken:
            self._db.close()
            raise

    def _open(self) -> None:
        db = self._db
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        if app_id not in (0, APPLICATION_ID):
            raise IndexBroken(f"a SQLite file of another program (application_id {app_id:#x})")
        if self.path is not None:
            db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA temp_store = MEMORY")
        current = self._meta("derivation") if self._tables() else None
        if current == self.derivation and self._meta("schema_version") == str(SCHEMA_VERSION):
            return
        with self._transaction():
            if self._tables() and self._meta("derivation") == self.derivation:
                return  # another process built it meanwhile
            for name in ("fts", "docs", "vocab", "meta"):
                db.execute(f"DROP TABLE IF EXISTS {name}")
            for statement in _SCHEMA:
                db.execute(statement)
            db.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [("schema_version", str(SCHEMA_VERSION)), ("derivation", self.derivation)],
            )
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            self.rebuilt = True

    def _tables(self) -> set[str]:
        rows = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {row[0] for row in rows}

    def _meta(self, key: str) -> str | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None
        return None if row is None else str(row[0])

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()

    def _guard(self, action: str) -> contextlib.AbstractContextManager[None]:
        return _translated(action)

    # -- what is indexed ---------------------------------------------------------------------

    def hashes(self) -> dict[str, str]:
        """Memory path -> the content hash it was indexed with."""
        return {path: row.content_hash for path, row in self.indexed().items()}

    def indexed(self) -> dict[str, Indexed]:
        """Memory path -> the content hash and the stat key it was indexed with."""
        with self._guard("read"):
            rows = self._db.execute("SELECT path, hash, stat FROM docs").fetchall()
        return {path: Indexed(content_hash, stat) for path, content_hash, stat in rows}

    def restat(self, stats: Mapping[str, Sequence[int] | None]) -> None:
        """Record new stat keys of documents whose content did not change."""
        with self._guard("write"), self._transaction() as db:
            db.executemany(
                "UPDATE docs SET stat = ? WHERE path = ?",
                [(stat_text(stat), path) for path, stat in stats.items()],
            )

    def declaring(self) -> list[str]:
        """Paths of the documents that declare `supersedes:`."""
        with self._guard("read"):
            rows = self._db.execute("SELECT path FROM docs WHERE declares ORDER BY path")
            return [str(row[0]) for row in rows]

    def update(self, documents: Sequence[Document], removed: Iterable[str]) -> None:
        """Put `documents` in (replacing rows of the same path) and take `removed` out, in
        one transaction."""
        gone = [*removed, *(d.path for d in documents)]
        self._newest = {}
        self._size = None
        with self._guard("write"), self._transaction() as db:
            for path in gone:
                row = db.execute(
                    "SELECT id, words, owner FROM docs WHERE path = ?", (path,)
                ).fetchone()
                if row is None:
                    continue
                db.execute("DELETE FROM fts WHERE rowid = ?", (row[0],))
                db.execute("DELETE FROM docs WHERE id = ?", (row[0],))
                words = row[1].split()
                db.executemany(
                    "UPDATE vocab SET docs = docs - 1 WHERE word = ? AND owner = ?",
                    ((w, row[2]) for w in words),
                )
            if gone:
                db.execute("DELETE FROM vocab WHERE docs <= 0")
            for document in documents:
                words = " ".join(sorted(document.words))
                owner = _owner_text(document.owner)
                cursor = db.execute(
                    "INSERT INTO docs (path, hash, stat, declares, meta, words, owner) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        document.path,
                        document.content_hash,
                        stat_text(document.stat),
                        int(document.declares),
                        json.dumps(document.meta, sort_keys=True),
                        words,
                        owner,
                    ),
                )
                db.execute(
                    "INSERT INTO fts (rowid, title, questions, refs, body) VALUES (?, ?, ?, ?, ?)",
                    (cursor.lastrowid, *document.fields),
                )
                db.executemany(
                    "INSERT INTO vocab (word, owner, docs) VALUES (?, ?, 1) "
                    "ON CONFLICT (word, owner) DO UPDATE SET docs = docs + 1",
                    ((w, owner) for w in document.words),
                )

    # -- searching ---------------------------------------------------------------------------

    def search(
        self, expression: str, weights: Sequence[float], limit: int, offset: int = 0
    ) -> list[Match]:
        """Documents matching an FTS5 expression, best bm25 first (then path). Ranked on the
        FTS table alone, documents fetched for the page only: joining every match to its
        row before sorting cost three times as much."""
        columns = ", ".join(f"{w:g}" for w in weights)
        with self._guard("search"):
            ranked = self._db.execute(
                f"SELECT rowid, bm25(fts, {columns}) AS score FROM fts WHERE fts MATCH ? "
                "ORDER BY score, rowid LIMIT ? OFFSET ?",
                (expression, limit, offset),
            ).fetchall()
            if not ranked:
                return []
            marks = ", ".join("?" * len(ranked))
            rows = self._db.execute(
                f"SELECT id, path, meta FROM docs WHERE id IN ({marks})",
                [rowid for rowid, _score in ranked],
            ).fetchall()
        documents = {rowid: (path, meta) for rowid, path, meta in rows}
        matches = [
            Match(documents[rowid][0], float(score), json.loads(documents[rowid][1]), rowid)
            for rowid, score in ranked
            if rowid in documents
        ]
        matches.sort(key=lambda m: (m.bm25, m.path))
        return matches

    def matching(self, expression: str, rowids: Sequence[int]) -> set[int]:
        """Which of the documents `rowids` match `expression`."""
        if not rowids:
            return set()
        marks = ", ".join("?" * len(rowids))
        with self._guard("search"):
            rows = self._db.execute(
                f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid IN ({marks})",
                (expression, *rowids),
            ).fetchall()
        return {int(row[0]) for row in rows}

    def owners(self) -> list[str | None]:
        """Every owner some document has (None: shared)."""
        with self._guard("read"):
            rows = self._db.execute("SELECT DISTINCT owner FROM docs ORDER BY owner").fetchall()
        return [_owner_of(str(row[0])) for row in rows]

    def count(self, expression: str, owners: Sequence[str | None]) -> int:
        """How many documents of these owners match `expression`."""
        marks, texts = _owned(owners)
        if not texts:
            return 0
        with self._guard("search"):
            # CROSS JOIN keeps the matches as the outer loop: left to itself the planner walks
            # the owner index and runs the full-text query once per document (5 ms at 1,000).
            row = self._db.execute(
                "SELECT count(*) FROM fts CROSS JOIN docs ON docs.id = fts.rowid "
                f"WHERE fts MATCH ? AND docs.owner IN ({marks})",
                (expression, *texts),
            ).fetchone()
        return int(row[0])

    def words_between(
        self, low: str, high: str, owners: Sequence[str | None], limit: int = 2000
    ) -> list[tuple[str, int]]:
        """Words in [low, high) of the documents of these owners, with how many of those
        documents use each."""
        marks, texts = _owned(owners)
        if not texts:
            return []
        with self._guard("read"):
            rows = self._db.execute(
                "SELECT word, sum(docs) FROM vocab WHERE word >= ? AND word < ? "
                f"AND owner IN ({marks}) GROUP BY word ORDER BY word LIMIT ?",
                (low, high, *texts, limit),
            ).fetchall()
        return [(str(w), int(n)) for w, n in rows]

    def documents(self, owners: Sequence[str | None]) -> int:
        """How many documents these owners have."""
        marks, texts = _owned(owners)
        if not texts:
            return 0
        with self._guard("read"):
            row = self._db.execute(
                f"SELECT count(*) FROM docs WHERE owner IN ({marks})", texts
            ).fetchone()
        return int(row[0])

    def size(self) -> int:
        """How many documents (read once per open and update)."""
        if self._size is None:
            with self._guard("read"):
                self._size = int(self._db.execute("SELECT count(*) FROM docs").fetchone()[0])
        return self._size

    def newest_created(self, owners: Sequence[str | None]) -> str | None:
        """The latest `created` of the documents of these owners (read once per open and
        update)."""
        marks, texts = _owned(owners)
        if not texts:
            return None
        key = tuple(texts)
        if key not in self._newest:
            with self._guard("read"):
                row = self._db.execute(
                    "SELECT max(json_extract(meta, '$.created')) FROM docs "
                    f"WHERE owner IN ({marks})",
                    texts,
                ).fetchone()
            self._newest[key] = "" if row is None or row[0] is None else str(row[0])
        return self._newest[key] or None

    def references(self) -> dict[str, list[str]]:
        """Memory path -> the references its document was indexed with (its `about:`)."""
        with self._guard("read"):
            rows = self._db.execute("SELECT path, json_extract(meta, '$.refs') FROM docs")
            found = rows.fetchall()
        return {path: [str(r) for r in json.loads(refs or "[]")] for path, refs in found}


def _owner_text(owner: str | None) -> str:
    # JSON, so that shared (null) is never any owner's spelling, not even "".
    return json.dumps(owner)


def _owner_of(text: str) -> str | None:
    value = json.loads(text)
    return value if isinstance(value, str) else None


def _owned(owners: Sequence[str | None]) -> tuple[str, list[str]]:
    texts = sorted({_owner_text(owner) for owner in owners})
    return ", ".join("?" * len(texts)), texts


def stat_text(stat: Sequence[int] | None) -> str | None:
    """A stat key as the index stores it (compared as text: no parse per row)."""
    return None if stat is None else ",".join(str(part) for part in stat)


@contextlib.contextmanager
def _translated(action: str) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as error:
        if _is_busy(error):
            raise IndexBusy(f"cannot {action} the recall index: {error}") from error
        raise IndexBroken(f"cannot {action} the recall index: {error}") from error
