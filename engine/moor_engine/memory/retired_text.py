"""Whether a memory being written says what a retired memory said: the one rule every write
takes (add, edit, bind, and through them MCP's writes, the hook's `remember:` and `moor
source bind`).

A value is retired two ways (`latch.py`): forgotten (its tombstone holds the value) or
superseded (the retired memory's text is the value: its file's, or once the file is
deleted, what the retirement's journal entry kept). Writing either
back under another title or path would bring it back as current without anyone deciding
so; `moor restore` is the one way back. Values compare as `Memory.value` does (case,
spacing and punctuation do not count), never by similarity: a paraphrase is a new claim,
shown beside its retired sibling (`memory_writes.known_here`) rather than refused.

A superseded memory is never refused for its own text (editing or binding the retired file
itself), nor is its successor (named by the retirement, or declaring `supersedes:`) for
saying it again: that is no return. A forgotten text is refused at any path, its own
included: its file was removed, and writing it there again is a return.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from moor_extractors.memory import Memory
from moor_store.journal import Journal

from moor_engine.grounding.memories import load_memories
from moor_engine.memory.latch import Event, Latches
from moor_engine.workspace.workspace import Workspace

if TYPE_CHECKING:  # a write's session; a check (grounding/check.py) imports this module
    from moor_engine.session import Session
    from moor_engine.written import Refusal

_CHAIN = 32  # successors followed at most (a cycle of hand-written retirements ends)


def refusal(session: Session, path: str, memory: Memory, latches: Latches) -> Refusal | None:
    """Why `memory`, about to be written at `path`, may not be (`RetiredText.refusal`)."""
    return RetiredText(session, latches).refusal(path, memory)


class RetiredText:
    """The retired values of one workspace state, for writes of one or many memories: the
    superseded memories' texts are read once, when a write first needs them."""

    def __init__(self, session: Session, latches: Latches) -> None:
        self.session = session
        self.latches = latches
        self._superseded: Mapping[str, list[Event]] | None = None

    def refusal(self, path: str, memory: Memory) -> Refusal | None:
        """Why `memory`, about to be written at `path`, may not be: its text is forgotten
        (`forgotten`) or is a superseded memory's (`superseded`); None when it is neither."""
        # Imported by a write only: a check imports this module, and a read never refuses.
        from moor_engine.written import Refusal

        tombstone = self.latches.tombstone(memory.value)
        if tombstone is not None:
            return Refusal(
                "forgotten",
                f"refused: this text was {tombstone.describe()}",
                path=tombstone.path,
                instead=f'moor restore {tombstone.path} --why "..."',
            )
        if self._superseded is None:
            self._superseded = superseded_values(
                self.session.workspace, self.session.journal, self.latches
            )
        old = saying(self._superseded, path, memory)
        if old is None:
            return None
        successor = current_successor(old, self.latches.retired)
        return Refusal(
            "superseded",
            f"refused: this text is what {old.path} said, and it was {old.describe()}; "
            f"what is true now is in {successor}: edit that, or restore {old.path} if it "
            "should hold after all",
            path=old.path,
            instead=f'moor restore {old.path} --why "..."',
        )


def superseded_values(
    workspace: Workspace, journal: Journal | None, latches: Latches
) -> dict[str, list[Event]]:
    """Each superseded memory's value, with its retirement: read once per state of the
    latches, by a write and by a check alike. A retired file that is gone (or unreadable)
    says what its retirement's journal entry kept (`latch.retire`)."""
    paths = sorted(latches.retired)
    loaded = load_memories(workspace, paths, journal)
    values: dict[str, list[Event]] = {}
    for path in paths:
        memory = loaded[path].memory
        value = memory.value if memory is not None else latches.retired[path].value
        if value:
            values.setdefault(value, []).append(latches.retired[path])
    return values


def saying(values: Mapping[str, list[Event]], path: str, memory: Memory) -> Event | None:
    """The retirement of a superseded memory whose text `memory` (at `path`) says again:
    never its own file, nor one it supersedes (declared, or retired by it)."""
    return next(
        (
            event
            for event in values.get(memory.value, ())
            if path not in (event.path, event.by) and event.path not in memory.supersedes
        ),
        None,
    )


def current_successor(retired: Event, retirements: Mapping[str, Event]) -> str:
    """The memory that says now what `retired` said: its successor's successor, and so on."""
    by = retired.by
    for _ in range(_CHAIN):
        further = retirements.get(by)
        if further is None or not further.by:
            break
        by = further.by
    return by
