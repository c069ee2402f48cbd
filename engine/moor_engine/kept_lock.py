"""moor.lock as the last process parsed it, kept while the file is the one it parsed.

Parsing moor.lock was ~19 ms CPU of a one-shot `moor recall` at 1,000 memories (~12 % of
it; ~5 MB at 10,000 memories). So the first process to parse a lock keeps what it read in
`.moor/kept-lock.json` (JSON, never pickle or marshal: `.moor/` may come from the
repository), and the next one builds the `Lock` from it (~3 ms) when all of these hold:

* the bytes it read now have the SHA-256 the kept one was parsed from (what is trusted is
  always the lock the session read, never what the file says it was);
* moor.lock's stat key (`filestat`: size, mtime, ctime, inode, device) is the one it had
  when it was kept, stored as git stores its index entries: a lock modified within the
  racy window is never kept. A clone or a copy of a repository has other inodes and
  ctimes, so a kept file committed to a repository never vouches for its lock;
* the judge is the same: moor's version and the stat key of `moor_store.lockfile` (the
  reader and the `Lock` it builds).

A file that is not one this code wrote (corrupt, foreign, another format, any value of
the wrong type) is ignored, and the lock is parsed (memory:
a-parsed-lock-is-kept-by-its-stat-key-and-digest).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from moor_store import lockfile
from moor_store.inside import read_inside, stat_inside, write_inside
from moor_store.lockfile import (
    Closure,
    Lock,
    LockedAnchor,
    LockedMemory,
    Restoration,
    Retirement,
    Tombstone,
)

from moor_engine.workspace.distribution import version
from moor_engine.workspace.filestat import RACY_WINDOW_NS, stat_key, stored
from moor_engine.workspace.roots import STATE_DIR

FILE = f"{STATE_DIR}/kept-lock.json"
FORMAT = 1
_LOCK = "moor.lock"
_MAX_BYTES = 512 * 1024 * 1024


def _judge() -> list[object]:
    try:
        reader = list(stat_key(os.stat(lockfile.__file__)))
    except OSError:
        reader = []
    return [version(), reader]


def kept_digest(data: bytes) -> str:
    """The digest a kept lock is known by (hashed once by a caller that needs it too)."""
    return hashlib.sha256(data).hexdigest()


def kept_lock(root: Path, data: bytes, digest: str | None = None) -> Lock | None:
    """The `Lock` of `data` (moor.lock's bytes as just read) from the kept file, or None
    when it must be parsed (none kept, another lock, a key moved, not a file this wrote)."""
    try:
        document = json.loads(read_inside(root, FILE, limit=_MAX_BYTES))
        now = list(stat_key(stat_inside(root, _LOCK)))
    except (OSError, ValueError):  # none, not a regular file, too large, not JSON
        return None
    if (
        not isinstance(document, dict)
        or document.get("format") != FORMAT
        or document.get("key") != now
        or document.get("digest") != (digest or kept_digest(data))
        or document.get("judge") != _judge()
    ):
        return None
    try:
        return _decoded(document)
    except (_Invalid, KeyError, TypeError, ValueError):
        return None


def keep_lock(
    root: Path, data: bytes, lock: Lock, started_ns: int, digest: str | None = None
) -> None:
    """Keep `lock`, parsed from `data` (read at or after `started_ns`), for the next
    process; nothing when moor.lock was modified within the racy window (its key could
    not tell a later write in the same tick) or cannot be stat-ed."""
    with contextlib.suppress(OSError):  # a cache: not kept costs the next process its parse
        now_ns = time.time_ns()
        key = stat_key(stat_inside(root, _LOCK))
        if stored(key, now_ns, RACY_WINDOW_NS + max(0, now_ns - started_ns)) != key:
            return
        document = {
            "format": FORMAT,
            "judge": _judge(),
            "key": list(key),
            "digest": digest or kept_digest(data),
            **_encoded(lock),
        }
        write_inside(root, FILE, json.dumps(document).encode(), durable=False)


def _encoded(lock: Lock) -> dict[str, object]:
    return {
        "memories": [
            [
                m.path,
                m.content,
                [[a.ref, a.address, a.derivation, a.kind, a.axes] for a in m.anchors.values()],
            ]
            for m in lock.memories.values()
        ],
        "tombstones": [[t.content, t.path, t.reason, t.at] for t in lock.tombstones],
        "retired": [[r.path, r.by, r.reason, r.at] for r in lock.retired.values()],
        "restored": [[r.key, r.path, r.reason, r.at] for r in lock.restored.values()],
        "closed": [[c.anchor, c.by, c.reason, c.at] for c in lock.closed.values()],
    }


class _Invalid(Exception):
    pass


def _decoded(document: Mapping[str, object]) -> Lock:
    intern = sys.intern
    memories: dict[str, LockedMemory] = {}
    for path, content, anchors in _list(document["memories"]):
        if type(path) is not str or type(content) is not str or path in memories:
            raise _Invalid
        by_ref: dict[str, LockedAnchor] = {}
        for ref, address, derivation, kind, axes in _list(anchors):
            if not (
                type(ref) is str
                and type(address) is str
                and type(derivation) is str
                and type(kind) is str
                and type(axes) is dict
                and all(type(digest) is str for digest in axes.values())
                and ref not in by_ref
            ):
                raise _Invalid
            # As the parser does: a derivation and a kind are one of a few values.
            by_ref[ref] = LockedAnchor(ref, address, intern(derivation), intern(kind), axes)
        memories[path] = LockedMemory(path, content, by_ref)
    return Lock(
        memories,
        tuple(Tombstone(*_strings(item)) for item in _list(document["tombstones"])),
        {key: Retirement(*item) for key, item in _keyed(document["retired"]).items()},
        {key: Restoration(*item) for key, item in _keyed(document["restored"]).items()},
        {key: Closure(*item) for key, item in _keyed(document["closed"]).items()},
    )


def _keyed(value: object) -> dict[str, list[str]]:
    """Each item's four strings, by the first (the key its table is filed under)."""
    table: dict[str, list[str]] = {}
    for item in _list(value):
        fields = _strings(item)
        if fields[0] in table:
            raise _Invalid
        table[fields[0]] = fields
    return table


def _list(value: object) -> list[list[object]]:
    if type(value) is not list or not all(type(item) is list for item in value):
        raise _Invalid
    return value


def _strings(value: list[object]) -> list[str]:
    if len(value) != 4 or not all(type(item) is str for item in value):
        raise _Invalid
    return value  # type: ignore[return-value]
