"""What the recall index holds, and keeping it in step with the memory files.

A memory's document: its title, its questions ("When this changes, ask"), its references
and its body, each as code-aware tokens (`recall_tokens`), and the signals ranking reads
(confidence, pinned, created). The index is derived: opened broken, it is deleted and
rebuilt; busy (another process writing it), this run builds a private one in memory; in
both cases the warning says so. Memories are never touched.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from moor_extractors.digest import digest_bytes
from moor_extractors.memory import Memory
from moor_store import recall_index as store
from moor_store import recall_postings as store_postings
from moor_store.inside import NotInside
from moor_store.own_files import read_own_sources
from moor_store.recall_index import (
    Document,
    IndexBroken,
    IndexBusy,
    IndexUnavailable,
    RecallIndex,
    stat_text,
)

from moor_engine.grounding.memories import load_memories
from moor_engine.grounding.trust import MemoryReport
from moor_engine.memory import namespaces, recall_tokens
from moor_engine.memory.recall import WEIGHTS, RecallResult, Verdicts, recall, visible_owners
from moor_engine.session import Session
from moor_engine.workspace.filestat import StatKey, stat_key, stored
from moor_engine.workspace.workspace import STATE_DIR

if TYPE_CHECKING:  # a watch (ctypes, inotify) is made only by a process that keeps the index
    from moor_engine.kept_session import KeptSession
    from moor_engine.memory.memory_watch import MemoryWatch

FIELD_WEIGHTS = tuple(WEIGHTS[name] for name in store.FIELDS)


@cache
def derivation() -> str:
    """Names the code that decides what a document holds: a change to it rebuilds every
    index, so no version number has to be bumped by hand."""
    sources = (__file__, recall_tokens.__file__, store.__file__, store_postings.__file__)
    return "recall/" + digest_bytes(read_own_sources(sources))


def memory_document(memory: Memory, stat: tuple[int, ...] | None = None) -> Document:
    refs = [entry.raw for entry in memory.about]
    texts = (memory.title, "\n".join(memory.questions), "\n".join(refs), memory.body)
    fields = tuple(recall_tokens.document_text(text) for text in texts)
    words = frozenset(word for text in fields for word in text.split())
    meta: dict[str, object] = {
        "title": memory.title,
        "confidence": memory.confidence,
        "pinned": memory.pinned,
        "created": memory.created,
        "refs": refs,
        "questions": list(memory.questions),
        "agent": memory.agent,  # its namespace (`namespaces.visible`)
    }
    return Document(
        memory.path,
        memory.content_hash,
        (fields[0], fields[1], fields[2], fields[3]),
        words,
        meta,
        stat,
        bool(memory.supersedes),
        memory.agent,
    )


@dataclass
class IndexStatus:
    """What bringing the index up to date did (shown by `--explain` and `--json`)."""

    memories: int = 0  # documents in the index now (after a recall: those the reader sees)
    reindexed: int = 0  # memories whose text changed (or new): indexed again
    removed: int = 0  # documents of memories that are gone or no longer parse
    rebuilt: bool = False  # the index was made from nothing
    in_memory: bool = False  # the file could not be used: a private index for this run
    warnings: list[str] = field(default_factory=list)
    # Memories that declare `supersedes:`: checked with the candidates, so the engine's
    # verdict sees every declaration that may retire one of them.
    declaring: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "memories": self.memories,
            "reindexed": self.reindexed,
            "removed": self.removed,
            "rebuilt": self.rebuilt,
            "in_memory": self.in_memory,
        }


def index_path(session: Session) -> Path:
    return session.workspace.root / STATE_DIR / store.INDEX_FILE


def open_index(session: Session, status: IndexStatus, shared: bool = False) -> RecallIndex:
    """The workspace's index file, or (with a warning in `status`) a new one in memory."""
    root = session.workspace.root
    try:
        store.check_contained(root, STATE_DIR)
    except (NotInside, OSError) as error:
        status.warnings.append(
            f"the recall index was not opened ({error}); this run used one built in memory"
        )
        status.in_memory = True
        return RecallIndex(None, derivation(), FIELD_WEIGHTS, any_thread=shared)
    path = index_path(session)
    try:
        index = RecallIndex(path, derivation(), FIELD_WEIGHTS, any_thread=shared)
    except IndexBroken as error:
        store.remove_files(path)
        status.warnings.append(
            f"the recall index {STATE_DIR}/{store.INDEX_FILE} was unusable ({error}) and was "
            "rebuilt from the memories (it holds nothing else)"
        )
        index = RecallIndex(path, derivation(), FIELD_WEIGHTS, any_thread=shared)
    except IndexBusy as error:
        status.warnings.append(_busy_warning(error))
        status.in_memory = True
        return RecallIndex(None, derivation(), FIELD_WEIGHTS, any_thread=shared)
    status.rebuilt = index.rebuilt
    return index


