"""Per-term postings beside the recall index's FTS5 table, for ranking without scoring every
match.

FTS5's `bm25()` is computed for every row that matches any term of a query, and a sentence
query of a dozen common words matches most memories: at 30,000 memories that cost 6 ms at
the median and 38 ms at p95, ten times the goal. Here each stem (FTS5's own tokenizer says
what a stem is: a scratch FTS5 table in TEMP with the same `tokenize` spelling) has a row
per document that holds it, with its count in each field and the document's length, so a
query reads the postings of its rarest stems first (the ones that decide BM25) and stops
when the best documents can no longer be overtaken (MaxScore), or when a budget of postings
is spent. The score is FTS5's bm25 formula exactly (k1 1.2, b 0.75, idf floored at 1e-6,
field weights on counts), computed on the same counts: `best` agrees with `ORDER BY
bm25(...)` to the last bit whenever it says `exact` (tests/store/test_recall_postings.py
holds both to that over random corpora), and each score it returns is the document's full
bm25 even when not.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

TOKENIZE: Final = "porter unicode61 remove_diacritics 2"
K1: Final = 1.2
B: Final = 0.75
IDF_FLOOR: Final = 1e-6  # FTS5's: a stem in more than half the documents still counts a little
# Postings read before the best documents are taken from those found so far (the
# measurements that chose it: bench/recall_quality.py and ARCHITECTURE.md's recall path).
POSTINGS_BUDGET: Final = 3500
# Documents fully scored after the rarest stems were read (at least; more when asked for
# more): a document outside them can only win through the stems not read.
CANDIDATES: Final = 100

SCHEMA: Final = (
    "CREATE TABLE terms (id INTEGER PRIMARY KEY, stem TEXT NOT NULL UNIQUE, docs INTEGER NOT NULL)",
    # The stem's count in the document with each field's weight (FTS5 adds a field's weight
    # per instance: the same sum), and the document's length (its tokens in all fields,
    # FTS5's column size -1), kept with each posting so a stem's postings score alone.
    "CREATE TABLE postings (term INTEGER NOT NULL, doc INTEGER NOT NULL, "
    "weight REAL NOT NULL, length INTEGER NOT NULL, PRIMARY KEY (term, doc)) WITHOUT ROWID",
)
TABLES: Final = ("terms", "postings")

# One posting's part of a document's score (times the stem's idf): BM25's saturation of the
# weighted count against the document's length relative to the average (?1).
_PART = f"weight * {K1 + 1} / (weight + {K1} * (1 - {B} + {B} * length / ?1))"
_FIRST: Final = 2  # the first parameter after the average length


@dataclass(frozen=True)
class Ranked:
    """The best documents for a query: (rowid, score) best first (ties: lower rowid), and
    whether they are exactly the ones every match scored would give."""

    scores: list[tuple[int, float]]
    exact: bool
    postings_read: int


Counts = dict[str, list[int]]  # stem -> count in each field


class Stems:
    """FTS5's tokenizer as a function: the stems of a text, per field, through a scratch
    FTS5 table in TEMP (never written to the index file)."""

    def __init__(self, db: sqlite3.Connection, fields: Sequence[str]) -> None:
        self._db = db
        self._fields = tuple(fields)
        self._ready = False
        self._known: dict[str, tuple[str, ...]] = {}

    def _open(self) -> None:
        if self._ready:
            return
        columns = ", ".join(self._fields)
        self._db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.moor_stems "
            f"USING fts5({columns}, tokenize = '{TOKENIZE}')"
        )
        self._db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.moor_stems_seen "
            "USING fts5vocab('temp', 'moor_stems', 'instance')"
        )
        self._ready = True

    def documents(self, rows: Sequence[Sequence[str]]) -> list[Counts]:
        """Per row of field texts: each stem's count in each field."""
        marks = ", ".join("?" * len(self._fields))
        out: list[Counts] = [{} for _ in rows]
        column = {name: i for i, name in enumerate(self._fields)}
        with self._scratch():
            self._db.executemany(
                f"INSERT INTO temp.moor_stems (rowid, {', '.join(self._fields)}) "
                f"VALUES (?, {marks})",
                ((i, *row) for i, row in enumerate(rows)),
            )
            found = self._db.execute("SELECT term, doc, col FROM temp.moor_stems_seen")
            for stem, doc, col in found:
                counts = out[doc].get(stem)
                if counts is None:
                    counts = out[doc][stem] = [0] * len(self._fields)
                counts[column[col]] += 1
        return out

    @contextlib.contextmanager
    def _scratch(self) -> Iterator[None]:
        """The scratch table's rows, gone again after; in one savepoint, so that FTS5 writes
        its segment once, not once per row (half the time of a query's stems)."""
        self._open()
        self._db.execute("SAVEPOINT moor_stems")
        try:
            yield
        finally:
            self._db.execute("DELETE FROM temp.moor_stems")
            self._db.execute("RELEASE moor_stems")

    def of_terms(self, terms: Sequence[str]) -> list[tuple[str, ...]]:
        """Each term's stems, in order (a term of one word has one; remembered)."""
        new = list(dict.fromkeys(t for t in terms if t not in self._known))
        if new:
            found: dict[int, list[tuple[int, str]]] = {}
            with self._scratch():
                self._db.executemany(
                    f"INSERT INTO temp.moor_stems (rowid, {self._fields[0]}) VALUES (?, ?)",
                    enumerate(new),
                )
                rows = self._db.execute("SELECT doc, offset, term FROM temp.moor_stems_seen")
                for doc, offset, stem in rows:
                    found.setdefault(doc, []).append((offset, stem))
            for i, term in enumerate(new):
                self._known[term] = tuple(stem for _o, stem in sorted(found.get(i, [])))
        return [self._known[t] for t in terms]


