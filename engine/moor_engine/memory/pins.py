"""`moor pin` / `unpin` and `memory_pin` / `memory_unpin`: set or clear a memory's
`pinned: true` (always in `moor context`, ranked up in recall) without it becoming
`rewritten`.

A pin is recorded where `pinned` has always been read from — the memory's own frontmatter
— so every reader (recall, `moor context`, `moor rules`, a fresh clone) keeps reading one
place, and the pin travels with the memory's file and its history. What made a hand-edited
pin `rewritten` is moor.lock's content hash, which stands for "the text as reviewed". A pin
says nothing about the code, so when the memory was, before the pin, exactly the text
moor.lock records, the lock records the pinned text in the same unit (as `moor edit` does
for an edit made through moor); a memory that was already `rewritten` stays so — a pin
never vouches for text nobody reviewed. Journalled with its reason, through the one write
path (`Session.commit`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from moor_extractors.memory import parse_memory
from moor_store.inside import read_inside
from moor_store.intent import Change
from moor_store.journal import NewEntry
from moor_store.lockfile import format_lock

from moor_engine.grounding.memories import (
    LoadedMemory,
    load_memories,
    loaded_lock_content,
    lock_content,
)
from moor_engine.memory.memory_writes import after_write, memory_arg
from moor_engine.session import Session
from moor_engine.usage import UsageError
from moor_engine.written import Refusal, Written

_PINNED = re.compile(r"^pinned[ \t]*:.*$")
_FENCE = "---"


def pinned_text(text: str, pinned: bool) -> str | None:
    """`text` with its frontmatter's `pinned:` set (`pinned: true`) or removed; None when it
    has no frontmatter. Every other byte stays as it was."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != _FENCE:
        return None
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == _FENCE), None)
    if close is None:
        return None
    ending = "\r\n" if lines[0].endswith("\r\n") else "\n"
    head = [line for line in lines[1:close] if not _PINNED.match(line.rstrip("\r\n"))]
    if pinned:
        head.append(f"pinned: true{ending}")
    return "".join([lines[0], *head, *lines[close:]])


def pin(session: Session, path: str, pinned: bool, why: str) -> Written:
    """Pin (or unpin) the memory at `path`, with a reason; as one unit."""
    if not why.strip():
        verb = "pin" if pinned else "unpin"
        raise UsageError(f'{verb} needs a reason: --why "..."', code="no_reason")
    action = "pin" if pinned else "unpin"
    written = Written(action)
    rel = memory_arg(session, path, action, written)
    if rel is None:
        return written
    with session.writing(f"moor {action}"):
        return after_write(session, _pin(session, rel, pinned, why, written))


def _pin(session: Session, path: str, pinned: bool, why: str, written: Written) -> Written:
    written.path = path
    root = session.workspace.root
    original = read_inside(root, path, limit=session.workspace.config.max_file_size)
    loaded = load_memories(session.workspace, [path], None)[path]
    if loaded.memory is None:
        problems = "; ".join(p.message for p in loaded.problems)
        written.refused.append(
            Refusal("invalid", f"{path} is invalid: {problems}; fix it by hand", path=path)
        )
        return written
    written.content_hash = loaded.memory.content_hash
    if loaded.memory.pinned == pinned:
        written.done.append(f"{path}: already {'pinned' if pinned else 'not pinned'}")
        return written
    text = original.decode("utf-8")
    new_text = pinned_text(text, pinned)
    memory = None if new_text is None else parse_memory(path, new_text.encode("utf-8")).memory
    if new_text is None or memory is None or memory.pinned != pinned:
        written.refused.append(
            Refusal(
                "invalid", f"{path}: its frontmatter cannot be pinned; edit it by hand", path=path
            )
        )
        return written
    lock = session.lock
    old = lock.memories.get(path)
    if old is not None and old.content == loaded_lock_content(
        session.workspace, loaded, old.anchors
    ):
        reparsed = LoadedMemory(path, memory, entries=loaded.entries)
        entries_of = [
            (item.entry, item.ref.canonical() if item.ref is not None else None)
            for item in reparsed.entries
        ]
        lock = lock.with_memory(
            replace(old, content=lock_content(new_text, memory, entries_of, old.anchors))
        )
    change = Change(f"moor {'pin' if pinned else 'unpin'}")
    change.write(path, original, new_text.encode("utf-8"))
    if lock is not session.lock:
        change.write("moor.lock", session.lock_bytes, format_lock(lock).encode("utf-8"))
    change.entries = [
        NewEntry(
            "revise",
            f"memory:{path}",
            memory=path,
            reason=why,
            code="pin" if pinned else "unpin",
            detail="pinned" if pinned else "unpinned",
            data={"before": loaded.memory.content_hash, "after": memory.content_hash},
        )
    ]
    session.commit(change)
    session.lock = lock
    written.content_hash = memory.content_hash
    written.done.append(f"{path}: {'pinned' if pinned else 'unpinned'}")
    return written