def _busy_warning(error: IndexBusy) -> str:
    if isinstance(error, IndexUnavailable):  # a full or read-only disk: it says which
        return f"{error}; this run used one built in memory"
    return (
        f"the recall index {STATE_DIR}/{store.INDEX_FILE} is busy (another moor is writing "
        "it); this run used one built in memory"
    )


def sync(session: Session, index: RecallIndex, status: IndexStatus) -> None:
    """Re-index the memories whose content hash changed; drop those that went away. A file
    whose stat key is the one it was indexed with is not read (`filestat`: what vouches)."""
    paths = session.workspace.memory_paths()
    indexed = index.indexed()
    listed = set(paths)
    _sync_paths(session, index, status, paths, indexed, [p for p in indexed if p not in listed])
    status.memories = index.size()
    status.declaring = index.declaring()


def sync_changed(
    session: Session, index: RecallIndex, status: IndexStatus, changed: Iterable[str]
) -> None:
    """Bring only `changed` memory paths (a watch's report: new, edited or gone) up to date:
    the index already holds every other memory as it is (`memory_watch`)."""
    workspace = session.workspace
    counted = [
        path
        for path in sorted(changed)
        if workspace.is_memory_path(path) and not workspace.is_ignored(path)
    ]
    rows = index.indexed_rows(counted)
    present = [path for path in counted if os.path.lexists(session.workspace.root / path)]
    gone = [path for path in counted if path not in present and path in rows]
    _sync_paths(session, index, status, present, rows, gone)


def _sync_paths(
    session: Session,
    index: RecallIndex,
    status: IndexStatus,
    paths: Sequence[str],
    indexed: Mapping[str, store.Indexed],
    gone: Sequence[str],
) -> None:
    """Index `paths` as they are now (those whose stat key is the one they were indexed
    with are not read) and drop the documents of `gone`; a path that no longer parses is
    dropped too."""
    root = session.workspace.root
    keys: dict[str, StatKey] = {}
    unchanged: set[str] = set()
    for path in paths:
        try:
            # A plain stat, links followed: it only vouches for bytes that were read through
            # the contained path with exactly this key, and a link re-pointed elsewhere has
            # another file's key. Walking each path contained cost 2/3 of a no-change sync.
            keys[path] = stat_key(os.stat(f"{root}/{path}"))
        except OSError:
            continue  # load_memories says why it cannot be read
        row = indexed.get(path)
        if row is not None and row.stat == stat_text(keys[path]):
            unchanged.add(path)
    to_read = [path for path in paths if path not in unchanged]
    loaded = load_memories(session.workspace, to_read, session.journal) if to_read else {}
    now = time.time_ns()
    documents: list[Document] = []
    restat: dict[str, tuple[int, ...] | None] = {}
    removed = list(gone)
    for path in to_read:
        memory = loaded[path].memory
        row = indexed.get(path)
        if memory is None:
            if row is not None:
                removed.append(path)
            continue
        key = keys.get(path)
        stat = None if key is None else tuple(stored(key, now))
        if row is None or row.content_hash != memory.content_hash:
            documents.append(memory_document(memory, stat))
        elif row.stat != stat_text(stat):
            restat[path] = stat
    if documents or removed:
        index.update(documents, removed)
    if restat:
        index.restat(restat)
    status.reindexed += len(documents)
    status.removed += len(removed)


