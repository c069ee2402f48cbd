"""Setting and lifting the latches (docs/decisions.md): supersede, forget, restore.

What a latch is, and when one is in force, is `latch.py`; these are the actions that
record its events, each one unit under the write lock (as `memory_writes.py`'s), each
needing a reason, each returning a structured `Written`.
"""

from __future__ import annotations

from dataclasses import replace

from moor_extractors.memory import parse_memory, value_key
from moor_store.inside import exists_inside, read_inside
from moor_store.intent import Change
from moor_store.journal import NewEntry
from moor_store.lockfile import LockedAnchor, LockedMemory, Restoration, Tombstone, format_lock

from moor_engine.grounding.memories import load_memories
from moor_engine.memory.latch import (
    LATCH_ANCHOR,
    Event,
    Latches,
    declared,
    forget_entry,
    read_latches,
    restore_entry,
    retire,
    stamp,
    value_at,
)
from moor_engine.memory.memory_writes import after_write, known_here, memory_arg, relative_arg
from moor_engine.session import Session
from moor_engine.usage import UsageError
from moor_engine.written import Refusal, Written


def _described(session: Session, written: Written) -> Written:
    """The memory's content hash, and the live memories already bound to its code, as
    every write returns them (when its file is there)."""
    if not written.ok or written.path is None:
        return written
    loaded = load_memories(session.workspace, [written.path], None)[written.path]
    if loaded.memory is not None:
        written.content_hash = loaded.memory.content_hash
        anchors = {i.ref.canonical() for i in loaded.entries if i.ref is not None}
        written.known_here = known_here(session, written.path, anchors)
    return written


def _why(why: str, command: str) -> str:
    if not why.strip():
        raise UsageError(f'{command} needs a reason: --why "..."')
    return why.strip()


def supersede(session: Session, old: str, by: str, why: str) -> Written:
    """Retire `old`: `by` says what it said, better. A latch (`latch.py`)."""
    why = _why(why, "supersede")
    with session.writing("moor supersede"):
        return after_write(session, _described(session, _supersede(session, old, by, why)))


def _supersede(session: Session, old: str, by: str, why: str) -> Written:
    written = Written("supersede")
    old_rel = memory_arg(session, old, "supersede", written)
    by_rel = memory_arg(session, by, "--by", written)
    if old_rel is None or by_rel is None:
        return written
    written.path = old_rel
    latches = read_latches(session.lock, session.journal)
    if old_rel == by_rel:
        written.refused.append(Refusal("self", f"{old_rel} cannot supersede itself", path=old_rel))
    elif old_rel in latches.retired:
        held = latches.retired[old_rel]
        written.refused.append(
            Refusal(
                "already_retired",
                f"{old_rel} is already retired: {held.describe()}",
                path=old_rel,
            )
        )
    elif by_rel in latches.retired:
        written.refused.append(
            Refusal(
                "retired",
                f"--by {by_rel}: it is retired itself ({latches.retired[by_rel].describe()})",
                path=by_rel,
            )
        )
    if written.refused:
        return written
    value = value_at(session.workspace.root, old_rel)
    lock, entry, _event = retire(session.lock, latches, old_rel, by_rel, why, value)
    change = Change("moor supersede")
    change.write("moor.lock", session.lock_bytes, format_lock(lock).encode("utf-8"))
    change.entries = [entry]
    session.commit(change)
    session.lock = lock
    written.done.append(f"{old_rel}: retired, superseded by {by_rel}: {why}")
    return written


def forget(session: Session, path: str, why: str) -> Written:
    """Remove a memory file and tombstone what it said: the same text, however spelt, is
    refused from then on (and flagged when written by hand)."""
    why = _why(why, "forget")
    with session.writing("moor forget"):
        return after_write(session, _forget(session, path, why))


def _forget(session: Session, path: str, why: str) -> Written:
    written = Written("forget")
    rel = memory_arg(session, path, "forget", written)
    if rel is None:
        return written
    written.path = rel
    original = read_inside(
        session.workspace.root, rel, limit=session.workspace.config.max_file_size
    )
    parsed = parse_memory(rel, original)
    try:
        text = original.decode("utf-8")
    except UnicodeDecodeError:
        text = original.decode("utf-8", "replace")
    value = parsed.memory.value if parsed.memory is not None else value_key(text)
    if not value:
        written.refused.append(
            Refusal(
                "nothing_to_forget",
                f"{rel} says nothing to tombstone; delete the file",
                path=rel,
            )
        )
        return written
    latches = read_latches(session.lock, session.journal)
    previous = latches.restored.get(value)
    at = stamp(previous.at if previous else None)
    old = session.lock.memories.get(rel)
    lock = session.lock.without_memory(rel).with_tombstone(Tombstone(value, rel, why, at))
    entries = [
        forget_entry(
            rel,
            value,
            why,
            at,
            {"text": text, "locked": _locked_json(old) if old is not None else None},
        )
    ]
    if old is not None:
        entries += [
            NewEntry("revise", ref, memory=rel, code="unbind", detail="memory forgotten")
            for ref in old.anchors
        ]
    change = Change("moor forget")
    change.remove(rel, original)
    change.write("moor.lock", session.lock_bytes, format_lock(lock).encode("utf-8"))
    change.entries = entries
    session.commit(change)
    session.lock = lock
    written.done.append(f"{rel}: forgotten ({why}); its text is refused from now on")
    same = _saying(session, value, rel)
    written.done.extend(
        f"{other}: says the same and is flagged until it is deleted or restored" for other in same
    )
    return written


