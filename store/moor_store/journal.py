"""The local journal: `.moor/journal.sqlite` (docs/files.md).

One SQLite file holds three things, none of which the team needs to share (``moor.lock`` is
the shared record; this file is rebuildable from it and from the workspace):

* ``journal`` — the append-only log of what moor observed and what people decided
  (``open``, ``still``, ``transition``, ``attempt``, ``revise``, ``close``);
* ``snapshots`` — sealed snapshots, fact address -> normalised source text, so "what changed
  since bound" can be shown without git; insert-or-ignore, never updated or deleted;
* ``files`` — the parse cache, one row per source file, mutable (it is a cache, not history).

Append-only is enforced by the database, not only by this class: ``BEFORE UPDATE`` and
``BEFORE DELETE`` triggers on ``journal`` and ``snapshots`` abort with an "append-only" error,
whoever holds the connection. (DDL such as ``DROP TABLE`` is outside what triggers can see;
the file is a local cache and deleting it is a supported way to rebuild.)

Sequence numbers are gap-free: a ``BEFORE INSERT`` trigger refuses any row whose ``seq`` is
not exactly ``max(seq) + 1``. Numbers are never drawn from a counter that outlives a
transaction — they are derived from the table's own rows inside the writing transaction,
which holds SQLite's single write lock (``BEGIN IMMEDIATE``). A rolled-back batch leaves no
rows behind, so the next batch takes the same numbers again; no committed row can be deleted,
so ``max(seq)`` never shrinks. Hence at every commit the sequence is exactly ``1..N``.

One transaction per batch; WAL with ``synchronous=NORMAL``: a crash of moor loses nothing, a
power loss may lose the last batches but never corrupts the file — acceptable for a local,
rebuildable file.

The search index (FTS5) will live in this file too; it is not part of this module yet.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, NamedTuple, get_args
from urllib.parse import quote

from .environment import Kind, Unavailable, kind_of, refusal
from .refusal import RefusalError

__all__ = [
    "ENTRY_KINDS",
    "SCHEMA_VERSION",
    "CachedFile",
    "Entry",
    "EntryKind",
    "Journal",
    "JournalBusy",
    "JournalError",
    "JournalHealth",
    "JournalNotEmpty",
    "JournalUnavailable",
    "JournalVersionError",
    "LastLook",
    "NewEntry",
    "text_key",
]

EntryKind = Literal["open", "still", "transition", "attempt", "revise", "close"]
ENTRY_KINDS: Final[tuple[str, ...]] = get_args(EntryKind)

SCHEMA_VERSION: Final = 2
# PRAGMA application_id marks the file as moor's ("moor" in ASCII), so a SQLite file that
# belongs to something else is refused rather than written into.
APPLICATION_ID: Final = 0x6D6F6F72

# SQLite's default limit on host parameters is 32766; stay far below it.
_BATCH: Final = 500
_BUSY_TIMEOUT_S: Final = 5.0


class JournalError(RefusalError):
    """The journal cannot be opened or used. The message says what to do; `path` is the
    journal's file when the message is about it."""

    code = "journal_unusable"  # stable, for a program reading the refusal
    line: int | None = None  # never known: a database has no lines
    # Whether the file itself is what failed (corrupt, another program's, a wrong schema):
    # only then may it be set aside. The subclasses below are about everything else.
    unusable: bool = True

    def __init__(self, message: str, *, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


class JournalVersionError(JournalError):
    """The journal was written by a newer moor (a newer schema version)."""

    unusable = False


class JournalUnavailable(JournalError):
    """The environment failed the journal — a full or read-only disk, a quota, an I/O
    error, no memory (`moor_store.environment`) — not its bytes: nothing was changed, and
    the file must be kept. `code` names which (`environment.Kind`)."""

    unusable = False

    def __init__(self, failure: Unavailable) -> None:
        super().__init__(str(failure), path=failure.path)
        self.code: Kind = failure.code


class JournalNotEmpty(JournalError):
    """An import was asked into a journal that already holds history."""

    code = "journal_not_empty"
    unusable = False


class JournalBusy(JournalError):
    """Another connection held SQLite's write lock for longer than moor waits: busy, not broken."""

    code = "journal_busy"
    unusable = False


@dataclass(frozen=True)
class NewEntry:
    """One entry to append. Which fields are set depends on the kind (see module doc)."""

    kind: EntryKind
    anchor: str  # canonical reference, e.g. "src/a.py#Client.send"
    memory: str | None = None  # memory path when the entry concerns one memory
    address: str | None = None  # the fact address observed / bound now
    previous: str | None = None  # the address before (transition, revise)
    reason: str | None = None  # human reason, or failure class for attempts
    code: str | None = None  # failure code for attempts, or a sub-kind ("bind", "reprobe", …)
    detail: str | None = None
    data: Mapping[str, object] | None = None  # JSON-serialisable extras


@dataclass(frozen=True, kw_only=True)
class Entry(NewEntry):
    """An entry as stored: its place in the global sequence and when it was appended."""

    seq: int
    at: str  # ISO-8601 UTC, milliseconds, with 'Z'


class LastLook(NamedTuple):
    """What the journal last recorded of one anchor (`Journal.last_looks`)."""

    kind: str  # the latest entry's
    code: str | None  # the latest entry's
    address: str | None  # the latest address recorded, by whichever entry


@dataclass(frozen=True)
class CachedFile:
    """Parse-cache row for one source file. `payload` is opaque JSON text owned by the caller.
    The stat fields are the caller's key for when the row may vouch for the file; -1 (as in
    rows written before schema 2) matches no file's stat."""

    path: str
    size: int
    mtime_ns: int
    sha: str
    derivation: str
    payload: str = field(repr=False)
    ctime_ns: int = -1
    inode: int = -1
    device: int = -1


_APPEND_ONLY = "moor journal is append-only"

_SCHEMA: Final = f"""
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE journal (
    seq      INTEGER PRIMARY KEY,
    at       TEXT NOT NULL,
    kind     TEXT NOT NULL CHECK ({" OR ".join(f"kind = '{k}'" for k in ENTRY_KINDS)}),
    anchor   TEXT NOT NULL,
    memory   TEXT,
    address  TEXT,
    previous TEXT,
    reason   TEXT,
    code     TEXT,
    detail   TEXT,
    data     TEXT, -- JSON object text, written by this module's encoder
    -- Index keys: crc32 of the UTF-8 anchor / memory (see `text_key`). An index on short
    -- integers is a quarter the size of one on the text, and a batch touches that many fewer
    -- pages; lookups check the text too, so a collision costs nothing but a skipped row.
    anchor_key INTEGER NOT NULL,
    memory_key INTEGER CHECK ((memory IS NULL) = (memory_key IS NULL))
);
CREATE INDEX journal_by_anchor ON journal (anchor_key, seq);
CREATE INDEX journal_by_memory ON journal (memory_key, seq) WHERE memory_key IS NOT NULL;

CREATE TRIGGER journal_seq_gap_free BEFORE INSERT ON journal
WHEN NEW.seq IS NOT (SELECT coalesce(max(seq), 0) + 1 FROM journal)
BEGIN
    SELECT RAISE(ABORT, '{_APPEND_ONLY}: seq must be exactly max(seq) + 1 (gap-free)');
END;
CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal
BEGIN
    SELECT RAISE(ABORT, '{_APPEND_ONLY}: journal rows cannot be updated');
END;
CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal
BEGIN
    SELECT RAISE(ABORT, '{_APPEND_ONLY}: journal rows cannot be deleted');
END;

CREATE TABLE snapshots (
    address TEXT PRIMARY KEY,
    text    TEXT NOT NULL
);
-- Insert-or-ignore at the database level: a second insert of a sealed address is dropped
-- (so INSERT OR REPLACE cannot overwrite a sealed snapshot either).
CREATE TRIGGER snapshots_sealed BEFORE INSERT ON snapshots
WHEN EXISTS (SELECT 1 FROM snapshots WHERE address = NEW.address)
BEGIN
    SELECT RAISE(IGNORE);
END;
CREATE TRIGGER snapshots_no_update BEFORE UPDATE ON snapshots
BEGIN
    SELECT RAISE(ABORT, '{_APPEND_ONLY}: sealed snapshots cannot be updated');
END;
CREATE TRIGGER snapshots_no_delete BEFORE DELETE ON snapshots
BEGIN
    SELECT RAISE(ABORT, '{_APPEND_ONLY}: sealed snapshots cannot be deleted');
END;

CREATE TABLE files (
    path       TEXT PRIMARY KEY,
    size       INTEGER NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    sha        TEXT NOT NULL,
    derivation TEXT NOT NULL,
    payload    TEXT NOT NULL,
    ctime_ns   INTEGER NOT NULL DEFAULT -1,
    inode      INTEGER NOT NULL DEFAULT -1,
    device     INTEGER NOT NULL DEFAULT -1
);
"""

# What turns a journal of each older schema version into the next one's. The journal is a
# rebuildable cache, but its history is not: it is migrated in place, never dropped.
_MIGRATIONS: Final[dict[int, tuple[str, ...]]] = {
    # 1 -> 2: the parse cache's stat key gains what git's index compares.
    1: tuple(
        f"ALTER TABLE files ADD COLUMN {column} INTEGER NOT NULL DEFAULT -1"
        for column in ("ctime_ns", "inode", "device")
    ),
}

_ENTRY_COLUMNS: Final = (
    "seq, at, kind, anchor, memory, address, previous, reason, code, detail, data"
)


def _busy_timeout() -> float:
    """How long to wait for SQLite's write lock: `MOOR_WRITE_WAIT` seconds when set, else 5."""
    raw = os.environ.get("MOOR_WRITE_WAIT")
    if raw:
        try:
            return max(0.0, float(raw))
        except ValueError:
            pass
    return _BUSY_TIMEOUT_S


def _is_busy(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return isinstance(error, sqlite3.OperationalError) and (
        "locked" in str(error) or "busy" in str(error)
    )


def _unavailable(error: BaseException, path: Path, action: str) -> JournalUnavailable | None:
    """`error` as a `JournalUnavailable`, when it is the environment's (None: it is not)."""
    kind = kind_of(error, path)
    if kind is None:
        return None
    return JournalUnavailable(refusal(kind, path, action, detail=str(error)))


def _busy_text(path: Path, action: str) -> str:
    return (
        f"cannot {action}: {path} is busy — another program has held its write lock for more "
        f"than {_busy_timeout():g} s. Nothing was lost; run moor again when it is done"
    )


def text_key(text: str) -> int:
    """The index key of an anchor or memory path: crc32 of its UTF-8 bytes.

    Stable across processes and versions (part of the schema). Anyone inserting rows
    without this class must fill `anchor_key`/`memory_key` with it, or lookups miss them.
    """
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def utc_now() -> str:
    """Now, as the journal writes it: ISO-8601 UTC, milliseconds, 'Z'."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _rebuild_hint(path: Path) -> str:
    return (
        f"{path} is a local, rebuildable cache: move it aside (or delete it together with "
        f"{path.name}-wal and {path.name}-shm) and moor rebuilds it from moor.lock and the "
        f"workspace — Journal.rebuild(path) does exactly that"
    )


class Journal:
    """The journal, sealed snapshots and parse cache in one SQLite file.

    Each public method is atomic (one transaction) and safe to call from several threads
    (calls are serialised). Several processes may open the same file: writers wait up to
    5 s for SQLite's write lock.

    `Journal.reader(path, why)` opens it read-only, for when the environment refuses writes
    (`why`, kept as `unavailable`): it reads as usual, appending or sealing raises `why`,
    and the parse cache is read but not written.
    """

    unavailable: JournalUnavailable | None = None

    def __init__(self, path: Path, *, clock: Callable[[], str] = utc_now) -> None:
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.RLock()
        self._closed = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            failed = _unavailable(exc, self.path.parent, "write to the journal")
            if failed is not None:
                raise failed from exc
            raise JournalError(f"cannot create {self.path.parent}: {exc}") from exc
        if self.path.is_dir():
            raise JournalError(f"{self.path} is a directory, not a moor journal", path=self.path)
        try:
            self._db = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=_busy_timeout(),
            )
        except sqlite3.Error as exc:
            failed = _unavailable(exc, self.path, "write to the journal")
            if failed is not None:
                raise failed from exc
            raise JournalError(f"cannot open {self.path}: {exc}", path=self.path) from exc
        try:
            self._open()
        except JournalError:
            self._db.close()
            raise
        except (sqlite3.Error, MemoryError) as exc:
            self._db.close()
            if isinstance(exc, sqlite3.Error) and _is_busy(exc):
                raise JournalBusy(_busy_text(self.path, "open it"), path=self.path) from exc
            failed = _unavailable(exc, self.path, "write to the journal")
            if failed is not None:
                raise failed from exc
            raise JournalError(
                f"{self.path} is not a usable moor journal ({exc}). {_rebuild_hint(self.path)}",
                path=self.path,
            ) from exc

    @classmethod
    def reader(cls, path: Path, why: JournalUnavailable) -> Journal:
        """The journal at `path`, read-only: SQLite's read-only mode, else its immutable one
        (no -shm needed: on a read-only or full filesystem it cannot be made). JournalError
        when it cannot be read either (there is none, or it is not a moor journal)."""
        journal = cls.__new__(cls)
        journal.path = Path(path)
        journal._clock = utc_now
        journal._lock = threading.RLock()
        journal._closed = False
        journal.unavailable = why
        uri = "file:" + quote(str(journal.path.absolute()))
        last: sqlite3.Error | None = None
        for mode in ("mode=ro", "immutable=1"):
            try:
                db = sqlite3.connect(
                    f"{uri}?{mode}", uri=True, isolation_level=None, check_same_thread=False
                )
            except sqlite3.Error as exc:
                last = exc
                continue
            journal._db = db
            try:
                app_id = db.execute("PRAGMA application_id").fetchone()[0]
                tables = {
                    row[0]
                    for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
                }
                version = journal._version(app_id, tables)
            except sqlite3.Error as exc:
                db.close()
                last = exc
                continue
            except JournalError:
                db.close()
                raise
            if version != SCHEMA_VERSION:
                db.close()
                raise JournalError(
                    f"{journal.path} has an older schema, which cannot be migrated read-only",
                    path=journal.path,
                )
            return journal
        raise JournalError(f"cannot read {journal.path}: {last}", path=journal.path)

    @property
    def read_only(self) -> bool:
        return self.unavailable is not None

    # -- opening ---------------------------------------------------------------------------

    def _open(self) -> None:
        db = self._db
        # Reading the header is the first touch of the file: a non-SQLite file fails here.
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        if app_id not in (0, APPLICATION_ID):
            raise JournalError(
                f"{self.path} is a SQLite database that belongs to another program "
                f"(application_id {app_id:#x}), not a moor journal. {_rebuild_hint(self.path)}",
                path=self.path,
            )
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA temp_store = MEMORY")
        # Up to 32 MiB of page cache (grown on demand; SQLite's default is 2 MiB): a batch
        # that touches many anchors rewrites index pages all over a large journal.
        db.execute("PRAGMA cache_size = -32768")
        with self._transaction():
            # Read again under the write lock: another process may have just created it.
            app_id = db.execute("PRAGMA application_id").fetchone()[0]
            tables = {
                row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if not tables:
                for statement in _split_sql(_SCHEMA):
                    db.execute(statement)
                db.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?), ('created_at', ?)",
                    (str(SCHEMA_VERSION), self._clock()),
                )
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                return
            _migrate(db, self._version(app_id, tables))

    def _version(self, app_id: int, tables: set[str]) -> int:
        """The schema version of a journal with these tables; JournalError unless it is
        moor's, of a version this moor reads."""
        if "meta" not in tables or app_id != APPLICATION_ID:
            raise JournalError(
                f"{self.path} is a SQLite database but not a moor journal "
                f"(tables: {', '.join(sorted(tables))}). {_rebuild_hint(self.path)}",
                path=self.path,
            )
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        try:
            version = int(row[0])
        except (TypeError, ValueError):
            raise JournalError(
                f"{self.path} has no readable schema version. {_rebuild_hint(self.path)}",
                path=self.path,
            ) from None
        if version > SCHEMA_VERSION:
            raise JournalVersionError(
                f"{self.path} was written by a newer moor (journal schema {version}; this "
                f"moor reads up to {SCHEMA_VERSION}). Upgrade moor, or — since the journal "
                f"is local — {_rebuild_hint(self.path)}",
                path=self.path,
            )
        if version < 1:
            raise JournalError(
                f"{self.path} has an invalid schema version {version}. {_rebuild_hint(self.path)}",
                path=self.path,
            )
        return version

    @classmethod
    def rebuild(cls, path: Path, *, clock: Callable[[], str] = utc_now) -> Journal:
        """Move an unusable journal aside (with its -wal/-shm files) and open a fresh one.

        The old file is kept as ``<name>.broken-<UTC timestamp>`` next to it, for inspection.
        The fresh journal is empty: the caller re-baselines from moor.lock.
        """
        path = Path(path)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        for suffix in ("", "-wal", "-shm"):
            source = path.with_name(path.name + suffix)
            if source.exists() or source.is_symlink():
                target = path.with_name(f"{path.name}.broken-{stamp}{suffix}")
                try:
                    os.replace(source, target)
                except OSError as exc:
                    failed = _unavailable(exc, source, f"move {source.name} aside")
                    if failed is not None:
                        raise failed from exc
                    raise JournalError(f"cannot move {source} aside: {exc}") from exc
        return cls(path, clock=clock)

    # -- plumbing --------------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken up front so the seq we compute is ours alone."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            if db.in_transaction:  # SQLite may already have rolled back (e.g. disk full)
                db.execute("ROLLBACK")
            raise
        else:
            db.execute("COMMIT")

    @contextmanager
    def _guard(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._closed:
                raise JournalError(
                    f"cannot {action}: the journal {self.path} is closed", path=self.path
                )
            try:
                yield self._db
            except (sqlite3.Error, MemoryError) as exc:
                if isinstance(exc, sqlite3.Error) and _is_busy(exc):
                    raise JournalBusy(_busy_text(self.path, action), path=self.path) from exc
                failed = _unavailable(exc, self.path, action)
                if failed is not None:
                    raise failed from exc
                if not isinstance(exc, sqlite3.Error):
                    raise
                hint = ""
                if type(exc) is sqlite3.DatabaseError:  # corruption, not a constraint or a lock
                    hint = f". {_rebuild_hint(self.path)}"
                raise JournalError(
                    f"cannot {action} in {self.path}: {exc}{hint}", path=self.path
                ) from exc

    def writable(self) -> None:
        """Raise why this journal cannot be written (`JournalUnavailable`), if it cannot."""
        if self.unavailable is not None:
            raise self.unavailable

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- the journal -----------------------------------------------------------------------

    def append(self, entries: Sequence[NewEntry]) -> list[int]:
        """Append a batch in one transaction; returns the new entries' seqs, in order.

        All entries of a batch share one timestamp. If any entry is invalid (unknown kind,
        data that is not JSON) nothing of the batch is written.
        """
        if not entries:
            return []
        self.writable()
        at = self._clock()
        with self._guard("append to the journal") as db, self._transaction():
            head = db.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()[0]
            db.executemany(_INSERT_ENTRY, _rows(entries, head, at))
        return list(range(head + 1, head + 1 + len(entries)))

    def head(self) -> int:
        """The latest seq (0 for an empty journal): a cursor for "changes since"."""
        with self._guard("read the journal") as db:
            return int(db.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()[0])

    def entries(
        self,
        *,
        anchor: str | None = None,
        memory: str | None = None,
        since: int = 0,
        limit: int | None = None,
    ) -> list[Entry]:
        """Entries with seq > `since`, in seq order (the first `limit` of them, when given);
        filters combine with AND."""
        where = ["seq > ?"]
        params: list[object] = [since]
        if anchor is not None:
            where.append("anchor_key = ? AND anchor = ?")
            params += (text_key(anchor), anchor)
        if memory is not None:
            where.append("memory_key = ? AND memory = ?")
            params += (text_key(memory), memory)
        sql = f"SELECT {_ENTRY_COLUMNS} FROM journal WHERE {' AND '.join(where)} ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self._guard("read the journal") as db:
            return [_entry(row) for row in db.execute(sql, params)]

    def entries_for(self, memory: str, anchors: Iterable[str], *, since: int = 0) -> list[Entry]:
        """A memory's history: entries naming it, plus anchor-only entries (no memory) of
        the given anchors — what was observed of the code it is bound to. Seq order."""
        texts = sorted(set(anchors))
        sql = (
            f"SELECT {_ENTRY_COLUMNS} FROM journal WHERE seq IN ("
            " SELECT seq FROM journal WHERE memory_key = ? AND memory = ? AND seq > ?"
            " UNION"
            " SELECT seq FROM journal"
            " WHERE anchor_key IN (SELECT value FROM json_each(?))"
            " AND anchor IN (SELECT value FROM json_each(?))"
            " AND memory IS NULL AND seq > ?"
            ") ORDER BY seq"
        )
        params = (
            text_key(memory),
            memory,
            since,
            json.dumps(sorted({text_key(t) for t in texts})),
            json.dumps(texts),
            since,
        )
        with self._guard("read the journal") as db:
            rows = db.execute(sql, params)
            return [_entry(row) for row in rows]

    def latest(self, anchors: Iterable[str]) -> dict[str, Entry]:
        """The latest entry of each anchor that has one (any kind, with or without a memory),
        in one query however many anchors are asked for."""
        with self._guard("read the journal") as db:
            rows = db.execute(_latest_sql(_ENTRY_COLUMNS, ""), (_anchor_pairs(anchors),))
            return {e.anchor: e for e in map(_entry, rows)}

    def last_addresses(self, anchors: Iterable[str]) -> dict[str, str]:
        """`last_address` for many anchors at once; anchors without one are left out."""
        sql = _latest_sql("anchor, address", " AND address IS NOT NULL")
        with self._guard("read the journal") as db:
            return dict(db.execute(sql, (_anchor_pairs(anchors),)))

    def last_looks(self, anchors: Iterable[str]) -> dict[str, LastLook]:
        """Per anchor that has an entry: its latest entry's kind and code and the latest
        address recorded — what a check compares what it saw with. One query, and no entry
        decoded: at 10,000 anchors `latest` and `last_addresses` together were a tenth of a
        warm check."""
        sql = (
            "SELECT j.anchor, j.kind, j.code, (SELECT address FROM journal"
            "  WHERE anchor_key = j.anchor_key AND anchor = j.anchor AND address IS NOT NULL"
            "  ORDER BY seq DESC LIMIT 1)"
            f" FROM journal AS j WHERE j.seq IN ({_latest_sql('seq', '')})"
        )
        with self._guard("read the journal") as db:
            rows = db.execute(sql, (_anchor_pairs(anchors),))
            return {row[0]: LastLook(*row[1:]) for row in rows}

    def last_address(self, anchor: str) -> str | None:
        """The address of the latest entry for `anchor` that records one."""
        with self._guard("read the journal") as db:
            row = db.execute(
                "SELECT address FROM journal WHERE anchor_key = ? AND anchor = ? "
                "AND address IS NOT NULL ORDER BY seq DESC LIMIT 1",
                (text_key(anchor), anchor),
            ).fetchone()
        return None if row is None else str(row[0])

    def first_seen(self, addresses: Mapping[str, str]) -> dict[str, str]:
        """Per anchor, when the journal first recorded it at the given address in the run
        that holds now: the time of the earliest entry with that address after the last
        entry with another. An anchor whose latest recorded address is another one (or
        that has none) is left out."""
        found: dict[str, str] = {}
        with self._guard("read the journal") as db:
            for anchor, address in addresses.items():
                key = text_key(anchor)
                row = db.execute(_FIRST_SEEN, (key, anchor, address, key, anchor, address))
                at = row.fetchone()
                if at is not None:
                    found[anchor] = str(at[0])
        return found

    # -- carrying history between clones (`moor export`, `moor import`) ----------------------

    def snapshots(self) -> list[tuple[str, str]]:
        """Every sealed snapshot, by address."""
        with self._guard("read the snapshots") as db:
            return [(str(a), str(t)) for a, t in db.execute(_SNAPSHOTS_IN_ORDER)]

    def carried(self) -> list[str]:
        """Lines an import carried without knowing them (kept for the next export), in order."""
        with self._guard("read the journal") as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'carried'").fetchone()
        return [] if row is None else list(json.loads(row[0]))

    def restore_history(
        self, entries: Sequence[Entry], snapshots: Iterable[tuple[str, str]], carried: list[str]
    ) -> None:
        """Put another clone's history into this empty journal, as it was there (each entry's
        seq and time), in one transaction: all of it, or nothing. `JournalNotEmpty` when
        this journal holds an entry: histories are not merged."""
        self.writable()
        with self._guard("import into the journal") as db, self._transaction():
            if db.execute("SELECT 1 FROM journal LIMIT 1").fetchone() is not None:
                raise JournalNotEmpty(
                    f"{self.path} already holds entries: an import goes only into an empty "
                    "journal (move it aside first; histories are not merged)",
                    path=self.path,
                )
            for entry in entries:
                rows = _rows([entry], entry.seq - 1, entry.at)
                db.executemany(_INSERT_ENTRY, rows)
            db.executemany(
                "INSERT OR IGNORE INTO snapshots (address, text) VALUES (?, ?)", snapshots
            )
            if carried:
                db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('carried', ?)",
                    (json.dumps(carried, ensure_ascii=False),),
                )

    # -- sealed snapshots ------------------------------------------------------------------

    def last_of(self, anchor: str, kind: str, code: str) -> Entry | None:
        """The latest entry of `anchor` with this kind and code, by one indexed query (an
        anchor observed at every check has a long history)."""
        sql = (
            f"SELECT {_ENTRY_COLUMNS} FROM journal WHERE anchor_key = ? AND anchor = ? "
            "AND kind = ? AND code = ? ORDER BY seq DESC LIMIT 1"
        )
        with self._guard("read the journal") as db:
            row = db.execute(sql, (text_key(anchor), anchor, kind, code)).fetchone()
        return None if row is None else _entry(row)

    def has_intent(self, anchor: str, intent: str) -> bool:
        """Whether entries of the action with intent id `intent` (one about `anchor`) are in."""
        with self._guard("read the journal") as db:
            row = db.execute(
                "SELECT 1 FROM journal WHERE anchor_key = ? AND anchor = ? "
                "AND json_valid(data) AND json_extract(data, '$.intent') = ? LIMIT 1",
                (text_key(anchor), anchor, intent),
            ).fetchone()
        return row is not None

    def seal(self, address: str, text: str) -> None:
        """Keep `text` as the snapshot of `address`; a sealed address is never changed."""
        self.seal_many(((address, text),))

    def seal_many(self, items: Iterable[tuple[str, str]]) -> None:
        self.writable()
        with self._guard("seal snapshots") as db, self._transaction():
            db.executemany("INSERT OR IGNORE INTO snapshots (address, text) VALUES (?, ?)", items)

    def snapshot(self, address: str) -> str | None:
        with self._guard("read a snapshot") as db:
            row = db.execute("SELECT text FROM snapshots WHERE address = ?", (address,)).fetchone()
        return None if row is None else str(row[0])

    # -- parse cache (mutable; not part of the journal) ------------------------------------

    def cached_file(self, path: str) -> CachedFile | None:
        return self.cached_files((path,)).get(path)

    def cached_files(self, paths: Iterable[str]) -> dict[str, CachedFile]:
        """Cache rows for the given paths that have one, in a handful of queries."""
        wanted = list(dict.fromkeys(paths))
        found: dict[str, CachedFile] = {}
        with self._guard("read the parse cache") as db:
            for start in range(0, len(wanted), _BATCH):
                chunk = wanted[start : start + _BATCH]
                sql = (
                    "SELECT path, size, mtime_ns, sha, derivation, payload, ctime_ns, inode, "
                    "device FROM files "
                    f"WHERE path IN ({','.join('?' * len(chunk))})"
                )
                for row in db.execute(sql, chunk):
                    found[row[0]] = CachedFile(*row)
        return found

    def store_files(self, files: Iterable[CachedFile]) -> None:
        """Insert or replace cache rows, in one transaction. Not kept when the environment
        refuses the write (a cache: that costs the next run time, nothing else)."""
        if self.read_only:
            return
        with (
            contextlib.suppress(JournalUnavailable),
            self._guard("write the parse cache") as db,
            self._transaction(),
        ):
            db.executemany(
                "INSERT INTO files (path, size, mtime_ns, sha, derivation, payload, ctime_ns, "
                "inode, device) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE "
                "SET size = excluded.size, mtime_ns = excluded.mtime_ns, sha = excluded.sha, "
                "derivation = excluded.derivation, payload = excluded.payload, "
                "ctime_ns = excluded.ctime_ns, inode = excluded.inode, device = excluded.device",
                (
                    (
                        f.path,
                        f.size,
                        f.mtime_ns,
                        f.sha,
                        f.derivation,
                        f.payload,
                        f.ctime_ns,
                        f.inode,
                        f.device,
                    )
                    for f in files
                ),
            )

    def drop_files(self, paths: Iterable[str]) -> None:
        """Forget cache rows (e.g. for deleted files). Journal and snapshots are untouched."""
        if self.read_only:
            return
        with (
            contextlib.suppress(JournalUnavailable),
            self._guard("write the parse cache") as db,
            self._transaction(),
        ):
            db.executemany("DELETE FROM files WHERE path = ?", ((p,) for p in paths))


@dataclass(frozen=True)
class JournalHealth:
    """What a read-only look at a journal file found (`inspect`): SQLite's own integrity
    check, and the seqs missing from 1..max (the trigger keeps them gap-free; a gap means the
    file was changed by something other than moor)."""

    problems: tuple[str, ...]  # `PRAGMA integrity_check`'s lines, [] when it says "ok"
    missing: tuple[tuple[int, int], ...]  # ranges of absent seqs, first and last inclusive
    entries: int
    unreadable: str | None = None  # why it could not be read at all

    @property
    def ok(self) -> bool:
        return not self.problems and not self.missing and self.unreadable is None


def inspect(path: Path) -> JournalHealth | None:
    """A read-only look at the journal at `path` (None: there is none). Nothing is written,
    created or set aside, so a damaged journal is seen as it is."""
    if not path.is_file():
        return None
    uri = "file:" + quote(str(path.absolute())) + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=_busy_timeout())
    except sqlite3.Error as exc:
        return JournalHealth((), (), 0, unreadable=str(exc))
    try:
        checked = [str(row[0]) for row in db.execute("PRAGMA integrity_check(20)")]
        problems = tuple(line for line in checked if line != "ok")
        if problems:
            return JournalHealth(problems, (), 0)
        missing: list[tuple[int, int]] = []
        expected = 1
        count = 0
        for (seq,) in db.execute("SELECT seq FROM journal ORDER BY seq"):
            count += 1
            if seq > expected:
                missing.append((expected, seq - 1))
            expected = seq + 1
        return JournalHealth((), tuple(missing), count)
    except sqlite3.Error as exc:
        return JournalHealth((), (), 0, unreadable=str(exc))
    finally:
        db.close()


def _migrate(db: sqlite3.Connection, version: int) -> None:
    """Bring a journal of an older schema up to `SCHEMA_VERSION` (inside the caller's write
    transaction: all of it, or none)."""
    while version < SCHEMA_VERSION:
        for statement in _MIGRATIONS[version]:
            db.execute(statement)
        version += 1
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))


