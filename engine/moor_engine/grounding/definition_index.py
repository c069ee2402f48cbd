"""Every definition of one language in the workspace, for looking for vanished code
(`relocate.py`): built once per change set, not walked once per anchor (issue 9.13).

A gone anchor may have gone to any file of its language, so relocation needs, over all of
them: which files define a qualified name, which definitions have a given body, and the
kind and size of each definition (to pick candidates worth comparing). Opening a view of
every file for each gone anchor cost seconds and hundreds of MB in a 50,000-file tree.

The index holds just that, per file, with what vouches for the file's bytes: the git blob
they were, for a tracked file git vouches is unchanged (`worktree.vouched_blobs`: git
compares the stats in C), else the file's stat key (`filestat`). It is brought up to date
once per check (`refresh`: only files whose key moved are observed again) and kept in the
journal's cache table as one row per language, so the next check reads one row instead of
a row per file. An editor's unsaved buffer is indexed but never kept.
"""

from __future__ import annotations

import json
import os
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING

from moor_extractors.digest import digest_bytes
from moor_extractors.languages import language_for_path
from moor_store.inside import read_inside
from moor_store.journal import CachedFile

from moor_engine.workspace.filestat import StatKey, stat_key

if TYPE_CHECKING:
    import subprocess
from moor_engine.grounding.observe import FileObserver, FileView, cache_derivation
from moor_engine.workspace.python_children import WORKING_FOLDER, module_command
from moor_engine.workspace.workspace import Workspace
from moor_engine.workspace.worktree import Worktree, blob_id, look

_PREFIX = "index:"
_VERSION = 4
# The body digest is kept only this long: it picks the few files worth observing, whose
# full digests then decide (`relocate._body_matches`).
_BODY_PREFIX = 12
# Between the columns of the kept index, and between the items of a column.
_COLUMN, _ITEM = "\x1e", "\x1f"
_BLOB = "g"  # a row key naming a git blob; a stat key starts "s"
# Files nothing is known of, from which on they are parsed by a process per CPU (fewer do
# not repay the processes' start), and at most this many processes.
_PARALLEL_AT = 1000
_MAX_WORKERS = 8
Site = tuple[str, str, int, bool, str]  # qname, kind, length, whether it parses, body digest
Rows = dict[str, tuple[str, list[Site]]]  # path -> (its key, its definitions)
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


