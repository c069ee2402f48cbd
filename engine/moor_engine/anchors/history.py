"""`moor log anchor:NAME`: what this clone's journal holds of one custom anchor — each
observation, attempt and transition, in order."""

from __future__ import annotations

from moor_extractors.model import Failure
from moor_extractors.reference import parse_reference
from moor_store.journal import Entry

from moor_engine.session import Session
from moor_engine.usage import UsageError


def anchor_log(session: Session, raw: str) -> tuple[str, list[Entry]]:
    """The anchor's canonical name and its entries; refused when no such anchor is known
    (declared in moor.toml, or bound in moor.lock)."""
    ref = parse_reference(raw)
    if isinstance(ref, Failure) or ref.anchor is None:
        detail = ref.detail if isinstance(ref, Failure) else "not an anchor:NAME reference"
        raise UsageError(f"{raw}: {detail}", code="bad_reference")
    canonical = ref.canonical()
    bound = any(canonical in memory.anchors for memory in session.lock.memories.values())
    if ref.anchor not in session.workspace.config.anchors and not bound:
        raise UsageError(
            f"{canonical} is neither declared in moor.toml nor bound in moor.lock",
            code="not_found",
        )
    if session.journal is None:
        return canonical, []
    return canonical, session.journal.entries(anchor=canonical)