def _anchor_pairs(anchors: Iterable[str]) -> str:
    return json.dumps([[text_key(a), a] for a in dict.fromkeys(anchors)], ensure_ascii=False)


def _latest_sql(columns: str, condition: str) -> str:
    """Per anchor of a JSON list of [key, anchor] pairs, its newest row meeting `condition`:
    one index seek per anchor (newest first on (anchor_key, seq)), not a scan of its history."""
    return (
        f"SELECT {columns} FROM journal WHERE seq IN ("
        " SELECT (SELECT seq FROM journal"
        "  WHERE anchor_key = json_extract(w.value, '$[0]')"
        f"  AND anchor = json_extract(w.value, '$[1]'){condition}"
        "  ORDER BY seq DESC LIMIT 1)"
        " FROM json_each(?) AS w)"
    )


_SNAPSHOTS_IN_ORDER: Final = "SELECT address, text FROM snapshots ORDER BY address"

# The earliest entry of an anchor at an address after its last entry at another address:
# newest first on (anchor_key, seq) to the break, then forward from it.
_FIRST_SEEN: Final = (
    "SELECT at FROM journal WHERE anchor_key = ? AND anchor = ? AND address = ? AND seq > "
    "coalesce((SELECT seq FROM journal WHERE anchor_key = ? AND anchor = ? "
    "AND address IS NOT NULL AND address != ? ORDER BY seq DESC LIMIT 1), 0) "
    "ORDER BY seq LIMIT 1"
)


