"""Searches for vanished code, kept per change set (issue 9.13).

Where a vanished target went is a function of the bound anchor and of every code file in
the workspace (and of moor's own code). When git's view of the worktree is the one a
search was made in — the same index blobs, the same stats of every file git does not vouch
for (`worktree.Worktree.digest`), the same configuration and the same moor — the search
would find the same thing, so a check reads it back instead of loading the definition
index and comparing candidates again. Anything else looks again: a changed file, a racy
stat, an editor's unsaved buffer, no git.
"""

from __future__ import annotations

import functools
import json

from moor_extractors.digest import digest_bytes
from moor_extractors.reference import Reference
from moor_store.journal import CachedFile
from moor_store.lockfile import LockedAnchor
from moor_store.own_files import read_own_sources

from moor_engine.grounding import definition_index, file_renames, places, relocate
from moor_engine.grounding.definition_index import Indexes
from moor_engine.grounding.observe import FileObserver, cache_derivation
from moor_engine.grounding.relocation_result import Relocation, Search
from moor_engine.grounding.trust import Candidate
from moor_engine.workspace import worktree
from moor_engine.workspace.worktree import Worktree

_KEY = "relocations:"


class RelocationMemo:
    def __init__(self, observer: FileObserver, indexes: Indexes, setting: str) -> None:
        self.observer = observer
        self.indexes = indexes
        self._setting = setting  # the configuration, as text: which files count
        self._looked: Worktree | None = None
        self._digest: str | None = None
        self._kept: dict[str, object] | None = None
        self.recalled = 0  # searches read back, for tests and benchmarks

    def recall(self, ref: Reference, locked: LockedAnchor) -> Search | None:
        digest = self._current()
        if digest is None:
            return None
        kept = self._load(digest)
        found = kept.get(_entry(ref, locked))
        search = _search(found) if found is not None else None
        if search is not None:
            self.recalled += 1
        return search

    def keep(self, ref: Reference, locked: LockedAnchor, search: Search) -> None:
        digest = self._current()
        journal = self.observer.journal
        if digest is None or journal is None:
            return
        kept = self._load(digest)
        kept[_entry(ref, locked)] = _json(search)
        payload = json.dumps({"digest": digest, "searches": kept}, sort_keys=True)
        journal.store_files([CachedFile(_KEY, 0, 0, "", _derivation(), payload)])

    def _current(self) -> str | None:
        """The digest of the change set this check sees; None: nothing may be kept."""
        if self.observer.overlays:
            return None
        looked = self.indexes.worktree()
        if looked is None:
            return None
        if looked is not self._looked:
            self._looked, self._kept = looked, None
            also = f"{_derivation()}\n{self._setting}"
            self._digest = looked.digest(also, self.indexes.workspace.is_ignored)
        return self._digest

    def _load(self, digest: str) -> dict[str, object]:
        if self._kept is not None:
            return self._kept
        self._kept = {}
        journal = self.observer.journal
        row = journal.cached_file(_KEY) if journal is not None else None
        if row is not None and row.derivation == _derivation():
            try:
                stored = json.loads(row.payload)
            except ValueError:
                stored = None
            if isinstance(stored, dict) and stored.get("digest") == digest:
                searches = stored.get("searches")
                if isinstance(searches, dict):
                    self._kept = searches
        return self._kept


def _entry(ref: Reference, locked: LockedAnchor) -> str:
    return json.dumps(
        [
            ref.canonical(),
            locked.address,
            locked.derivation,
            locked.kind,
            sorted(locked.axes.items()),
        ]
    )


def _json(search: Search) -> dict[str, object]:
    relocation = search.relocation
    return {
        "relocation": None
        if relocation is None
        else [relocation.ref.path, relocation.ref.symbol, relocation.how],
        "candidates": [[c.ref, c.similarity] for c in search.candidates],
        "why": search.why,
    }


def _search(value: object) -> Search | None:
    """A kept search, or None when it is not one (a damaged row is looked for again)."""
    if not isinstance(value, dict):
        return None
    relocation, candidates, why = value.get("relocation"), value.get("candidates"), value.get("why")
    if why is not None and not isinstance(why, str):
        return None
    found: Relocation | None = None
    if relocation is not None:
        if not (isinstance(relocation, list) and len(relocation) == 3):
            return None
        path, symbol, how = relocation
        if not (isinstance(path, str) and isinstance(how, str)):
            return None
        if symbol is not None and not isinstance(symbol, str):
            return None
        found = Relocation(Reference(path, symbol, None), how)
    if not isinstance(candidates, list):
        return None
    ranked: list[Candidate] = []
    for item in candidates:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
            return None
        similarity = item[1]
        if similarity is not None and not isinstance(similarity, int | float):
            return None
        ranked.append(Candidate(item[0], None if similarity is None else float(similarity)))
    return Search(found, tuple(ranked), why)


@functools.cache
def _derivation() -> str:
    # The modules whose logic a kept search stands for: a change to any of them looks again.
    logic = read_own_sources(
        module.__file__ for module in (relocate, definition_index, file_renames, places, worktree)
    ) + read_own_sources([__file__])
    return f"{cache_derivation()} relocation/{digest_bytes(logic)[:16]}"
