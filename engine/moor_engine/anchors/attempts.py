"""A look that could not be taken, as a journal entry: one shape for every anchor kind (a
code anchor's unreadable file and a command anchor's timed-out probe alike, DESIGN §5)."""

from __future__ import annotations

from moor_store.journal import NewEntry


def attempt_entry(
    anchor: str, reason: str | None, code: str | None, detail: str | None
) -> NewEntry:
    return NewEntry("attempt", anchor, reason=reason, code=code, detail=detail)