class _Table:
    """The index as columns (one row of flat columns loads several times faster than a
    record per file): per file its path and stat and how many definitions it has; per
    definition, in file order, its qualified name, kind, length, whether it parses and the
    start of its body digest."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.keys: list[str] = []  # per file, what vouches for it (`_file_key`)
        self.counts: list[int] = []
        self.qnames: list[str] = []
        self.kinds: list[str] = []
        self.lengths: list[int] = []
        self.errors: list[bool] = []
        self.bodies: list[str] = []

    def files(self) -> dict[str, tuple[str, int]]:
        """Path -> (its key, position of its first definition)."""
        found: dict[str, tuple[str, int]] = {}
        start = 0
        for rel, key, count in zip(self.paths, self.keys, self.counts, strict=True):
            found[rel] = (key, start)
            start += count
        return found

    def starts(self) -> list[int]:
        """Per file, the position of its first definition."""
        return list(accumulate(self.counts, initial=0))[:-1]

    def add(self, rel: str, key: str, sites: list[tuple[str, str, int, bool, str]]) -> None:
        self.paths.append(rel)
        self.keys.append(key)
        self.counts.append(len(sites))
        for qname, kind, length, error, body in sites:
            self.qnames.append(qname)
            self.kinds.append(kind)
            self.lengths.append(length)
            self.errors.append(error)
            self.bodies.append(body)

    def copy_file(self, other: _Table, rel: str, at: tuple[str, int], count: int) -> None:
        key, start = at
        end = start + count
        self.add(
            rel,
            key,
            list(
                zip(
                    other.qnames[start:end],
                    other.kinds[start:end],
                    other.lengths[start:end],
                    other.errors[start:end],
                    other.bodies[start:end],
                    strict=True,
                )
            ),
        )

    def dumps(self) -> str | None:
        """The columns as one text, each a run of items between separators (splitting a
        string is many times faster than decoding JSON); None when some name holds a
        separator, so cannot be kept this way."""
        kinds = sorted(set(self.kinds))
        ids = {kind: str(number) for number, kind in enumerate(kinds)}
        columns = [
            self.paths,
            self.keys,
            [str(n) for n in self.counts],
            self.qnames,
            kinds,
            [ids[kind] for kind in self.kinds],
            [str(n) for n in self.lengths],
            ["1" if e else "" for e in self.errors],
            self.bodies,
        ]
        if any(
            _ITEM in item or _COLUMN in item
            for column in (self.paths, self.qnames, kinds)
            for item in column
        ):
            return None
        return _COLUMN.join(_ITEM.join(column) for column in columns)

    @classmethod
    def loads(cls, text: str) -> _Table:
        columns = [column.split(_ITEM) if column else [] for column in text.split(_COLUMN)]
        if len(columns) != 9:
            raise ValueError("the index has another number of columns")
        paths, keys, counts, qnames, kinds, ids, lengths, errors, bodies = columns
        table = cls()
        table.paths, table.keys = paths, keys
        table.counts = [int(n) for n in counts]
        table.qnames = qnames
        table.kinds = [kinds[int(number)] for number in ids]
        table.lengths = [int(n) for n in lengths]
        table.errors = [bool(e) for e in errors]
        table.bodies = bodies
        files = {len(table.paths), len(table.keys), len(table.counts)}
        sites = {len(table.qnames), len(table.kinds), len(table.lengths), len(table.errors)}
        if len(files) != 1 or sites != {sum(table.counts)} or len(table.bodies) not in sites:
            raise ValueError("the index's columns disagree")
        return table


class DefinitionIndex:
    def __init__(
        self,
        workspace: Workspace,
        observer: FileObserver,
        language: str,
        worktree: Callable[[], Worktree | None],
    ) -> None:
        self.workspace = workspace
        self.observer = observer
        self.language = language
        self._worktree = worktree
        self._table: _Table | None = None
        self._fresh = False
        self._starts: list[int] = []  # per file: the position of its first definition
        # Per kind: lengths in ascending order, and the definition each one is.
        self._by_length: dict[str, tuple[list[int], list[int]]] = {}
        self.reindexed = 0  # files observed to bring the index up to date

    def stale(self) -> None:
        """Code may have changed since the last refresh: look at every stat again."""
        self._fresh = False

    def _definition(self, at: int) -> Definition:
        """The definition at position `at` of the columns."""
        assert self._table is not None
        table = self._table
        file = bisect_right(self._starts, at) - 1
        return Definition(
            table.paths[file],
            at - self._starts[file],
            table.qnames[at],
            table.kinds[at],
            table.lengths[at],
            table.errors[at],
            table.bodies[at],
        )

    def files_named(self, qname: str, other_than: str) -> list[str]:
        """Files other than one that define `qname`."""
        table = self._refresh()
        found = (self._definition(at).rel for at in _positions(table.qnames, qname))
        return [rel for rel in dict.fromkeys(found) if rel != other_than]

    def with_body(self, kind: str, body: str, other_than: str) -> list[str]:
        """Files with a definition of this kind whose body digest starts like `body`."""
        table = self._refresh()
        found = (
            self._definition(at).rel
            for at in _positions(table.bodies, body[:_BODY_PREFIX])
            if table.kinds[at] == kind
        )
        return [rel for rel in dict.fromkeys(found) if rel != other_than]

    def nearest(self, size: int, kinds: set[str], other_than: str, limit: int) -> list[Definition]:
        """Up to `limit` definitions of these kinds that parse, outside one file, nearest
        in length to `size` and at most twice or half as long."""
        table = self._refresh()
        found: list[Definition] = []
        for kind in sorted(kinds):
            by_length = self._by_length.get(kind)
            if by_length is None:
                ours = [i for i, k in enumerate(table.kinds) if k == kind and not table.errors[i]]
                ours.sort(key=lambda i: table.lengths[i])
                by_length = self._by_length[kind] = ([table.lengths[i] for i in ours], ours)
            lengths, positions = by_length
            # Outwards from `size`, nearest first, within half to twice its length.
            low, high = bisect_left(lengths, size / 2), bisect_right(lengths, size * 2)
            right = min(max(bisect_left(lengths, size), low), high)
            left = right - 1
            taken = 0
            while taken < limit and (left >= low or right < high):
                if right >= high or (left >= low and size - lengths[left] <= lengths[right] - size):
                    at, left = positions[left], left - 1
                else:
                    at, right = positions[right], right + 1
                definition = self._definition(at)
                if definition.rel != other_than:
                    found.append(definition)
                    taken += 1
        return found

    # -- keeping it up to date --------------------------------------------------------------

    def _refresh(self) -> _Table:
        if self._fresh and self._table is not None:
            return self._table
        old = self._table if self._table is not None else self._load()
        known = old.files()
        looked = self._worktree()
        vouched = looked.vouched_blobs() if looked is not None else {}
        root = str(self.workspace.root) + os.sep
        suffixes: dict[str, bool] = {}
        changed: list[str] = []
        listed: list[str] = []
        for rel in self.workspace.code_paths:
            suffix = rel[rel.rfind(".") :] if "." in rel else ""
            ours = suffixes.get(suffix)
            if ours is None:
                ours = suffixes[suffix] = language_for_path(rel) == self.language
            if not ours:
                continue
            listed.append(rel)
            at = known.get(rel)
            if rel in self.observer.overlays or at is None or not at[0]:
                changed.append(rel)
                continue
            blob = vouched.get(rel)
            if blob is not None:
                if at[0] != _BLOB + blob:
                    changed.append(rel)
                continue
            try:
                info = os.stat(root + rel)
            except OSError:
                changed.append(rel)
                continue
            if at[0] != _stat_text(stat_key(info)):
                changed.append(rel)
        if changed or len(listed) != len(old.paths):
            table = self._rebuild(old, known, listed, set(changed), vouched)
            self._store(table)
        else:
            table = old
        self.reindexed += len(changed)
        self._table, self._fresh = table, True
        self._starts = table.starts()
        self._by_length = {}
        return table

    def _rebuild(
        self,
        old: _Table,
        known: dict[str, tuple[str, int]],
        listed: list[str],
        changed: set[str],
        vouched: dict[str, str],
    ) -> _Table:
        """The index of `listed`: `changed` files observed again, the others copied."""
        counts = dict(zip(old.paths, old.counts, strict=True))
        self.observer.preload(changed)
        racy_after = time.time_ns() - _RACY_WINDOW_NS
        unknown = [rel for rel in listed if rel in changed and not self.observer.knows(rel)]
        parsed = _in_parallel(self.workspace.root, self.observer.max_file_size, unknown, vouched)
        table = _Table()
        for rel in listed:
            if rel not in changed:
                table.copy_file(old, rel, known[rel], counts[rel])
                continue
            if rel in parsed:
                table.add(rel, *parsed[rel])
                continue
            view = self.observer.view(rel)
            if isinstance(view, FileView):
                key = _file_key(self.workspace.root, view, vouched.get(rel), racy_after)
                table.add(rel, key, _sites(view))
                view.release_tree()  # sites and facts stay; a tree per file would not fit
        return table

    def _key(self) -> str:
        return _PREFIX + self.language

    def _derivation(self) -> str:
        return f"{cache_derivation()} index/{_VERSION}"

    def _load(self) -> _Table:
        journal = self.observer.journal
        row = journal.cached_file(self._key()) if journal is not None else None
        if row is None or row.derivation != self._derivation():
            return _Table()
        try:
            return _Table.loads(row.payload)
        except (ValueError, IndexError):
            return _Table()  # an unreadable row is rebuilt, never trusted

    def _store(self, table: _Table) -> None:
        journal = self.observer.journal
        payload = table.dumps()
        if journal is not None and payload is not None:
            key, derivation = self._key(), self._derivation()
            journal.store_files([CachedFile(key, len(table.paths), 0, "", derivation, payload)])


class Indexes:
    """One `DefinitionIndex` per language, made when first needed, and git's view of the
    worktree they were brought up to date with; all stale at once."""

    def __init__(self, workspace: Workspace, observer: FileObserver) -> None:
        self.workspace = workspace
        self.observer = observer
        self._indexes: dict[str, DefinitionIndex] = {}
        self._looked: tuple[Worktree | None] | None = None

    def of(self, language: str) -> DefinitionIndex:
        found = self._indexes.get(language)
        if found is None:
            found = self._indexes[language] = DefinitionIndex(
                self.workspace, self.observer, language, self.worktree
            )
        return found

    def worktree(self) -> Worktree | None:
        """git's view of the worktree, looked at once until code is known to change."""
        if self._looked is None:
            self._looked = (look(self.workspace.root),)
        return self._looked[0]

    def stale(self) -> None:
        self._looked = None
        for index in self._indexes.values():
            index.stale()