def ready_index(session: Session, shared: bool = False) -> tuple[RecallIndex, IndexStatus]:
    """An index that holds every memory as it is now, whatever state the file was in
    (`shared`: to be used by more than one thread, one at a time)."""
    status = IndexStatus()
    index = open_index(session, status, shared)
    try:
        sync(session, index, status)
    except IndexBusy as error:
        index.close()
        status.warnings.append(_busy_warning(error))
        status.in_memory = True
        index = RecallIndex(None, derivation(), FIELD_WEIGHTS, any_thread=shared)
        sync(session, index, status)
    except IndexBroken as error:
        index.close()
        index = rebuild(session, status, str(error), shared)
    return index, status


def rebuild(session: Session, status: IndexStatus, why: str, shared: bool = False) -> RecallIndex:
    """Throw the index file away and index every memory again (into memory if need be)."""
    path = index_path(session)
    with contextlib.suppress(OSError):
        store.remove_files(path)
    status.warnings.append(
        f"the recall index {STATE_DIR}/{store.INDEX_FILE} was unusable ({why}) and was "
        "rebuilt from the memories (it holds nothing else)"
    )
    try:
        index = RecallIndex(path, derivation(), FIELD_WEIGHTS, any_thread=shared)
        sync(session, index, status)
    except (IndexBroken, IndexBusy):
        status.in_memory = True
        index = RecallIndex(None, derivation(), FIELD_WEIGHTS, any_thread=shared)
        sync(session, index, status)
    status.rebuilt = True
    return index


def session_verdicts(session: Session, declaring: Sequence[str] = ()) -> Verdicts:
    """Trust states of the candidates from a check of them and of the memories that declare
    `supersedes:` (nothing journalled)."""

    def verdicts(paths: Sequence[str]) -> Mapping[str, MemoryReport]:
        if not paths:
            return {}
        # Evaluated, not checked: nothing journalled, and the parse cache is written once,
        # by `session_recall`, not once per page of candidates.
        evaluation = session.evaluate(list(dict.fromkeys([*paths, *declaring])))
        return {memory.path: memory for memory in evaluation.report.memories}

    return verdicts