def add(
    db: sqlite3.Connection, doc: int, counts: Counts, weights: Sequence[float]
) -> tuple[list[int], int]:
    """Record document `doc`'s postings (`weights`: each field's, in the order of the
    counts); its term ids and length (to take it out again)."""
    length = sum(sum(c) for c in counts.values())
    if not counts:
        return [], 0
    db.executemany(
        "INSERT INTO terms (stem, docs) VALUES (?, 1) "
        "ON CONFLICT (stem) DO UPDATE SET docs = docs + 1",
        ((stem,) for stem in counts),
    )
    stems = list(counts)
    ids = {stem: term for stem, (term, _docs) in _ids_and_docs(db, stems).items()}
    db.executemany(
        "INSERT INTO postings (term, doc, weight, length) VALUES (?, ?, ?, ?)",
        ((ids[stem], doc, _weighted(counts[stem], weights), length) for stem in stems),
    )
    return [ids[stem] for stem in stems], length


def _weighted(counts: Sequence[int], weights: Sequence[float]) -> float:
    return sum(count * weight for count, weight in zip(counts, weights, strict=True))


def remove(db: sqlite3.Connection, doc: int, term_ids: Iterable[int]) -> None:
    ids = list(term_ids)
    db.executemany("DELETE FROM postings WHERE term = ? AND doc = ?", ((t, doc) for t in ids))
    db.executemany("UPDATE terms SET docs = docs - 1 WHERE id = ?", ((t,) for t in ids))


