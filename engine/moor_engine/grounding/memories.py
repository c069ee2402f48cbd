"""Loading memory files and resolving their references, before anything is observed.

Parsed memories are cached in the journal database by their stat, like code files: a
warm check of 10,000 memories must not re-run YAML on files nobody touched.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from moor_extractors import digest as digest_module
from moor_extractors import memory as memory_module
from moor_extractors import model as model_module
from moor_extractors import reference as reference_module
from moor_extractors.digest import digest_bytes
from moor_extractors.memory import (
    AboutEntry,
    Memory,
    ParsedMemory,
    Problem,
    hash_memory_text_without,
    parse_memory,
)
from moor_extractors.model import Failure
from moor_extractors.reference import Reference, parse_reference, resolve_path
from moor_store.inside import NotInside, read_inside, stat_many_inside
from moor_store.journal import CachedFile, Journal
from moor_store.lockfile import Lock, LockedAnchor
from moor_store.own_files import read_own_sources

from moor_engine.memory import namespaces
from moor_engine.workspace.filestat import stat_key, stored
from moor_engine.workspace.workspace import Workspace

_CACHE_PREFIX = "memory:"


@dataclass
class ResolvedEntry:
    """One `about:` entry of a memory, with its reference resolved (or why not)."""

    entry: AboutEntry
    ref: Reference | None  # None when the reference is refused
    problem: Failure | None = None


@dataclass
class LoadedMemory:
    """One memory file as loaded: its parse, its problems, its resolved entries."""

    path: str
    memory: Memory | None
    problems: tuple[Problem, ...] = ()
    entries: list[ResolvedEntry] = field(default_factory=list)
    read_error: str | None = None
    read_code: str | None = None  # why it was not read (moor_store.inside codes)

    @property
    def valid(self) -> bool:
        return self.memory is not None


def lock_content(
    text: str | None,
    memory: Memory,
    entries: Iterable[tuple[AboutEntry, str | None]],
    bound: Iterable[str],
) -> str:
    """The content hash moor.lock records for a memory bound to `bound`: its text without
    the `about:` entries that are not bound. A reference that could not be bound, once
    removed from the file, then leaves the memory as it was reaffirmed — and one added
    but not bound yet is `unbound`, not a rewrite. (`text`: the file's text, read only when
    some entry is unbound; None when it could not be read.)"""
    bound = set(bound)
    unbound = [entry for entry, canonical in entries if canonical is None or canonical not in bound]
    if not unbound or text is None:
        return memory.content_hash
    lines = {n for e in unbound for n in range(e.line, max(e.end_line, e.line) + 1)}
    return hash_memory_text_without(text, lines)


def loaded_lock_content(workspace: Workspace, loaded: LoadedMemory, bound: Iterable[str]) -> str:
    """`lock_content` of a loaded memory, its file read only when it has unbound entries."""
    assert loaded.memory is not None
    bound = set(bound)
    entries = [
        (item.entry, item.ref.canonical() if item.ref is not None else None)
        for item in loaded.entries
    ]
    text: str | None = None
    if any(canonical is None or canonical not in bound for _e, canonical in entries):
        try:
            data = read_inside(workspace.root, loaded.path, limit=workspace.config.max_file_size)
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
    return lock_content(text, loaded.memory, entries, bound)


# The last lock made canonical and what it became (locks are immutable, reused by identity).
_last_canonical: tuple[Lock, Lock] | None = None


def canonical_lock(lock: Lock) -> Lock:
    """`lock` keyed as `parse_reference` spells references now. A lock written when a
    pasted spelling was its own key (`x.rs#Client::send`) keeps its bound state under the
    canonical key (`x.rs#Client.send`): never re-bound, never re-baselined. Two old keys of
    one symbol keep the one already canonical, else the first in sorted order."""
    global _last_canonical
    last = _last_canonical
    if last is not None and last[0] is lock:
        return last[1]  # a lock parsed once is asked again by each session (`_parse_lock`)
    found = _canonical_lock(lock)
    _last_canonical = (lock, found)
    return found


def _canonical_lock(lock: Lock) -> Lock:
    if not any(_maybe_pasted(key) for memory in lock.memories.values() for key in memory.anchors):
        return lock
    memories = dict(lock.memories)
    for path, memory in lock.memories.items():
        if not any(_maybe_pasted(key) for key in memory.anchors):
            continue
        anchors: dict[str, LockedAnchor] = {}
        for key in sorted(memory.anchors, key=lambda k: (_canonical_key(k) != k, k)):
            anchors.setdefault(_canonical_key(key), memory.anchors[key])
        memories[path] = dataclasses.replace(memory, anchors=anchors)
    return dataclasses.replace(lock, memories=memories)


def _maybe_pasted(key: str) -> bool:
    """Whether a lock key could be spelt otherwise now (a cheap look: most keys are not)."""
    _path, hash_sign, symbol = key.partition("#")
    return bool(hash_sign) and ("::" in symbol or "/" in symbol or symbol.startswith("("))


def _canonical_key(key: str) -> str:
    ref = parse_reference(key)
    return key if isinstance(ref, Failure) else ref.canonical()


@cache
def parser_derivation() -> str:
    """Names the parser's own source: any change to it invalidates cached memories, so no
    version number has to be remembered by hand."""
    memory_file = memory_module.__file__
    sources = (
        memory_file,
        # The YAML half of the parser, named without importing it (nor YAML).
        memory_file and str(Path(memory_file).with_name("frontmatter.py")),
        reference_module.__file__,
        model_module.__file__,  # AXES and DEFAULT_WATCH shape what a memory means
        digest_module.__file__,  # content hashes
    )
    return "memory/" + digest_bytes(read_own_sources(sources))


def load_memory(workspace: Workspace, path: str) -> LoadedMemory:
    return load_memories(workspace, [path], None)[path]


def load_memories(
    workspace: Workspace, paths: Iterable[str], journal: Journal | None
) -> dict[str, LoadedMemory]:
    paths = list(paths)
    derivation = parser_derivation()
    cached: dict[str, CachedFile] = {}
    if journal is not None and paths:
        cached = journal.cached_files(_CACHE_PREFIX + p for p in paths)
    loaded: dict[str, LoadedMemory] = {}
    fresh: list[CachedFile] = []
    resolved: dict[str, Path | Failure] = {}  # many memories point into the same file
    infos = stat_many_inside(workspace.root, paths)
    for path in paths:
        try:
            info = infos[path]
            if isinstance(info, OSError):
                raise info
            row = cached.get(_CACHE_PREFIX + path)
            parsed = None
            if (
                row is not None
                and row.derivation == derivation
                and (row.size, row.mtime_ns, row.ctime_ns, row.inode, row.device) == stat_key(info)
            ):
                parsed = _from_payload(row.payload)
            if parsed is None:
                data = read_inside(workspace.root, path, limit=workspace.config.max_file_size)
                parsed = parse_memory(path, data)
                key = stored(stat_key(info), time.time_ns())
                fresh.append(
                    CachedFile(
                        _CACHE_PREFIX + path,
                        key.size,
                        key.mtime_ns,
                        digest_bytes(data),
                        derivation,
                        _to_payload(parsed),
                        key.ctime_ns,
                        key.inode,
                        key.device,
                    )
                )
        except NotInside as error:
            # Memory files are contained like code: never read through a link leading
            # outside, never a FIFO or device, never over the size cap.
            loaded[path] = LoadedMemory(
                path, None, read_error=f"{path} was not read: {error}", read_code=error.code
            )
            continue
        except OSError as error:
            reason = error.strerror or type(error).__name__
            loaded[path] = LoadedMemory(path, None, read_error=f"cannot read {path}: {reason}")
            continue
        if parsed.memory is not None:
            # Fail closed: a memory in no valid namespace is invalid, so nothing shows it.
            problem = namespaces.memory_problem(parsed.memory)
            if problem is not None:
                parsed = ParsedMemory(None, (problem,))
        memory = LoadedMemory(path, parsed.memory, parsed.problems)
        if parsed.memory is not None:
            memory.entries = [
                resolve_entry(workspace.root, e, resolved) for e in parsed.memory.about
            ]
        loaded[path] = memory
    if journal is not None and fresh:
        journal.store_files(fresh)
    return loaded


def resolve_entry(
    root: Path, entry: AboutEntry, seen: dict[str, Path | Failure] | None = None
) -> ResolvedEntry:
    parsed = parse_reference(entry.raw)
    if isinstance(parsed, Failure):
        return ResolvedEntry(entry, None, parsed)
    if parsed.path is None:
        return ResolvedEntry(entry, parsed)
    seen = {} if seen is None else seen
    if parsed.path not in seen:
        seen[parsed.path] = resolve_path(root, parsed.path)
    resolved = seen[parsed.path]
    if isinstance(resolved, Failure):
        return ResolvedEntry(entry, None, resolved)
    return ResolvedEntry(entry, parsed)


def _to_payload(parsed: ParsedMemory) -> str:
    """A parsed memory as compact JSON: lists in `Memory`'s field order, not objects, as a
    warm check of 10,000 memories decodes 10,000 of them (`_from_payload`)."""
    problems = [[getattr(p, name) for name in _PROBLEM_FIELDS] for p in parsed.problems]
    return json.dumps(
        [_PAYLOAD_SHAPE, problems, None if parsed.memory is None else _memory_row(parsed.memory)],
        separators=(",", ":"),
    )


_MEMORY_FIELDS = tuple(f.name for f in dataclasses.fields(Memory))
_ENTRY_FIELDS = tuple(f.name for f in dataclasses.fields(AboutEntry))
_PROBLEM_FIELDS = tuple(f.name for f in dataclasses.fields(Problem))
# The fields of each row, in order: a payload written for other fields is not read (the
# memory is parsed again), so a new field of `Memory` needs no version number.
_PAYLOAD_SHAPE = "/".join("|".join(f) for f in (_MEMORY_FIELDS, _ENTRY_FIELDS, _PROBLEM_FIELDS))
_ENTRY_WATCH = _ENTRY_FIELDS.index("watch")
_ABOUT, _WATCH, _SUPERSEDES, _LINKS, _QUESTIONS, _LINK_PLACES = (
    _MEMORY_FIELDS.index(name)
    for name in ("about", "watch", "supersedes", "links", "questions", "link_places")
)


def _memory_row(memory: Memory) -> list[object]:
    # By hand rather than dataclasses.astuple: astuple deep-copies, and is slow.
    row: list[object] = [getattr(memory, name) for name in _MEMORY_FIELDS]
    row[_ABOUT] = [[getattr(e, name) for name in _ENTRY_FIELDS] for e in memory.about]
    row[_LINKS] = {key: list(value) for key, value in memory.links.items()}
    return row


def _from_payload(text: str) -> ParsedMemory | None:
    try:
        shape, raw_problems, row = json.loads(text)
        if shape != _PAYLOAD_SHAPE:
            return None
        problems = tuple(Problem(*p) for p in raw_problems)
        if row is None:
            return ParsedMemory(None, problems)
        if len(row) != len(_MEMORY_FIELDS):
            return None
        for entry in row[_ABOUT]:
            if entry[_ENTRY_WATCH] is not None:
                entry[_ENTRY_WATCH] = tuple(entry[_ENTRY_WATCH])
        row[_ABOUT] = tuple(AboutEntry(*entry) for entry in row[_ABOUT])
        if row[_WATCH] is not None:
            row[_WATCH] = tuple(row[_WATCH])
        row[_SUPERSEDES] = tuple(row[_SUPERSEDES])
        row[_LINKS] = {k: tuple(v) for k, v in row[_LINKS].items()}
        row[_QUESTIONS] = tuple(row[_QUESTIONS])
        row[_LINK_PLACES] = tuple(tuple(place) for place in row[_LINK_PLACES])
        return ParsedMemory(Memory(*row), problems)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
