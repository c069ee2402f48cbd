"""What is retired on some code: the retired memories bound to the anchors of a memory shown
or written, each with why — superseded ones by moor.lock, forgotten ones by this clone's
journal of the forget (the anchors it unbound, the text it kept) while their tombstone is in
force. Read from the latches and the journal alone, no check: a search's hits
(`retired_beside`), a write's "already known here" (`memory_writes.known_here`) and each
memory a hook injects (`beside`, in its framing's opening line) show them beside the
memory. A light module: a one-shot `moor recall` imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from moor_extractors.memory import parse_memory

from moor_engine.grounding.memories import load_memories
from moor_engine.grounding.trust import MemoryReport, State
from moor_engine.memory import namespaces
from moor_engine.memory.latch import LATCH_ANCHOR, read_latches
from moor_engine.session import Session

if TYPE_CHECKING:  # built only when a memory has retired ones beside it (`Retired.here`)
    from moor_engine.written import Known


def retired_here(
    session: Session, path: str, anchors: set[str], agent: str | None = None
) -> list[Known]:
    """The retired memories bound to any of `anchors` (other than `path`), each with why —
    what a reader of the memory at `path` is shown beside it (a search hit): superseded ones
    moor.lock still binds there, and forgotten ones this clone's journal kept. No check is
    made: the latches alone say what is retired."""
    return Retired(session, agent).here(path, anchors)


def beside(known: Known) -> str:
    """A retired memory as a hook names it beside a memory it shows (`framing.Framed`)."""
    return f"{known.path} ({known.title}): {known.retired_because}"


def retired_beside(
    session: Session, reports: Sequence[MemoryReport], agent: str | None = None
) -> dict[str, list[Known]]:
    """For each memory shown (a search's hits), the retired memories on its code: the
    latches and the journal's forgets read once for all of them."""
    retired = Retired(session, agent)
    return {
        report.path: retired.here(report.path, {a.canonical for a in report.anchors if a.canonical})
        for report in reports
    }


class Retired:
    """The retired memories a reader may see, with the anchors each was bound to: superseded
    ones by moor.lock, forgotten ones by this clone's journal of the forget (the anchors it
    unbound, the text it kept) while their tombstone is in force."""

    def __init__(self, session: Session, agent: str | None) -> None:
        latches = read_latches(session.lock, session.journal)
        memories = session.lock.memories
        # By the latches (a few), not by every memory moor.lock binds (10,000 per search).
        bound = {path: memories[path].anchors for path in latches.retired if path in memories}
        loaded = load_memories(session.workspace, sorted(bound), session.journal)
        # path -> (title, state, anchors, why)
        self.known: dict[str, tuple[str, str, frozenset[str], str]] = {
            path: (
                memory.title,
                State.RETIRED.value,
                frozenset(anchors),
                f"retired: {latches.retired[path].describe()}",
            )
            for path, anchors in bound.items()
            if (memory := loaded[path].memory) is not None and namespaces.sees(memory, agent)
        }
        self.forgotten: dict[str, tuple[str, str, frozenset[str], str]] = {}
        entries = session.journal.entries(anchor=LATCH_ANCHOR) if session.journal else []
        for entry in entries:
            data = entry.data if isinstance(entry.data, dict) else {}
            tombstone = latches.tombstone(str(data.get("value") or ""))
            locked = data.get("locked")
            text = data.get("text")
            if (
                entry.code != "forget"
                or entry.memory is None
                or tombstone is None
                or tombstone.path != entry.memory
                or not isinstance(locked, dict)
                or not isinstance(locked.get("anchors"), dict)
                or not isinstance(text, str)
            ):
                continue
            memory = parse_memory(entry.memory, text.encode("utf-8")).memory
            if namespaces.sees(memory, agent):
                self.forgotten[entry.memory] = (
                    memory.title if memory is not None else entry.memory,
                    "forgotten",
                    frozenset(locked["anchors"]),
                    f"this text was {tombstone.describe()}",
                )

    def here(self, path: str, anchors: set[str], *, superseded: bool = True) -> list[Known]:
        groups = [self.known, self.forgotten] if superseded else [self.forgotten]
        found: list[Known] = []
        for group in groups:
            for other in sorted(group):
                title, state, bound, why = group[other]
                shared = tuple(sorted(anchors.intersection(bound)))
                if other != path and shared:
                    from moor_engine.written import Known  # a read beside no retired one: none

                    found.append(Known(other, title, state, shared, why))
        return found
