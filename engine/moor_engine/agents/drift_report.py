"""The drift report an agent asks for: which memories need a look, as one reader sees them.

It is a reader like recall and about (`namespaces`): the shared memories and the reader's
own; with no agent named, the shared ones only; a memory that cannot be read, or whose
`agent:` is invalid, is visible to nobody. `moor check` is not this: it is the repository's
whole view (CI, a person) and filters nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from moor_extractors.memory import Memory

from moor_engine.agents.since import since
from moor_engine.grounding.memories import LoadedMemory
from moor_engine.grounding.trust import QUIET_STATES, MemoryReport
from moor_engine.memory import namespaces
from moor_engine.session import Session


@dataclass(frozen=True)
class DriftView:
    memories: int  # the memories this reader sees
    needing_a_look: list[MemoryReport]
    # Per canonical reference of their anchors, the journal's time since which it has been
    # as it is now (`since.py`); anchors the journal cannot date are not in it.
    since: dict[str, str] = field(default_factory=dict)


def drift_report(session: Session, agent: str | None = None) -> DriftView:
    """Memories visible to reader `agent` whose state is not a quiet one, in report order;
    an invalid agent name is refused before anything is read."""
    agent = namespaces.reader(agent)
    evaluation = session.evaluate(session.select([]))
    session.observer.flush()
    seen = [
        memory
        for memory in evaluation.report.memories
        if namespaces.sees(_parsed(evaluation.loaded.get(memory.path)), agent)
    ]
    needing = [m for m in seen if m.state not in QUIET_STATES]
    return DriftView(len(seen), needing, since(session.journal, needing))


def _parsed(loaded: LoadedMemory | None) -> Memory | None:
    return None if loaded is None else loaded.memory