def prune(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM terms WHERE docs <= 0")


def best(
    db: sqlite3.Connection,
    stems: Sequence[str],
    count: int,
    documents: int,
    tokens: int,
    *,
    budget: int = POSTINGS_BUDGET,
) -> Ranked:
    """The `count` documents with the highest bm25 for the phrases `stems` (one stem each;
    a stem given twice counts twice, as two phrases do in FTS5)."""
    if count <= 0 or documents <= 0 or not stems:
        return Ranked([], True, 0)
    info = _ids_and_docs(db, list(dict.fromkeys(stems)))
    idf: dict[int, float] = {}
    held: dict[int, int] = {}
    for stem in stems:
        if stem not in info:
            continue  # no document holds it: it scores nothing anywhere
        term, docs = info[stem]
        value = math.log((documents - docs + 0.5) / (docs + 0.5))
        idf[term] = idf.get(term, 0.0) + (value if value > 0.0 else IDF_FLOOR)
        held[term] = docs
    # Rarest first: the stems with the most to give, and the shortest postings. As many as
    # the budget holds (one at least) are read whole; the rest only for the best found.
    order = sorted(idf, key=lambda t: (held[t], t))
    if not order:
        return Ranked([], True, 0)
    taken, read = 0, 0
    for term in order:
        if taken and read + held[term] > budget:
            break
        read += held[term]
        taken += 1
    unread = order[taken:]
    keep = max(CANDIDATES, 2 * count)
    params = (tokens / documents,)
    # Summed by SQLite, not row by row here: a third of the time.
    limit = f"?{_FIRST + 3 * taken}"
    chosen = db.execute(
        f"WITH q (place, term, idf) AS (VALUES {_values(taken)}) "
        f"SELECT doc, sum(q.idf * {_PART}) AS score FROM q CROSS JOIN postings "
        f"ON postings.term = q.term GROUP BY doc ORDER BY score DESC, doc LIMIT {limit}",
        (*params, *_triples(order[:taken], idf), keep + 1),
    ).fetchall()
    beyond = chosen[keep][1] if len(chosen) > keep else 0.0
    full = dict(chosen[:keep])
    if unread and full:
        # In the order of `order`, so that a document's score is the same sum to the last
        # bit whatever `count` asked for: a longer ranking never reorders ties.
        rows = db.execute(
            f"WITH q (place, term, idf) AS (VALUES {_values(len(unread))}) "
            f"SELECT doc, q.idf * {_PART} FROM q CROSS JOIN postings "
            f"ON postings.term = q.term AND postings.doc IN ({', '.join('?' * len(full))}) "
            "ORDER BY q.place",
            (*params, *_triples(unread, idf), *full),
        )
        for doc, part in rows:
            full[doc] += part
    ranked = sorted(full.items(), key=lambda kv: (-kv[1], kv[0]))[:count]
    # A document left out of `full` has at most its partial score (`beyond` at best; none
    # is left out when all were kept) plus all that the unread stems could give it.
    rest = sum(idf[t] * (K1 + 1) for t in unread)
    exact = (len(chosen) <= keep and not unread) or (
        len(ranked) == count and ranked[-1][1] > beyond + rest
    )
    return Ranked(ranked, exact, read)


def _values(rows: int) -> str:
    return ", ".join(
        f"(?{_FIRST + 3 * i}, ?{_FIRST + 3 * i + 1}, ?{_FIRST + 3 * i + 2})" for i in range(rows)
    )


def _triples(terms: Sequence[int], idf: Mapping[int, float]) -> list[float | int]:
    return [value for place, t in enumerate(terms) for value in (place, t, idf[t])]


def _ids_and_docs(db: sqlite3.Connection, stems: Sequence[str]) -> dict[str, tuple[int, int]]:
    found: dict[str, tuple[int, int]] = {}
    for start in range(0, len(stems), 500):
        chunk = stems[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = db.execute(f"SELECT stem, id, docs FROM terms WHERE stem IN ({marks})", chunk)
        found.update((str(stem), (int(i), int(n))) for stem, i, n in rows)
    return found


def documents_holding(db: sqlite3.Connection, stem: str) -> int:
    row = db.execute("SELECT docs FROM terms WHERE stem = ?", (stem,)).fetchone()
    return 0 if row is None else int(row[0])


def containing(
    db: sqlite3.Connection, stems: Sequence[str], docs: Sequence[int]
) -> dict[int, set[str]]:
    """Which of `stems` each of `docs` holds."""
    out: dict[int, set[str]] = {doc: set() for doc in docs}
    info = _ids_and_docs(db, list(dict.fromkeys(stems)))
    if not info or not docs:
        return out
    by_id = {term: stem for stem, (term, _n) in info.items()}
    term_marks = ", ".join("?" * len(by_id))
    doc_marks = ", ".join("?" * len(docs))
    rows = db.execute(
        f"SELECT term, doc FROM postings WHERE term IN ({term_marks}) AND doc IN ({doc_marks})",
        (*by_id, *docs),
    )
    for term, doc in rows:
        out[doc].add(by_id[term])
    return out
