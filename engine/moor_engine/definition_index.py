"""Every definition of one language in the workspace, for looking for vanished code
(`relocate.py`): built once per change set, not walked once per anchor (issue 9.13).

A gone anchor may have gone to any file of its language, so relocation needs, over all of
them: which files define a qualified name, which definitions have a given body, and the
kind and size of each definition (to pick candidates worth comparing). Opening a view of
every file for each gone anchor cost seconds and hundreds of MB in a 50,000-file tree.

The index holds just that, per file, with the file's stat. It is brought up to date once
per check (`refresh`: a stat of each file; only files whose stat moved are observed again)
and kept in the journal's cache table as one row per language, so the next check reads
one row instead of a row per file. An editor's unsaved buffer is indexed but never kept.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass

from moor_extractors.languages import language_for_path
from moor_store.journal import CachedFile

from moor_engine.observe import FileObserver, FileView, cache_derivation
from moor_engine.workspace import Workspace

_PREFIX = "index:"
_VERSION = 1
# The body digest is kept only this long: it picks the few files worth observing, whose
# full digests then decide (`relocate._body_matches`).
_BODY_PREFIX = 12
# As for the parse cache: a file modified this recently may change again within one
# timestamp tick without its stat moving, so its stat never vouches for it later.
_RACY_WINDOW_NS = 2_000_000_000


@dataclass(frozen=True)
class Definition:
    """One definition as the index knows it (`index`: its position in the file's sites)."""

    rel: str
    index: int
    qname: str
    kind: str
    length: int
    has_error: bool
    body: str  # the start of its body digest; "" when it has none or does not parse


# Per file: (size, mtime_ns) and its definitions as [qname, kind, length, has_error, body].
_Row = tuple[int, int, list[list[object]]]


class DefinitionIndex:
    def __init__(self, workspace: Workspace, observer: FileObserver, language: str) -> None:
        self.workspace = workspace
        self.observer = observer
        self.language = language
        self._files: dict[str, _Row] | None = None
        self._fresh = False
        self._by_name: dict[str, list[str]] = {}
        self._by_body: dict[tuple[str, str], list[tuple[str, int]]] = {}
        self.reindexed = 0  # files observed to bring the index up to date (for tests)

    def stale(self) -> None:
        """Code may have changed since the last refresh: look at every stat again."""
        self._fresh = False

    def files_named(self, qname: str, other_than: str) -> list[str]:
        self._refresh()
        return [rel for rel in self._by_name.get(qname, []) if rel != other_than]

    def with_body(self, kind: str, body: str, other_than: str) -> list[str]:
        """Files with a definition of this kind whose body digest starts like `body`."""
        self._refresh()
        found = self._by_body.get((kind, body[:_BODY_PREFIX]), [])
        return list(dict.fromkeys(rel for rel, _i in found if rel != other_than))

    def definitions(self, other_than: str) -> list[Definition]:
        self._refresh()
        assert self._files is not None
        return [
            Definition(rel, index, str(q), str(k), int(n), bool(e), str(b))  # type: ignore[call-overload]
            for rel, (_s, _m, sites) in self._files.items()
            if rel != other_than
            for index, (q, k, n, e, b) in enumerate(sites)
        ]

    # -- keeping it up to date --------------------------------------------------------------

    def _refresh(self) -> None:
        if self._fresh:
            return
        files = self._files if self._files is not None else self._load()
        paths = [
            rel for rel in self.workspace.code_paths if language_for_path(rel) == self.language
        ]
        changed: list[str] = []
        for rel in paths:
            row = files.get(rel)
            if rel in self.observer.overlays or row is None or row[1] < 0:
                changed.append(rel)
                continue
            try:
                info = os.stat(self.workspace.root / rel)
            except OSError:
                changed.append(rel)
                continue
            if (info.st_size, info.st_mtime_ns) != (row[0], row[1]):
                changed.append(rel)
        listed = set(paths)
        removed = [rel for rel in files if rel not in listed]
        for rel in removed:
            del files[rel]
        self.observer.preload(changed)
        racy_after = time.time_ns() - _RACY_WINDOW_NS
        for rel in changed:
            view = self.observer.view(rel)
            if not isinstance(view, FileView):
                files.pop(rel, None)
                continue
            files[rel] = _row(view, racy_after)
            view.release_tree()  # sites and facts stay; a tree per file would not fit
        self.reindexed += len(changed)
        self._files = files
        self._fresh = True
        self._by_name, self._by_body = {}, {}
        for rel, (_size, _mtime, sites) in files.items():
            for index, (qname, kind, _n, _e, body) in enumerate(sites):
                names = self._by_name.setdefault(str(qname), [])
                if not names or names[-1] != rel:
                    names.append(rel)
                if body:
                    self._by_body.setdefault((str(kind), str(body)), []).append((rel, index))
        if changed or removed:
            self._store(files)

    def _key(self) -> str:
        return _PREFIX + self.language

    def _derivation(self) -> str:
        return f"{cache_derivation()} index/{_VERSION}"

    def _load(self) -> dict[str, _Row]:
        journal = self.observer.journal
        row = journal.cached_file(self._key()) if journal is not None else None
        if row is None or row.derivation != self._derivation():
            return {}
        try:
            value = json.loads(row.payload)
            return {str(rel): (int(s), int(m), list(sites)) for rel, (s, m, sites) in value.items()}
        except (ValueError, TypeError):
            return {}  # an unreadable row is rebuilt, never trusted

    def _store(self, files: dict[str, _Row]) -> None:
        journal = self.observer.journal
        if journal is None:
            return
        payload = json.dumps(
            {rel: [s, m, sites] for rel, (s, m, sites) in files.items()}, separators=(",", ":")
        )
        journal.store_files(
            [CachedFile(self._key(), len(files), 0, "", self._derivation(), payload)]
        )


class Indexes:
    """One `DefinitionIndex` per language, made when first needed; all stale at once."""

    def __init__(self, workspace: Workspace, observer: FileObserver) -> None:
        self.workspace = workspace
        self.observer = observer
        self._indexes: dict[str, DefinitionIndex] = {}

    def of(self, language: str) -> DefinitionIndex:
        found = self._indexes.get(language)
        if found is None:
            found = self._indexes[language] = DefinitionIndex(
                self.workspace, self.observer, language
            )
        return found

    def stale(self) -> None:
        for index in self._indexes.values():
            index.stale()


def _row(view: FileView, racy_after: int) -> _Row:
    sites: list[list[object]] = []
    for index, site in enumerate(view.sites()):
        body = ""
        if not site.has_error:
            body = view.facts_at(index).axes.get("body", "")[:_BODY_PREFIX]
        sites.append([site.qname, site.kind, site.end_byte - site.start_byte, site.has_error, body])
    size, mtime = view.stat_key
    # An unsaved buffer, or a file modified just now, is looked at again next time.
    if view.overlay or mtime >= racy_after:
        mtime = -1
    return size, mtime, sites