def _saying(session: Session, value: str, but: str) -> list[str]:
    loaded = load_memories(session.workspace, session.workspace.memory_paths(), session.journal)
    return sorted(
        p
        for p, m in loaded.items()
        if p != but and m.memory is not None and m.memory.value == value
    )


def restore(session: Session, path: str, why: str) -> Written:
    """The only way back from a latch: un-retire a memory, or lift the tombstone of one that
    was forgotten (and write its file again from this clone's journal, when it has it)."""
    why = _why(why, "restore")
    with session.writing("moor restore"):
        return after_write(session, _described(session, _restore(session, path, why)))


def _restore(session: Session, path: str, why: str) -> Written:
    written = Written("restore")
    rel = relative_arg(session, path, "restore", written)
    if rel is None:
        return written
    written.path = rel
    latches = read_latches(session.lock, session.journal)
    if rel in latches.retired or _declarations(session).get(rel) is not None:
        return _unretire(session, rel, why, latches, written)
    forgotten = sorted(
        (e for e in latches.tombstones.values() if e.path == rel), key=lambda e: e.at
    )
    if forgotten:
        return _unforget(session, rel, why, forgotten[-1], written)
    written.refused.append(
        Refusal(
            "not_latched",
            f"{rel} is neither retired nor forgotten: nothing to restore",
            path=rel,
        )
    )
    return written


def _declarations(session: Session) -> dict[str, Event]:
    loaded = load_memories(session.workspace, session.workspace.memory_paths(), session.journal)
    return declared({p: m.memory.supersedes for p, m in loaded.items() if m.memory is not None})


def _unretire(session: Session, rel: str, why: str, latches: Latches, written: Written) -> Written:
    declaring = _declarations(session).get(rel)
    if declaring is not None:
        written.refused.append(
            Refusal(
                "still_declared",
                f"{declaring.by} still says `supersedes: {rel}`, which would retire it again: "
                f"remove that line from {declaring.by} (and reaffirm it), then restore",
                path=declaring.by,
            )
        )
        return written
    held = latches.retired[rel]
    at = stamp(held.at)
    lock = session.lock
    lock = replace(
        lock,
        retired={k: v for k, v in lock.retired.items() if k != rel},
        restored={**lock.restored, rel: Restoration(rel, rel, why, at)},
    )
    change = Change("moor restore")
    change.write("moor.lock", session.lock_bytes, format_lock(lock).encode("utf-8"))
    change.entries = [restore_entry(rel, rel, why, at, f"un-retired (was {held.describe()})")]
    session.commit(change)
    session.lock = lock
    written.done.append(f"{rel}: restored: no longer retired ({why})")
    return written


def _unforget(session: Session, rel: str, why: str, tombstone: Event, written: Written) -> Written:
    key = tombstone.key
    at = stamp(tombstone.at)
    lock = session.lock
    lock = replace(
        lock,
        tombstones=tuple(t for t in lock.tombstones if t.content != key),
        restored={**lock.restored, key: Restoration(key, rel, why, at)},
    )
    change = Change("moor restore")
    copy = _forgotten_copy(session, key)
    if copy is not None and not exists_inside(session.workspace.root, rel):
        text, locked = copy
        change.create(rel, text.encode("utf-8"))
        if locked is not None:
            lock = lock.with_memory(locked)
        written.done.append(f"{rel}: written again from this clone's journal")
    elif copy is None and not exists_inside(session.workspace.root, rel):
        written.done.append(
            f"{rel}: this clone's journal holds no copy of its text; write it again "
            "(`git log --diff-filter=D -- " + rel + "` finds it)"
        )
    change.write("moor.lock", session.lock_bytes, format_lock(lock).encode("utf-8"))
    change.entries = [restore_entry(key, rel, why, at, "tombstone lifted")]
    try:
        session.commit(change)
    except FileExistsError:
        written.refused.append(
            Refusal("exists", f"{rel} was created meanwhile; nothing was written", path=rel)
        )
        return written
    session.lock = lock
    written.done.insert(0, f"{rel}: restored: its text is no longer forgotten ({why})")
    return written


def _locked_json(memory: LockedMemory) -> dict[str, object]:
    return {
        "content": memory.content,
        "anchors": {
            ref: {
                "address": a.address,
                "derivation": a.derivation,
                "kind": a.kind,
                "axes": dict(a.axes),
            }
            for ref, a in memory.anchors.items()
        },
    }


def _forgotten_copy(session: Session, key: str) -> tuple[str, LockedMemory | None] | None:
    """The text (and bound state) of the latest memory forgotten with value `key`, as this
    clone's journal kept it."""
    if session.journal is None:
        return None
    for entry in reversed(session.journal.entries(anchor=LATCH_ANCHOR)):
        data = entry.data if isinstance(entry.data, dict) else {}
        if (
            entry.code != "forget"
            or data.get("value") != key
            or not isinstance(data.get("text"), str)
        ):
            continue
        locked = None
        raw = data.get("locked")
        if isinstance(raw, dict) and entry.memory:
            try:
                anchors = {
                    str(ref): LockedAnchor(
                        str(ref),
                        str(a["address"]),
                        str(a["derivation"]),
                        str(a["kind"]),
                        {str(k): str(v) for k, v in dict(a["axes"]).items()},
                    )
                    for ref, a in dict(raw["anchors"]).items()
                }
                locked = LockedMemory(entry.memory, str(raw["content"]), anchors)
            except (KeyError, TypeError, ValueError):
                locked = None
        return str(data["text"]), locked
    return None
