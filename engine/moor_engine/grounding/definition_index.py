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
import operator
import os
import sys
import time
import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate, compress, repeat
from pathlib import Path
from typing import TYPE_CHECKING

from moor_extractors.digest import digest_bytes
from moor_extractors.languages import language_for_path
from moor_extractors.reference import ANCHOR_PREFIX
from moor_store.inside import read_inside, stat_inside
from moor_store.journal import CachedFile
from moor_store.lockfile import Lock

from moor_engine.workspace.filestat import StatKey, stat_key

if TYPE_CHECKING:
    import subprocess
from moor_engine.grounding.observe import (
    FileObserver,
    FileView,
    cache_derivation,
    definition_text,
)
from moor_engine.workspace.python_children import WORKING_FOLDER, module_command
from moor_engine.workspace.workspace import Workspace
from moor_engine.workspace.worktree import Worktree, blob_id, look

_PREFIX = "index:"
_CHANGES = "index-changes:"  # the files changed since the base row
# Up to this many files changed (or an eighth of the index) are kept beside the base row.
_FEW_CHANGES = 256
_VERSION = 6
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
# qname, kind, length, whether it parses, body digest, start (its first byte in the file)
Site = tuple[str, str, int, bool, str, int]
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
    start: int = -1  # its first byte in the file; -1: not known (not read at it)