def _in_parallel(root: Path, max_file_size: int, rels: list[str], vouched: dict[str, str]) -> Rows:
    """The rows of many files nothing is known of (a fresh clone's first search), parsed
    by a process per CPU (`python -m moor_engine.grounding.index_worker`); {} when there are too few
    to repay the processes' start or one CPU. A worker that fails leaves its files out of
    the answer, and the caller observes them itself."""
    workers = min(os.cpu_count() or 1, _MAX_WORKERS)
    if len(rels) < _PARALLEL_AT or workers < 2:
        return {}
    import subprocess  # only for a search across a fresh clone

    running: list[subprocess.Popen[bytes]] = []
    for at in range(workers):
        chunk = rels[at::workers]
        job = {
            "root": str(root),
            "max_file_size": max_file_size,
            "rels": chunk,
            "vouched": {rel: vouched[rel] for rel in chunk if rel in vouched},
        }
        try:
            process = subprocess.Popen(
                module_command("moor_engine.grounding.index_worker"),
                cwd=WORKING_FOLDER,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            continue
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps(job).encode("utf-8"))
            process.stdin.close()
        except OSError:
            process.kill()
        running.append(process)
    found: Rows = {}
    for process in running:
        assert process.stdout is not None
        out = process.stdout.read()
        process.stdout.close()
        if process.wait() == 0:
            found.update(_parsed_rows(out))
    return found


