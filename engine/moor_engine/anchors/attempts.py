"""A look that could not be taken, as a journal entry: one shape for every anchor kind (a
code anchor's unreadable file and a command anchor's timed-out probe alike, DESIGN §5), and
one place that decides when it is journalled (memory: one-transition-path)."""

from __future__ import annotations

from moor_extractors.reference import ANCHOR_PREFIX
from moor_store.journal import LastLook, NewEntry


def attempt_entry(
    anchor: str, reason: str | None, code: str | None, detail: str | None
) -> NewEntry:
    return NewEntry("attempt", anchor, reason=reason, code=code, detail=detail)


def journals_attempt(anchor: str, code: str | None, previous: LastLook | None) -> bool:
    """Whether a failed look at `anchor` is journalled, `previous` being its last look.

    A command anchor's, every time: each is a run of its command, made on its cadence, and
    a person reading `moor anchors` counts them. A code anchor's, only when it is news (the
    first, or another failure than the last): a code anchor is looked at on every check and
    every keystroke the editor checks, and the same unreadable file at each would flood the
    journal with one fact."""
    if anchor.startswith(ANCHOR_PREFIX):
        return True
    return previous is None or previous.kind != "attempt" or previous.code != code