class _Table:
    """The index as columns (one row of flat columns loads several times faster than a
    record per file): per file its path and stat and how many definitions it has; per
    definition, in file order, its qualified name, kind, length, whether it parses, the
    start of its body digest and its first byte in the file (`DefinitionIndex.source`)."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.keys: list[str] = []  # per file, what vouches for it (`_file_key`)
        self.counts: list[int] = []
        self.qnames: list[str] = []
        self.kinds: list[str] = []
        self.lengths: list[int] = []
        self.errors: list[bool] = []
        self.bodies: list[str] = []
        self.offsets: list[int] = []
        self.tracked = ""  # git's index the blob keys were taken against (`index_digest`)
        self.generation = ""  # which base row this is, or applies to
        self.removed: list[str] = []  # in a row of changes: the files no longer indexed

    def key_of(self, rel: str) -> str | None:
        at = bisect_left(self.paths, rel)
        return self.keys[at] if at < len(self.paths) and self.paths[at] == rel else None

    def unvouched(self) -> set[str]:
        """The files keyed by their stat, or by nothing: git did not vouch for them."""
        blob = map(str.startswith, self.keys, repeat(_BLOB))  # in C: a pass per check
        return set(compress(self.paths, map(operator.not_, blob)))

    def rows(self) -> Rows:
        starts = self.starts()
        return {
            rel: (
                self.keys[file],
                list(
                    zip(
                        self.qnames[starts[file] : starts[file + 1]],
                        self.kinds[starts[file] : starts[file + 1]],
                        self.lengths[starts[file] : starts[file + 1]],
                        self.errors[starts[file] : starts[file + 1]],
                        self.bodies[starts[file] : starts[file + 1]],
                        self.offsets[starts[file] : starts[file + 1]],
                        strict=True,
                    )
                ),
            )
            for file, rel in enumerate(self.paths)
        }

    def starts(self) -> list[int]:
        """Per file, the position of its first definition (and, last, the end)."""
        return list(accumulate(self.counts, initial=0))

    def add(self, rel: str, key: str, sites: list[Site]) -> None:
        self.paths.append(rel)
        self.keys.append(key)
        self.counts.append(len(sites))
        for qname, kind, length, error, body, start in sites:
            self.qnames.append(qname)
            self.kinds.append(kind)
            self.lengths.append(length)
            self.errors.append(error)
            self.bodies.append(body)
            self.offsets.append(start)

    def patch(self, rows: Rows, drop: set[str]) -> None:
        """Leave out the files in `drop` and put `rows` in their place, in path order: the
        table a build from scratch would give."""
        changed = sorted(drop | rows.keys())
        if len(changed) > _FEW_CHANGES:
            self._rebuild(rows, changed)
            return
        # In place, from the last file to the first (the positions still to be patched stay
        # where they were), a slice assignment per file: building the columns anew copied
        # the whole index twice per check. Each assignment moves the columns' tail, so
        # many changes are built anew instead.
        starts = self.starts()
        for rel in reversed(changed):
            at = bisect_left(self.paths, rel)
            present = at < len(self.paths) and self.paths[at] == rel
            files = slice(at, at + 1 if present else at)
            definitions = slice(starts[at], starts[at + 1] if present else starts[at])
            key, sites = rows.get(rel, ("", []))
            kept = rel in rows
            self.paths[files] = [rel] if kept else []
            self.keys[files] = [key] if kept else []
            self.counts[files] = [len(sites)] if kept else []
            self.qnames[definitions] = [site[0] for site in sites]
            self.kinds[definitions] = [site[1] for site in sites]
            self.lengths[definitions] = [site[2] for site in sites]
            self.errors[definitions] = [site[3] for site in sites]
            self.bodies[definitions] = [site[4] for site in sites]
            self.offsets[definitions] = [site[5] for site in sites]

    def _rebuild(self, rows: Rows, changed: list[str]) -> None:
        """`patch` as new columns: the unchanged files between the changed ones copied as
        slices (in C), so many changes cost one pass."""
        fresh = _Table()
        starts = self.starts()
        copied = 0  # the files of this table before this one are in `fresh`
        for rel in changed:
            at = bisect_left(self.paths, rel)
            fresh._copy(self, copied, at, starts)
            copied = at + 1 if at < len(self.paths) and self.paths[at] == rel else at
            if rel in rows:
                fresh.add(rel, *rows[rel])
        fresh._copy(self, copied, len(self.paths), starts)
        self.paths, self.keys, self.counts = fresh.paths, fresh.keys, fresh.counts
        self.qnames, self.kinds, self.lengths = fresh.qnames, fresh.kinds, fresh.lengths
        self.errors, self.bodies, self.offsets = fresh.errors, fresh.bodies, fresh.offsets

    def _copy(self, other: _Table, first: int, last: int, starts: list[int]) -> None:
        """Files `first` to `last` (excluded) of `other`, appended."""
        if first >= last:
            return
        self.paths += other.paths[first:last]
        self.keys += other.keys[first:last]
        self.counts += other.counts[first:last]
        begin, end = starts[first], starts[last]
        self.qnames += other.qnames[begin:end]
        self.kinds += other.kinds[begin:end]
        self.lengths += other.lengths[begin:end]
        self.errors += other.errors[begin:end]
        self.bodies += other.bodies[begin:end]
        self.offsets += other.offsets[begin:end]

    def dumps(self) -> str | None:
        """The columns as one text: names as runs of items between separators (splitting a
        string is many times faster than decoding JSON), numbers packed as hexadecimal
        machine integers (read back in C: a number per item cost a third of the load);
        None when some name holds a separator, so cannot be kept this way. Last, a
        checksum of the rest: a definition's bytes are read at the offset kept here
        (`DefinitionIndex.source`), so a damaged number must never be read as one."""
        kinds = sorted(set(self.kinds))
        ids = {kind: number for number, kind in enumerate(kinds)}
        names = [self.paths, self.keys, self.qnames, kinds, self.bodies]
        numbers = [
            self.counts,
            [ids[kind] for kind in self.kinds],
            self.lengths,
            list(map(int, self.errors)),
            self.offsets,
        ]
        meta = [[self.tracked, self.generation], self.removed]
        if min(map(min, (column or [0] for column in numbers))) < 0:
            return None
        if any(
            _ITEM in item or _COLUMN in item
            for column in (self.paths, self.qnames, kinds, self.removed)
            for item in column
        ):
            return None
        text = _COLUMN.join(
            [*(_ITEM.join(column) for column in names + meta), *map(_packed, numbers)]
        )
        return f"{text}{_COLUMN}{_checksum(text)}"

    @classmethod
    def loads(cls, text: str) -> _Table:
        text, _, checksum = text.rpartition(_COLUMN)
        if checksum != _checksum(text):
            raise ValueError("the index is damaged")
        columns = text.split(_COLUMN)
        if len(columns) != 12:
            raise ValueError("the index has another number of columns")
        paths, keys, qnames, kinds, bodies, meta, removed = (
            column.split(_ITEM) if column else [] for column in columns[:7]
        )
        counts, ids, lengths, errors, offsets = map(_unpacked, columns[7:])
        table = cls()
        table.tracked, table.generation = meta
        table.removed = removed
        table.paths, table.keys, table.counts = paths, keys, counts
        table.qnames = qnames
        table.kinds = list(map(kinds.__getitem__, ids))
        table.lengths = lengths
        table.errors = list(map(bool, errors))
        table.bodies = bodies
        table.offsets = offsets
        files = {len(table.paths), len(table.keys), len(table.counts)}
        sites = {
            len(table.qnames),
            len(table.kinds),
            len(table.lengths),
            len(table.errors),
            len(table.offsets),
        }
        if len(files) != 1 or sites != {sum(table.counts)} or len(table.bodies) not in sites:
            raise ValueError("the index's columns disagree")
        if not all(map(operator.lt, paths, paths[1:])):
            raise ValueError("the index's files are not in order")  # `patch` relies on it
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
        self.examined = 0  # files whose row was compared with git's view or their stat
        self.read_at_span = 0  # definitions read from their file's bytes, unparsed (`source`)
        self._suffixes: dict[str, bool] = {}  # per file name suffix: whether it is ours
        # The kept base row, and the files changed since it (kept beside it).
        self._base: _Table | None = None
        self._changed: Rows = {}
        self._dropped: set[str] = set()

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
            table.offsets[at],
        )

    def source(self, definition: Definition) -> tuple[str, str] | None:
        """The symbol naming `definition` alone and its source, read from its file's bytes
        at the span the index keeps — no parse — when the index vouches those bytes are the
        ones it describes: the blob it keys the file by, or its stat key unmoved. None when
        it cannot (an unsaved buffer, a key that never vouches, a name the file defines
        twice, the file changed since): then the file is observed as a check would."""
        table = self._table
        if table is None or not self._fresh or definition.rel in self.observer.overlays:
            return None
        file = bisect_left(table.paths, definition.rel)
        if file == len(table.paths) or table.paths[file] != definition.rel:
            return None
        first, last = self._starts[file], self._starts[file + 1]
        at = first + definition.index
        if at >= last or table.qnames[at] != definition.qname or definition.start < 0:
            return None
        if table.qnames[first:last].count(definition.qname) != 1:
            return None  # its own symbol is a member's spelling: the view says which
        data = self._bytes(definition.rel, table.keys[file])
        end = definition.start + definition.length
        if data is None or end > len(data):
            return None
        self.read_at_span += 1
        return definition.qname, definition_text(data, definition.start, end)

    def _bytes(self, rel: str, key: str) -> bytes | None:
        """The file's bytes, if they are the ones its key vouches for."""
        root = self.workspace.root
        try:
            if key[:1] == _BLOB:
                data = read_inside(root, rel, limit=self.observer.max_file_size)
                return data if blob_id(data, key[1:]) == key[1:] else None
            if not key or key != _stat_text(stat_key(stat_inside(root, rel))):
                return None
            return read_inside(root, rel, limit=self.observer.max_file_size)
        except OSError:  # NotInside too: gone, refused or unreadable, the view says why
            return None

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
                # In C (map, compress): once per check over every definition of the tree.
                # `operator.eq` over `repeat` is cheaper than a bound `__eq__`, and a tree
                # where everything parses skips the second pass (at 100,000 definitions
                # the filter cost 9.5 ms, the sort itself 4).
                wanted = map(operator.eq, table.kinds, repeat(kind))
                if any(table.errors):
                    wanted = map(operator.and_, wanted, map(operator.not_, table.errors))
                ours = list(compress(range(len(table.kinds)), wanted))
                ours.sort(key=table.lengths.__getitem__)
                by_length = self._by_length[kind] = (
                    list(map(table.lengths.__getitem__, ours)),
                    ours,
                )
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

    def prepare(self) -> None:
        """Bring the index up to date now (`moor bind`), so the first search after code
        goes finds it built and only looks again at what changed since."""
        self._refresh()

    def _refresh(self) -> _Table:
        if self._fresh and self._table is not None:
            return self._table
        old = self._table if self._table is not None else self._load()
        looked = self._worktree()
        digest = looked.index_digest if looked is not None else ""
        suspects = self._suspects(old, looked)
        if looked is not None and suspects is not None:
            changed, removed, vouched = self._changes(old, looked, suspects)
        else:
            changed, removed, vouched = self._differences(old, looked)
        if changed or removed or old.tracked != digest:
            rows = self._observed(changed, vouched)
            old.patch(rows, removed | set(changed))  # in place: nothing else holds it
            old.tracked = digest
            self._store(old, rows, removed | set(changed))
        self.reindexed += len(changed)
        self._table, self._fresh = old, True
        self._starts = old.starts()
        self._by_length = {}
        return old

    def _suspects(self, old: _Table, looked: Worktree | None) -> set[str] | None:
        """The only files that may have changed since `old`, when git's index has the
        entries it had then: every file `old` keys by a blob still holds it unless
        `diff-files` names it. So: the files git names (modified, untracked), those `old`
        keys by stat, unsaved buffers. None: every file must be compared (no git, another
        index, or so many that one pass over git's listing costs less)."""
        if looked is None or not old.tracked or old.tracked != looked.index_digest:
            return None
        suspects = {*looked.changed_paths, *old.unvouched(), *self.observer.overlays}
        return suspects if len(suspects) <= _FEW_CHANGES else None

    def _changes(
        self, old: _Table, looked: Worktree, suspects: set[str]
    ) -> tuple[list[str], set[str], dict[str, str]]:
        """What changed among the suspects (`_suspects`)."""
        changed: list[str] = []
        removed: set[str] = set()
        vouched: dict[str, str] = {}
        for rel in sorted(suspects):
            if not self._ours(rel):
                continue
            key = old.key_of(rel)
            listed = rel in looked.untracked_paths or looked.entry(rel) is not None
            if not listed or (key is None and not self.workspace.is_code(rel)):
                if key is not None:
                    removed.add(rel)
                continue
            blob = looked.vouched_blob(rel)
            if blob is not None:
                vouched[rel] = blob
            self.examined += 1
            if self._moved(rel, key, blob):
                changed.append(rel)
        return changed, removed, vouched

    def _differences(
        self, old: _Table, looked: Worktree | None
    ) -> tuple[list[str], set[str], dict[str, str]]:
        """What changed since `old`, file by file: each file of the language that counts
        (from git's listing, or the walk without git) against its row."""
        if looked is not None:
            listed = self._listed(looked.paths(), set(old.paths))
            vouched = looked.vouched_blobs()
        else:
            listed = [rel for rel in self.workspace.code_paths if self._ours(rel)]
            vouched = {}
        known = dict(zip(old.paths, old.keys, strict=True))
        self.examined += len(listed)
        changed = [rel for rel in listed if self._moved(rel, known.get(rel), vouched.get(rel))]
        removed = set(known).difference(listed) if len(listed) != len(known) or changed else set()
        return changed, removed, {rel: vouched[rel] for rel in changed if rel in vouched}

    def _moved(self, rel: str, key: str | None, blob: str | None) -> bool:
        """Whether the file's row may not be of its bytes: no row, an unsaved buffer, a
        key that never vouches, or another blob or stat than the row's."""
        if rel in self.observer.overlays or not key:
            return True
        if blob is not None:
            return key != _BLOB + blob
        try:
            info = os.stat(os.path.join(self.workspace.root, rel))
        except OSError:
            return True
        return key != _stat_text(stat_key(info))

    def _ours(self, rel: str) -> bool:
        suffix = rel[rel.rfind(".") :] if "." in rel else ""
        ours = self._suffixes.get(suffix)
        if ours is None:
            ours = self._suffixes[suffix] = language_for_path(rel) == self.language
        return ours

    def _listed(self, paths: list[str], known: set[str]) -> list[str]:
        """The files of this language that count, in order, from git's listing: a path
        the index holds was decided under the same configuration (its derivation), so
        only a path new to it is asked (`Workspace.is_code`)."""
        return sorted(
            rel
            for rel in paths
            if self._ours(rel) and (rel in known or self.workspace.is_code(rel))
        )

    def _observed(self, changed: list[str], vouched: dict[str, str]) -> Rows:
        """The rows of files observed again (those that cannot be observed have none)."""
        self.observer.preload(changed)
        racy_after = time.time_ns() - _RACY_WINDOW_NS
        unknown = [rel for rel in changed if not self.observer.knows(rel)]
        rows = _in_parallel(self.workspace.root, self.observer.max_file_size, unknown, vouched)
        for rel in changed:
            if rel in rows:
                continue
            view = self.observer.view(rel)
            if isinstance(view, FileView):
                key = _file_key(self.workspace.root, view, vouched.get(rel), racy_after)
                rows[rel] = (key, _sites(view))
                view.release_tree()  # sites and facts stay; a tree per file would not fit
        return rows

    def _derivation(self) -> str:
        # Which files count is decided once per path under one configuration (`_listed`).
        setting = digest_bytes(repr(self.workspace.config).encode("utf-8"))[:16]
        return f"{cache_derivation()} index/{_VERSION} {setting}"

    def _load(self) -> _Table:
        """The kept index: its base row with the row of files changed since applied (the
        changes apply only to the base they were made on). An unreadable row is rebuilt,
        never trusted; a change row that does not apply is only work lost, since every
        file's row carries what vouches for it."""
        base = self._read(_PREFIX)
        if base is None:
            return _Table()
        self._base = base
        changes = self._read(_CHANGES)
        if changes is None or changes.generation != base.generation or not base.generation:
            return base
        rows = changes.rows()
        self._changed, self._dropped = rows, set(changes.removed)
        base.patch(rows, self._dropped | rows.keys())
        base.tracked = changes.tracked
        return base

    def _read(self, prefix: str) -> _Table | None:
        journal = self.observer.journal
        row = journal.cached_file(prefix + self.language) if journal is not None else None
        if row is None or row.derivation != self._derivation():
            return None
        try:
            return _Table.loads(row.payload)
        except (ValueError, LookupError):
            return None

    def _store(self, table: _Table, rows: Rows, drop: set[str]) -> None:
        """Keep the index: as a row of the files changed since the base row while they
        are few (writing 50,000 files' rows for one edit cost more than the check), else
        as a new base row."""
        journal = self.observer.journal
        if journal is None:
            return
        for rel in drop:
            self._changed.pop(rel, None)
        self._changed.update(rows)
        self._dropped |= drop - rows.keys()
        derivation = self._derivation()
        base = self._base
        if base is None or len(self._changed) + len(self._dropped) > max(
            _FEW_CHANGES, len(table.paths) // 8
        ):
            table.generation = os.urandom(8).hex()
            payload = table.dumps()
            if payload is None:
                return  # a name holds a separator: rebuilt each time, never misread
            self._base, self._changed, self._dropped = table, {}, set()
            changes = _Table()
            changes.tracked, changes.generation = table.tracked, table.generation
            journal.store_files(
                [
                    CachedFile(
                        _PREFIX + self.language, len(table.paths), 0, "", derivation, payload
                    ),
                    CachedFile(
                        _CHANGES + self.language, 0, 0, "", derivation, changes.dumps() or ""
                    ),
                ]
            )
            return
        table.generation = base.generation
        changes = _Table()
        for rel in sorted(self._changed):
            changes.add(rel, *self._changed[rel])
        changes.removed = sorted(self._dropped)
        changes.tracked, changes.generation = table.tracked, base.generation
        payload = changes.dumps()
        if payload is not None:
            journal.store_files(
                [
                    CachedFile(
                        _CHANGES + self.language, len(changes.paths), 0, "", derivation, payload
                    )
                ]
            )


