"""What changed since a cursor: the journal read forward from a `seq`, a page at a time.

An agent that keeps a cursor asks "what happened since I last looked" (DESIGN §8, "changes
since a cursor") and gets every journal entry after it, oldest first, each with the
memories it concerns: the one the entry names, else those bound to its anchor in moor.lock
(an observation of code is journalled by anchor, once for every memory bound there). The
next cursor is the last entry returned, or the journal's end: a cursor past the end (a
journal rebuilt since) gives nothing and the end, so a caller that keeps the next cursor
never misses an entry and never sees one twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from moor_store.journal import Entry

from moor_engine.session import Session, UsageError

DEFAULT_LIMIT = 200
MAX_LIMIT = 1000


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


def changes_since(session: Session, cursor: int = 0, limit: int = DEFAULT_LIMIT) -> Changes:
    """The journal entries after seq `cursor`, oldest first, at most `limit` of them."""
    if cursor < 0:
        raise UsageError(
            f"cursor {cursor}: a cursor is 0 (from the start) or a next_cursor returned earlier"
        )
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"limit {limit}: between 1 and {MAX_LIMIT}")
    if session.journal is None:
        why = "; ".join(session.warnings) or "it is not open"
        raise UsageError(f"the journal cannot be read now ({why}); ask again later")
    head = session.journal.head()
    entries = session.journal.entries(since=cursor, limit=limit + 1)
    page, more = entries[:limit], len(entries) > limit
    bound = _bound_memories(session)
    changes = [_change(entry, bound) for entry in page]
    next_cursor = page[-1].seq if page else min(cursor, head)
    return Changes(changes, next_cursor, head, more)


def _bound_memories(session: Session) -> dict[str, tuple[str, ...]]:
    """Canonical reference -> the memories bound to it in moor.lock."""
    bound: dict[str, list[str]] = {}
    for path, memory in sorted(session.lock.memories.items()):
        for anchor in memory.anchors:
            bound.setdefault(anchor, []).append(path)
    return {anchor: tuple(paths) for anchor, paths in bound.items()}


def _change(entry: Entry, bound: dict[str, tuple[str, ...]]) -> Change:
    memories = (entry.memory,) if entry.memory is not None else bound.get(entry.anchor, ())
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
