"""Which memories depend on which files: the graph a change is followed through.

file -> the canonical references into it -> the memories that use them. Built from the
memories one evaluation loaded (`Evaluation.dependents`), so the editor's incremental
check and a check from scratch agree on what a changed file touches; the live check then
keeps it up to date one memory at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from moor_extractors.reference import Reference

from moor_engine.grounding.memories import LoadedMemory


@dataclass
class Dependents:
    """Which memories use which references, both ways (for a change, who to tell)."""

    refs: dict[str, Reference] = field(default_factory=dict)  # canonical -> reference
    # canonical -> memory paths, and memory path -> canonicals: tuples, not sets — nearly
    # every one holds one item, and a set of one costs four times a tuple of one (~3.5 MB
    # of an editor's heap at 10,000 memories, issue 22). Each is replaced, never changed.
    users: dict[str, tuple[str, ...]] = field(default_factory=dict)
    uses: dict[str, tuple[str, ...]] = field(default_factory=dict)
    by_path: dict[str, set[str]] = field(default_factory=dict)  # file -> canonicals in it

    @classmethod
    def of(cls, loaded: Mapping[str, LoadedMemory]) -> Dependents:
        graph = cls()
        for path, memory in loaded.items():
            graph.add(path, memory)
        return graph

    def add(self, path: str, memory: LoadedMemory) -> None:
        """Index one memory's references (replacing what was indexed for it before)."""
        self.remove(path)
        uses: dict[str, None] = {}
        for item in memory.entries:
            if item.ref is None:
                continue
            canonical = item.ref.canonical()
            if canonical in uses:
                continue
            uses[canonical] = None
            self.refs.setdefault(canonical, item.ref)
            self.users[canonical] = (*self.users.get(canonical, ()), path)
            if item.ref.path is not None:
                self.by_path.setdefault(item.ref.path, set()).add(canonical)
        self.uses[path] = tuple(uses)

    def remove(self, path: str) -> list[str]:
        """Forget one memory; returns the references no memory uses any more."""
        unused = []
        for canonical in self.uses.pop(path, ()):
            users = self.users.get(canonical)
            if users is None:
                continue
            users = tuple(user for user in users if user != path)
            if users:
                self.users[canonical] = users
                continue
            del self.users[canonical]
            ref = self.refs.pop(canonical)
            unused.append(canonical)
            if ref.path is not None and ref.path in self.by_path:
                self.by_path[ref.path].discard(canonical)
                if not self.by_path[ref.path]:
                    del self.by_path[ref.path]
        return unused

    def in_files(self, rels: Iterable[str]) -> set[str]:
        """The references into any of these files."""
        return {canonical for rel in rels for canonical in self.by_path.get(rel, ())}

    def memories_using(self, canonicals: Iterable[str]) -> set[str]:
        return {path for canonical in canonicals for path in self.users.get(canonical, ())}
