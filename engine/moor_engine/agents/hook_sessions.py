"""What one agent session's tool hooks noted: the memories they showed or checked
(`touched`, for a context that is compacted), each one's state before an edit (`states`),
and the memories an edit left stale (`edited`, asked about before the agent stops).

A note of which memories to look at again, never a verdict: every answer built on it checks
those memories as they are then (`edit_loop`). Kept in `.moor/hook-sessions.json` for the
`KEEP` sessions noted last, keyed by the agent's session (Claude Code's and Gemini CLI's
`session_id`, Cursor's `conversation_id`); a hook without one notes nothing. A cache:
unreadable, it is empty, and failing to write it is no error.

Parallel sub-agents' hooks note at the same moment, each reading the whole file and writing
it back, so a note is one read-modify-write under `LOCK` (an advisory `flock` of its own,
not the workspace write lock: a hook must not wait behind a long `moor bind`). The kernel
drops it when its holder exits however it exits; a note that cannot have it within
`_WAIT` seconds is skipped, as any failure to write the cache is.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from moor_store.inside import NotInside, read_inside, write_inside
from moor_store.writelock import side_lock

FILE = ".moor/hook-sessions.json"
LOCK = "hook-sessions.lock"  # in .moor/
_WAIT = 2.0  # seconds; a holder only reads and writes one small file
KEEP = 16  # sessions
_MAX_PATHS = 500  # per list: a session that touches more keeps the last ones
_MAX_BYTES = 8 * 1024 * 1024
_MAX_ID = 200


def _read(root: Path) -> dict[str, dict[str, object]]:
    try:
        value = json.loads(read_inside(root, FILE, limit=_MAX_BYTES))
    except (OSError, ValueError, NotInside):
        return {}
    if not isinstance(value, dict):
        return {}
    return {key: entry for key, entry in value.items() if isinstance(entry, dict)}


def _session(root: Path, session_id: object) -> dict[str, object]:
    if not isinstance(session_id, str) or not session_id or len(session_id) > _MAX_ID:
        return {}
    return _read(root).get(session_id, {})


def _paths(entry: Mapping[str, object], name: str) -> list[str]:
    value = entry.get(name)
    if not isinstance(value, list):
        return []
    return [path for path in value if isinstance(path, str)]


def touched(root: Path, session_id: object) -> list[str]:
    return _paths(_session(root, session_id), "touched")


def edited(root: Path, session_id: object) -> list[str]:
    return _paths(_session(root, session_id), "edited")


def states(root: Path, session_id: object) -> dict[str, str]:
    value = _session(root, session_id).get("states")
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def _merged(old: list[str], new: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*old, *new]))[-_MAX_PATHS:]


def note(
    root: Path,
    session_id: object,
    *,
    touched: Iterable[str] = (),
    states: Mapping[str, str] | None = None,
    edited: Iterable[str] = (),
) -> None:
    """Add to what session `session_id` noted; never raises."""
    if not isinstance(session_id, str) or not session_id or len(session_id) > _MAX_ID:
        return
    touched, edited = list(touched), list(edited)
    if not touched and not states and not edited:
        return  # a tool call on a file no memory is about: nothing to write
    with contextlib.suppress(OSError, NotInside, ValueError, TimeoutError), _locked(root):
        every = _read(root)
        entry = every.pop(session_id, {})
        old_states = entry.get("states")
        kept_states = dict(old_states) if isinstance(old_states, dict) else {}
        kept_states.update(states or {})
        entry = {
            "at": time.time(),
            "touched": _merged(_paths(entry, "touched"), touched),
            "edited": _merged(_paths(entry, "edited"), edited),
            "states": kept_states,
        }
        every[session_id] = entry
        last = sorted(every, key=lambda key: _at(every[key]))[-KEEP:]
        document = {key: every[key] for key in last}
        write_inside(root, FILE, json.dumps(document, sort_keys=True).encode(), durable=False)


def _locked(root: Path) -> contextlib.AbstractContextManager[None]:
    """Hold `.moor/hook-sessions.lock` (TimeoutError after `_WAIT` seconds)."""
    return side_lock(root, LOCK, wait=_WAIT)


def _at(entry: Mapping[str, object]) -> float:
    value = entry.get("at")
    return float(value) if isinstance(value, int | float) else 0.0