class Indexes:
    """One `DefinitionIndex` per language, made when first needed, and git's view of the
    worktree they were brought up to date with; all stale at once."""

    def __init__(self, workspace: Workspace, observer: FileObserver) -> None:
        self.workspace = workspace
        self.observer = observer
        self._indexes: dict[str, DefinitionIndex] = {}
        self._looked: tuple[Worktree | None] | None = None
        # What relocation read of each definition it compared (`relocate.Compared`), for
        # the other gone anchors of this change set.
        self.compared: dict[tuple[str, int, str], object] = {}

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
        self.compared = {}
        for index in self._indexes.values():
            index.stale()

    def prepare(self, languages: set[str]) -> None:
        """Build or bring up to date the index of each language (`moor bind`)."""
        for language in sorted(languages):
            self.of(language).prepare()


def bound_languages(lock: Lock) -> set[str]:
    """The language of each symbol moor.lock binds: the indexes its searches would ask."""
    found: set[str] = set()
    for memory in lock.memories.values():
        for canonical in memory.anchors:
            path, hash_, _symbol = canonical.partition("#")
            if hash_ and not canonical.startswith(ANCHOR_PREFIX):
                language = language_for_path(path)
                if language is not None:
                    found.add(language)
    return found


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
                [(str(q), str(k), int(n), bool(e), str(b), int(a)) for q, k, n, e, b, a in sites],
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


def _sites(view: FileView) -> list[Site]:
    sites: list[Site] = []
    for index, site in enumerate(view.sites()):
        body = ""
        if not site.has_error:
            body = view.facts_at(index).axes.get("body", "")[:_BODY_PREFIX]
        length = site.end_byte - site.start_byte
        sites.append((site.qname, site.kind, length, site.has_error, body, site.start_byte))
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


def _packed(numbers: list[int]) -> str:
    """Numbers from 0 as little-endian machine integers of the least width that holds them
    (a typecode, then hexadecimal)."""
    top = max(numbers, default=0)
    code = next(code for code in "BHIQ" if top < 256 ** array(code).itemsize)
    packed = array(code, numbers)
    if sys.byteorder == "big":
        packed.byteswap()
    return code + packed.tobytes().hex()


def _unpacked(text: str) -> list[int]:
    """What `_packed` wrote (ValueError when it is not that)."""
    if text[:1] not in ("B", "H", "I", "Q"):
        raise ValueError("the index holds no numbers where it should")
    numbers = array(text[0])
    numbers.frombytes(bytes.fromhex(text[1:]))
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers.tolist()


def _checksum(text: str) -> str:
    return format(zlib.crc32(text.encode("utf-8")), "08x")


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
