"""The recall index: `.moor/recall.sqlite`, an SQLite FTS5 table of memory documents.

A derived file: every row is made from a memory file, so deleting the index (or finding it
corrupt) costs a rebuild and nothing else. It lives in its own file rather than in the
journal so that a broken index can be thrown away without touching history.

This module stores and searches documents; what a document holds (fields, tokens, signals)
is the engine's business (`moor_engine.memory.recall_index`). Rows are keyed by memory path and
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

from moor_store import recall_postings as postings
from moor_store.environment import unavailable
from moor_store.inside import SQLITE_SIDE_FILES, sqlite_files_inside

INDEX_FILE: Final = "recall.sqlite"
SCHEMA_VERSION: Final = 1
# "moor" + 1: marks the file as moor's recall index, as the journal's id marks the journal.
APPLICATION_ID: Final = 0x6D6F6F73
FIELDS: Final = ("title", "questions", "refs", "body")
_BUSY_TIMEOUT_S: Final = 2.0
_BATCH: Final = 256  # documents tokenised at once
_SIDE_FILES: Final = SQLITE_SIDE_FILES
# Matches' decoded metadata kept by an open index (a kept one is asked on every search): at
# most this many documents', then forgotten at once and read again.
_KEPT_METAS: Final = 4096

_SCHEMA: Final = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, "
    "hash TEXT NOT NULL, stat TEXT, declares INTEGER NOT NULL, meta TEXT NOT NULL, "
    "words TEXT NOT NULL, owner TEXT NOT NULL, terms TEXT NOT NULL, length INTEGER NOT NULL)",
    "CREATE INDEX docs_owner ON docs (owner)",
    "CREATE VIRTUAL TABLE fts USING fts5("
    + ", ".join(FIELDS)
    + f", tokenize = '{postings.TOKENIZE}')",
    # Per owner, so that what a reader is told of the vocabulary comes from the documents
    # it may see only (the engine decides which owners those are).
    "CREATE TABLE vocab (word TEXT NOT NULL, owner TEXT NOT NULL, docs INTEGER NOT NULL, "
    "PRIMARY KEY (word, owner)) WITHOUT ROWID",
    *postings.SCHEMA,
)


class IndexBroken(Exception):
    """The index file cannot be used (corrupt, another program's, a link): rebuild it."""


class IndexBusy(Exception):
    """Another process holds the index's write lock for longer than moor waits."""


class IndexUnavailable(IndexBusy):
    """The environment refuses the index file (a full or read-only disk, an I/O error): as
    when busy, the file is kept and the run indexes in memory."""


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


@dataclass(frozen=True)
class Ranking:
    """A query's best documents, and whether they are exactly those every match scored by
    bm25 would give (`recall_postings`: else a budget of postings was spent first)."""

    matches: list[Match]
    exact: bool
    postings_read: int


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

    def __init__(
        self,
        path: Path | None,
        derivation: str,
        weights: Sequence[float],
        *,
        any_thread: bool = False,
    ) -> None:
        """`any_thread`: used from more than one thread, one at a time (the caller's lock)."""
        self.path = path
        # Each field's weight is in every posting (`recall_postings`): other weights are
        # another index.
        self.weights = tuple(float(w) for w in weights)
        self.derivation = f"{derivation} weights {json.dumps(self.weights)}"
        self.rebuilt = False  # the schema was (re)created by this open
        self._newest: dict[tuple[str, ...], str] = {}
        self._documents: dict[tuple[str, ...], int] = {}
        self._size: int | None = None
        self._tokens: int | None = None
        self._owners: list[str | None] | None = None
        self._metas: dict[int, tuple[str, Mapping[str, object]]] = {}
        self._data_version: int | None = None
        target = ":memory:" if path is None else str(path)
        try:
            self._db = sqlite3.connect(
                target,
                isolation_level=None,
                timeout=_busy_timeout(),
                check_same_thread=not any_thread,
            )
        except sqlite3.Error as error:
            _raise_unavailable(error, path, "open")
            raise IndexBroken(f"cannot open {path}: {error}") from error
        try:
            self._open()
        except sqlite3.Error as error:
            self._db.close()
            if _is_busy(error):
                raise IndexBusy(str(error)) from error
            _raise_unavailable(error, path, "open")
            raise IndexBroken(str(error)) from error
        except IndexBroken:
            self._db.close()
            raise
        self._stems = postings.Stems(self._db, FIELDS)

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
            for name in ("fts", "docs", "vocab", *postings.TABLES, "meta"):
                db.execute(f"DROP TABLE IF EXISTS {name}")
            for statement in _SCHEMA:
                db.execute(statement)
            db.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [
                    ("schema_version", str(SCHEMA_VERSION)),
                    ("derivation", self.derivation),
                    ("tokens", "0"),
                ],
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
            if self._db.in_transaction:  # SQLite may have rolled back already (disk full)
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()

    def written_elsewhere(self) -> bool:
        """Whether another connection (another moor) committed to the index since this one
        last asked; the counts read once per open are read again."""
        with self._guard("read"):
            version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
        changed = self._data_version is not None and version != self._data_version
        self._data_version = version
        if changed:
            self._forget()
        return changed

    def _forget(self) -> None:
        """Drop what was read once per open: the index changed."""
        self._newest, self._documents, self._metas = {}, {}, {}
        self._size, self._tokens, self._owners = None, None, None

    def _guard(self, action: str) -> contextlib.AbstractContextManager[None]:
        return _translated(action, self.path)

    # -- what is indexed ---------------------------------------------------------------------

    def hashes(self) -> dict[str, str]:
        """Memory path -> the content hash it was indexed with."""
        return {path: row.content_hash for path, row in self.indexed().items()}

    def indexed(self) -> dict[str, Indexed]:
        """Memory path -> the content hash and the stat key it was indexed with."""
        with self._guard("read"):
            rows = self._db.execute("SELECT path, hash, stat FROM docs").fetchall()
        return {path: Indexed(content_hash, stat) for path, content_hash, stat in rows}

    def indexed_rows(self, paths: Sequence[str]) -> dict[str, Indexed]:
        """`indexed` of these paths only (those in the index)."""
        found: dict[str, Indexed] = {}
        with self._guard("read"):
            for start in range(0, len(paths), 500):
                chunk = paths[start : start + 500]
                rows = self._db.execute(
                    "SELECT path, hash, stat FROM docs WHERE path IN "
                    f"({', '.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                found.update({path: Indexed(digest, stat) for path, digest, stat in rows})
        return found

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
        self._forget()
        with self._guard("write"), self._transaction() as db:
            tokens = int(self._meta("tokens") or 0)
            for path in gone:
                row = db.execute(
                    "SELECT id, words, owner, terms, length FROM docs WHERE path = ?", (path,)
                ).fetchone()
                if row is None:
                    continue
                db.execute("DELETE FROM fts WHERE rowid = ?", (row[0],))
                db.execute("DELETE FROM docs WHERE id = ?", (row[0],))
                postings.remove(db, row[0], (int(t) for t in row[3].split()))
                tokens -= int(row[4])
                words = row[1].split()
                db.executemany(
                    "UPDATE vocab SET docs = docs - 1 WHERE word = ? AND owner = ?",
                    ((w, row[2]) for w in words),
                )
            if gone:
                db.execute("DELETE FROM vocab WHERE docs <= 0")
                postings.prune(db)
            for start in range(0, len(documents), _BATCH):
                batch = documents[start : start + _BATCH]
                counts = self._stems.documents([d.fields for d in batch])
                for document, stems in zip(batch, counts, strict=True):
                    tokens += self._insert(db, document, stems)
            db.execute("UPDATE meta SET value = ? WHERE key = 'tokens'", (str(tokens),))

    def _insert(self, db: sqlite3.Connection, document: Document, stems: postings.Counts) -> int:
        """One document's rows; its length in tokens."""
        words = " ".join(sorted(document.words))
        owner = _owner_text(document.owner)
        cursor = db.execute(
            "INSERT INTO docs (path, hash, stat, declares, meta, words, owner, terms, length) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, '', 0)",
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
        rowid = int(cursor.lastrowid or 0)
        db.execute(
            "INSERT INTO fts (rowid, title, questions, refs, body) VALUES (?, ?, ?, ?, ?)",
            (rowid, *document.fields),
        )
        term_ids, length = postings.add(db, rowid, stems, self.weights)
        db.execute(
            "UPDATE docs SET terms = ?, length = ? WHERE id = ?",
            (" ".join(map(str, term_ids)), length, rowid),
        )
        db.executemany(
            "INSERT INTO vocab (word, owner, docs) VALUES (?, ?, 1) "
            "ON CONFLICT (word, owner) DO UPDATE SET docs = docs + 1",
            ((w, owner) for w in document.words),
        )
        return length

    # -- searching ---------------------------------------------------------------------------

    def ranked(
        self,
        terms: Sequence[str],
        count: int,
        *,
        budget: int = postings.POSTINGS_BUDGET,
    ) -> Ranking:
        """The `count` documents with the best bm25 for `terms` (each a phrase, OR-ed), best
        first, ties by row: one order, of which a smaller `count` gives a prefix. From the
        postings (`recall_postings.best`) when every term is one stem; else (a term FTS5
        splits into several tokens) from FTS5 scoring every match, which is exact too."""
        with self._guard("search"):
            stems = self._stems.of_terms(terms)
            if terms and all(len(s) == 1 for s in stems):
                found = postings.best(
                    self._db,
                    [s[0] for s in stems],
                    count,
                    self.size(),
                    self._total(),
                    budget=budget,
                )
                scored, exact, read = found.scores, found.exact, found.postings_read
            else:
                scored, exact, read = self._bm25_every_match(terms, count), True, 0
            matches = self._matches(scored)
        return Ranking(matches, exact, read)

    def _bm25_every_match(self, terms: Sequence[str], count: int) -> list[tuple[int, float]]:
        if not terms:
            return []
        columns = ", ".join(repr(w) for w in self.weights)
        rows = self._db.execute(
            f"SELECT rowid, bm25(fts, {columns}) AS score FROM fts WHERE fts MATCH ? "
            "ORDER BY score, rowid LIMIT ?",
            (phrases(terms), count),
        ).fetchall()
        return [(int(rowid), -float(score)) for rowid, score in rows]

    def _matches(self, scored: Sequence[tuple[int, float]]) -> list[Match]:
        """The documents' paths and metadata, decoded once per open and update (a rowid is
        another document only after an update, which forgets them)."""
        if not scored:
            return []
        metas = self._metas
        unread = [rowid for rowid, _score in scored if rowid not in metas]
        if unread:
            if len(metas) + len(unread) > _KEPT_METAS:
                metas.clear()
                unread = [rowid for rowid, _score in scored]
            marks = ", ".join("?" * len(unread))
            rows = self._db.execute(
                f"SELECT id, path, meta FROM docs WHERE id IN ({marks})", unread
            )
            for rowid, path, meta in rows:
                metas[rowid] = (path, json.loads(meta))
        return [
            Match(metas[rowid][0], -score, metas[rowid][1], rowid)
            for rowid, score in scored
            if rowid in metas
        ]

    def _total(self) -> int:
        """How many tokens all documents hold (FTS5's column total, -1)."""
        if self._tokens is None:
            self._tokens = int(self._meta("tokens") or 0)
        return self._tokens

    def containing(self, terms: Sequence[str], rowids: Sequence[int]) -> dict[int, set[str]]:
        """Which of `terms` each of the documents `rowids` matches (as its phrase would)."""
        found: dict[int, set[str]] = {rowid: set() for rowid in rowids}
        if not rowids or not terms:
            return found
        with self._guard("search"):
            stems = self._stems.of_terms(terms)
            single = {term: s[0] for term, s in zip(terms, stems, strict=True) if len(s) == 1}
            held = postings.containing(self._db, list(single.values()), rowids)
            marks = ", ".join("?" * len(rowids))
            for term in terms:
                if term in single:
                    for rowid in rowids:
                        if single[term] in held[rowid]:
                            found[rowid].add(term)
                    continue
                rows = self._db.execute(
                    f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid IN ({marks})",
                    (phrases([term]), *rowids),
                )
                for (rowid,) in rows:
                    found[int(rowid)].add(term)
        return found

    def owners(self) -> list[str | None]:
        """Every owner some document has (None: shared; read once per open and update)."""
        if self._owners is None:
            with self._guard("read"):
                # One index probe per owner, not a walk of every document's entry.
                rows = self._db.execute(
                    "WITH RECURSIVE o (owner) AS (SELECT min(owner) FROM docs UNION ALL "
                    "SELECT (SELECT min(owner) FROM docs WHERE owner > o.owner) FROM o "
                    "WHERE o.owner IS NOT NULL) SELECT owner FROM o WHERE owner IS NOT NULL"
                ).fetchall()
            self._owners = [_owner_of(str(row[0])) for row in rows]
        return list(self._owners)

    def count(self, term: str, owners: Sequence[str | None]) -> int:
        """How many documents of these owners match the phrase `term`."""
        marks, texts = _owned(owners)
        if not texts:
            return 0
        with self._guard("search"):
            stems = self._stems.of_terms([term])[0]
            if len(stems) == 1 and set(texts) >= set(map(_owner_text, self.owners())):
                return postings.documents_holding(self._db, stems[0])
            # CROSS JOIN keeps the matches as the outer loop: left to itself the planner walks
            # the owner index and runs the full-text query once per document (5 ms at 1,000).
            row = self._db.execute(
                "SELECT count(*) FROM fts CROSS JOIN docs ON docs.id = fts.rowid "
                f"WHERE fts MATCH ? AND docs.owner IN ({marks})",
                (phrases([term]), *texts),
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
        """How many documents these owners have (read once per open and update: a kept
        index is asked on every search)."""
        marks, texts = _owned(owners)
        if not texts:
            return 0
        key = tuple(texts)
        if key not in self._documents:
            with self._guard("read"):
                row = self._db.execute(
                    f"SELECT count(*) FROM docs WHERE owner IN ({marks})", texts
                ).fetchone()
            self._documents[key] = int(row[0])
        return self._documents[key]

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


def phrases(terms: Sequence[str]) -> str:
    """An FTS5 expression matching any of `terms`, each a phrase (quotes doubled)."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


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
    return None if stat is None else ",".join(map(str, stat))


def _raise_unavailable(error: sqlite3.Error, path: Path | None, action: str) -> None:
    """IndexUnavailable when `error` is the environment's, not the file's."""
    if path is None:
        return
    failure = unavailable(error, path, f"{action} the recall index")
    if failure is not None:
        raise IndexUnavailable(str(failure)) from error


@contextlib.contextmanager
def _translated(action: str, path: Path | None) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as error:
        if _is_busy(error):
            raise IndexBusy(f"cannot {action} the recall index: {error}") from error
        _raise_unavailable(error, path, action)
        raise IndexBroken(f"cannot {action} the recall index: {error}") from error
