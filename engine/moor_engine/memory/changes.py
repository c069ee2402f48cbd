"""What changed since a cursor: the journal read forward from a `seq`, a page at a time.

An agent that keeps a cursor asks "what happened since I last looked" (docs/agents.md,
`changes_since`) and gets every journal entry after it, oldest first, each with the
memories it concerns: the one the entry names, else those bound to its anchor in moor.lock
(an observation of code is journalled by anchor, once for every memory bound there). The
next cursor is the last entry returned, or the journal's end: a cursor past the end (a
journal rebuilt since) gives nothing and the end, so a caller that keeps the next cursor
never misses an entry and never sees one twice.

A reader sees the entries of the memories it may see only (`namespaces`: shared ones and its
own; no agent named, shared ones only): an entry naming another agent's memory is left out,
as is an observation of code that only another agent's memories are bound to, and such
memories are left out of an entry's `memories`. Cursors still count every entry, so a page
may hold fewer than `limit` entries while `more` is true. `head` is the journal's, not the
reader's: it says how far the journal goes, nothing of whose entries those are.
"""

from __future__ import annotations

from dataclasses import dataclass

from moor_extractors.memory import Memory
from moor_store.journal import Entry

from moor_engine.memory import namespaces
from moor_engine.memory.memory_owners import memories_of
from moor_engine.session import Session
from moor_engine.usage import UsageError

DEFAULT_LIMIT = 200
MAX_LIMIT = 1000
# The journal's seq is SQLite's INTEGER, a signed 64-bit number: a larger cursor is no seq
# the journal ever returned, and SQLite itself cannot even be asked about it (OverflowError).
MAX_CURSOR = 2**63 - 1


@dataclass(frozen=True)
class Change:
    seq: int
    at: str
    kind: str
    anchor: str
    memory: str | None  # the memory the entry names, if it names one
    memories: tuple[str, ...]  # the memories it concerns
    code: str | None
    reason: str | None
    detail: str | None


@dataclass(frozen=True)
class Changes:
    changes: list[Change]
    next_cursor: int  # pass it back to get what follows
    head: int  # the journal's latest seq now
    more: bool  # entries after next_cursor exist already


def changes_since(
    session: Session, cursor: int = 0, limit: int = DEFAULT_LIMIT, agent: str | None = None
) -> Changes:
    """The journal entries after seq `cursor` that reader `agent` may see, oldest first, out
    of at most `limit` entries read."""
    agent = namespaces.reader(agent)
    if not 0 <= cursor <= MAX_CURSOR:
        raise UsageError(
            f"cursor {_shown(cursor)}: a cursor is 0 (from the start) or a next_cursor "
            "returned earlier",
            code="invalid_argument",
        )
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(
            f"limit {_shown(limit)}: between 1 and {MAX_LIMIT}", code="invalid_argument"
        )
    if session.journal is None:
        why = "; ".join(session.warnings) or "it is not open"
        raise UsageError(
            f"the journal cannot be read now ({why}); ask again later", code="journal_unusable"
        )
    head = session.journal.head()
    entries = session.journal.entries(since=cursor, limit=limit + 1)
    page, more = entries[:limit], len(entries) > limit
    bound = _bound_memories(session)
    concerned = {m for entry in page for m in _concerns(entry, bound)}
    owners = memories_of(session, concerned)
    changes = [
        change for entry in page if (change := _visible(entry, bound, owners, agent)) is not None
    ]
    next_cursor = page[-1].seq if page else min(cursor, head)
    return Changes(changes, next_cursor, head, more)


def _shown(number: int) -> str:
    """A number as a message quotes it: a huge one by its size (its digits are no help, and
    Python refuses to write out one of over 4,300)."""
    return str(number) if abs(number) < 10**24 else f"of {number.bit_length()} bits"


def _bound_memories(session: Session) -> dict[str, tuple[str, ...]]:
    """Canonical reference -> the memories bound to it in moor.lock."""
    bound: dict[str, list[str]] = {}
    for path, memory in sorted(session.lock.memories.items()):
        for anchor in memory.anchors:
            bound.setdefault(anchor, []).append(path)
    return {anchor: tuple(paths) for anchor, paths in bound.items()}


def _concerns(entry: Entry, bound: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    return (entry.memory,) if entry.memory is not None else bound.get(entry.anchor, ())


def _visible(
    entry: Entry,
    bound: dict[str, tuple[str, ...]],
    owners: dict[str, Memory | None],
    agent: str | None,
) -> Change | None:
    """The entry as reader `agent` may see it, or None when it concerns only memories it
    may not see."""
    concerns = _concerns(entry, bound)
    memories = tuple(m for m in concerns if namespaces.sees(owners.get(m), agent))
    if concerns and not memories:
        return None
    return _change(entry, memories)


def _change(entry: Entry, memories: tuple[str, ...]) -> Change:
    return Change(
        seq=entry.seq,
        at=entry.at,
        kind=entry.kind,
        anchor=entry.anchor,
        memory=entry.memory,
        memories=memories,
        code=entry.code,
        reason=entry.reason,
        detail=entry.detail,
    )