class KeptIndex:
    """The recall index of one workspace kept open by a process that answers many recalls
    (the MCP server), with a watch of its memory folders (`memory_watch`): a recall syncs
    only the memories the watch saw change, not a stat of every memory. Everything is
    listed and stat-ed again (`sync`) when the watch cannot say (none, lost, a folder
    changed), when moor.toml's memory roots or ignores changed, and when another process
    wrote the index (it may be another moor's derivation, or have been rebuilt)."""

    def __init__(self, answers: KeptSession | None = None) -> None:
        # The SDK runs each tool call in a worker thread: one recall at a time uses the index.
        self._lock = threading.Lock()
        # Where the candidates' trust states come from, kept while their keys hold (none:
        # each recall checks its candidates).
        self._answers = answers
        self._index: RecallIndex | None = None
        self._watch: MemoryWatch | None = None
        self._config: tuple[object, ...] | None = None
        self._declaring: list[str] = []
        # Every memory's references as the index held them when nothing has changed since
        # (a hook server reads them on every hook): dropped by any sync.
        self._references: dict[str, list[str]] | None = None
        self.full_syncs = 0  # for tests and the benchmark: how often every memory was stat-ed

    def ready(self, session: Session) -> tuple[RecallIndex, IndexStatus]:
        """The index, holding every memory as it is now; kept open for the next call."""
        workspace = session.workspace
        config: tuple[object, ...] = (
            workspace.root,
            workspace.config.memory_roots,
            tuple(workspace.config.ignore),
        )
        index, watch = self._index, self._watch
        if index is not None and watch is not None and config == self._config:
            status = IndexStatus()
            try:
                changed = watch.changes()
                if not changed.everything and not index.written_elsewhere():
                    if changed.paths:
                        self._references = None
                        sync_changed(session, index, status, changed.paths)
                        self._declaring = index.declaring()
                    status.memories = index.size()
                    status.declaring = list(self._declaring)
                    return index, status
            except (IndexBusy, IndexBroken):
                pass  # from nothing, below
        self.close()
        self._references = None
        from moor_engine.memory.memory_watch import MemoryWatch

        # The watch first: a change made while every memory is stat-ed is in its queue.
        watch = MemoryWatch.start(session.workspace)
        index, status = ready_index(session, shared=True)
        self.full_syncs += 1
        if status.in_memory or watch is None:
            if watch is not None:
                watch.close()
            return index, status  # not kept: the next call tries the file (or a watch) again
        self._index, self._watch, self._config = index, watch, config
        self._declaring = list(status.declaring)
        index.written_elsewhere()  # the version this connection's own writes left
        return index, status

    def recall(
        self, session: Session, query: str, *, limit: int = 10, agent: str | None = None
    ) -> tuple[RecallResult, IndexStatus]:
        """`session_recall`, on the kept index."""
        agent = namespaces.reader(agent)
        with self._lock:
            return self._recall(session, query, limit, agent)

    def _recall(
        self, session: Session, query: str, limit: int, agent: str | None
    ) -> tuple[RecallResult, IndexStatus]:
        index, status = self.ready(session)
        answers, declaring = self._answers, status.declaring
        verdicts = (
            session_verdicts(session, declaring)
            if answers is None
            else lambda paths: answers.verdicts(session, paths, declaring)
        )
        try:
            result = recall(index, query, verdicts, limit=limit, agent=agent)
            status.memories = index.documents(visible_owners(index, agent))
        except (IndexBroken, IndexBusy):
            self.close()
            return session_recall(session, query, limit=limit, agent=agent)
        finally:
            if index is not self._index:
                index.close()
        session.observer.flush()
        return result, status

    def references(self, session: Session) -> tuple[dict[str, list[str]], list[str]]:
        """`RecallIndex.references` and the declaring memories, from the kept index (what a
        prompt hook matches against)."""
        with self._lock:
            index, status = self.ready(session)
            try:
                if index is not self._index:
                    return index.references(), status.declaring
                if self._references is None:
                    self._references = index.references()
                return self._references, status.declaring
            except (IndexBroken, IndexBusy):
                self.close()
                raise
            finally:
                if index is not self._index:
                    index.close()

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
        if self._watch is not None:
            self._watch.close()
        self._index = self._watch = self._config = None
        self._references = None


# Set by a process that answers many requests about its workspaces (the hook server).
_kept: dict[Path, KeptIndex] | None = None


def keep_indexes() -> None:
    """This process is long-running: keep each workspace's index open between requests,
    synced by a watch (`kept_index`)."""
    global _kept
    if _kept is None:
        _kept = {}


def kept_index(root: Path) -> KeptIndex | None:
    """The workspace's kept index, if this process keeps them (`keep_indexes`)."""
    if _kept is None:
        return None
    return _kept.setdefault(root, KeptIndex())


def session_recall(
    session: Session, query: str, *, limit: int = 10, agent: str | None = None
) -> tuple[RecallResult, IndexStatus]:
    """`recall` over the workspace's memories as they are now, as reader `agent` sees them
    (shared ones and its own; an invalid name is refused before anything is read)."""
    agent = namespaces.reader(agent)
    index, status = ready_index(session)
    try:
        try:
            result = recall(
                index, query, session_verdicts(session, status.declaring), limit=limit, agent=agent
            )
        except IndexBroken as error:  # broke after it was opened: once more, from nothing
            index.close()
            index = rebuild(session, status, str(error))
            result = recall(
                index, query, session_verdicts(session, status.declaring), limit=limit, agent=agent
            )
        # The reader is told how many memories it may see, not how many the index holds.
        status.memories = index.documents(visible_owners(index, agent))
    finally:
        index.close()
    session.observer.flush()
    return result, status
