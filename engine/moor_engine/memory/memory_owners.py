"""Whose a memory is, for a reader of the journal: the memory as its file says now, or, for a
memory whose file is gone, as the text its `forget` entry kept. Unknown (removed by hand,
never forgotten through moor): `None`, which `namespaces.sees` shows to nobody.
"""

from __future__ import annotations

from collections.abc import Iterable

from moor_extractors.memory import Memory, parse_memory

from moor_engine.grounding.memories import load_memories
from moor_engine.session import Session


def memories_of(session: Session, paths: Iterable[str]) -> dict[str, Memory | None]:
    """Each of `paths` (workspace-relative memory paths) as the reader's rule needs it."""
    wanted = sorted(set(paths))
    root = session.workspace.root
    present = [p for p in wanted if session.workspace.is_memory_path(p) and (root / p).is_file()]
    loaded = load_memories(session.workspace, present, session.journal)
    found: dict[str, Memory | None] = {p: loaded[p].memory for p in present if p in loaded}
    for path in wanted:
        if path not in found:
            found[path] = _forgotten(session, path)
    return found


def _forgotten(session: Session, path: str) -> Memory | None:
    if session.journal is None:
        return None
    for entry in reversed(session.journal.entries(memory=path)):
        text = entry.data.get("text") if entry.code == "forget" and entry.data else None
        if isinstance(text, str):
            return parse_memory(path, text.encode("utf-8")).memory
    return None