def _parsed_rows(out: bytes) -> Rows:
    """A worker's answer, each row checked; a row that is not one is left out."""
    try:
        value = json.loads(out)
    except ValueError:
        return {}
    rows: Rows = {}
    if not isinstance(value, dict):
        return rows
    for rel, row in value.items():
        try:
            key, sites = row
            rows[str(rel)] = (
                str(key),
                [(str(q), str(k), int(n), bool(e), str(b)) for q, k, n, e, b in sites],
            )
        except (TypeError, ValueError):
            continue
    return rows


def rows_of(root: Path, max_file_size: int, rels: list[str], vouched: dict[str, str]) -> Rows:
    """Each file observed as a check would (contained, capped, settled): its key and its
    definitions. What a worker process computes."""
    observer = FileObserver(root, max_file_size, None)
    racy_after = time.time_ns() - _RACY_WINDOW_NS
    rows: Rows = {}
    for rel in rels:
        view = observer.view(rel)
        if isinstance(view, FileView):
            rows[rel] = (_file_key(root, view, vouched.get(rel), racy_after), _sites(view))
            view.release_tree()
    return rows


def _sites(view: FileView) -> list[tuple[str, str, int, bool, str]]:
    sites: list[tuple[str, str, int, bool, str]] = []
    for index, site in enumerate(view.sites()):
        body = ""
        if not site.has_error:
            body = view.facts_at(index).axes.get("body", "")[:_BODY_PREFIX]
        sites.append((site.qname, site.kind, site.end_byte - site.start_byte, site.has_error, body))
    return sites


def _file_key(root: Path, view: FileView, blob: str | None, racy_after: int) -> str:
    """What will vouch for the file's row next time: the blob git's index names, when the
    bytes the view describes are that blob; else its stat (git's stat key, `filestat`).
    "" never vouches: an unsaved buffer, or a file modified just now, is looked at again."""
    if view.overlay:
        return ""
    if blob is not None:
        seen = view.held_source()
        if seen is None:  # a view from a cache row: its bytes, if they are still the file's
            try:
                again = read_inside(root, view.rel, limit=view.stat_key.size)
            except OSError:
                again = None
            seen = again if again is not None and digest_bytes(again) == view.sha else None
        if seen is not None and blob_id(seen, blob) == blob:
            return _BLOB + blob
    if view.stat_key.mtime_ns >= racy_after:
        return ""
    return _stat_text(view.stat_key)


def _stat_text(key: StatKey) -> str:
    return "s" + ":".join(map(str, key))


def _positions(column: list[str], value: str) -> list[int]:
    """Where `value` is in `column` (`list.index` scans in C: no dict of 100,000 names is
    built for the few names looked up)."""
    found: list[int] = []
    if not value:
        return found
    at = -1
    while True:
        try:
            at = column.index(value, at + 1)
        except ValueError:
            return found
        found.append(at)