def _split_sql(script: str) -> list[str]:
    """Split the schema into statements; trigger bodies keep their inner semicolons."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.splitlines():
        if line.lstrip().startswith("--"):
            continue
        current.append(line)
        if sqlite3.complete_statement("\n".join(current)):
            statement = "\n".join(current).strip()
            if statement.strip(";").strip():
                statements.append(statement)
            current = []
    return statements


_encode_data = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")
).encode

# Binding None through Python's sqlite3 takes its slow adaptation path (several µs a value,
# a third of the cost of a 10,000-entry append), so absent values are bound as the integer 0
# and turned into NULL by `nullif(?, 0)`. Every such column holds text, and in SQLite a text
# value never equals an integer, so no real value can be mistaken for the sentinel.
_ABSENT: Final = 0
_INSERT_ENTRY: Final = (
    f"INSERT INTO journal ({_ENTRY_COLUMNS}, anchor_key, memory_key) VALUES (?, ?, ?, ?"
    + ", nullif(?, 0)" * 7
    + ", ?, ?)"
)


def _rows(entries: Sequence[NewEntry], head: int, at: str) -> list[tuple[object, ...]]:
    """The batch as parameter rows, validated before any of it is written."""
    unknown = {e.kind for e in entries}.difference(ENTRY_KINDS)
    if unknown:
        raise JournalError(
            f"unknown journal entry kind {', '.join(map(repr, sorted(unknown)))} "
            f"(one of: {', '.join(ENTRY_KINDS)})"
        )
    encoded: list[str | int] = []
    for e in entries:
        if e.data is None:
            encoded.append(_ABSENT)
            continue
        try:
            encoded.append(_encode_data(e.data if isinstance(e.data, dict) else dict(e.data)))
        except (TypeError, ValueError) as exc:
            raise JournalError(
                f"entry data for {e.anchor!r} is not JSON-serialisable: {exc}"
            ) from exc
    z = _ABSENT
    keys: dict[str, int] = {}  # anchors and memories repeat within a batch

    def key(text: str) -> int:
        found = keys.get(text)
        if found is None:
            found = keys[text] = text_key(text)
        return found

    return [
        (
            seq,
            at,
            e.kind,
            e.anchor,
            z if e.memory is None else e.memory,
            z if e.address is None else e.address,
            z if e.previous is None else e.previous,
            z if e.reason is None else e.reason,
            z if e.code is None else e.code,
            z if e.detail is None else e.detail,
            data,
            key(e.anchor),
            None if e.memory is None else key(e.memory),
        )
        for seq, e, data in zip(
            range(head + 1, head + 1 + len(entries)), entries, encoded, strict=True
        )
    ]


def _entry(row: tuple[Any, ...]) -> Entry:
    seq, at, kind, anchor, memory, address, previous, reason, code, detail, data = row
    return Entry(
        seq=seq,
        at=at,
        kind=kind,
        anchor=anchor,
        memory=memory,
        address=address,
        previous=previous,
        reason=reason,
        code=code,
        detail=detail,
        data=None if data is None else json.loads(data),
    )
