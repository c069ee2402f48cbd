"""One action's writes as one unit: an intent record first, then the files, then the journal.

An action (follow, reaffirm, bind, a re-baseline) decides everything before it writes: the
new bytes of each file (a memory, moor.lock), the journal entries, the snapshots to seal.
`apply` writes that decision to `.moor/intent.json` (atomically) before it touches anything
else, then seals, replaces each file atomically, appends the entries tagged with the
intent's id, and removes the record. A crash anywhere leaves either no record (nothing was
written yet) or a record that `recover` completes on the next run, under the write lock:

* a file whose bytes are still the ones the action read is written (or removed, when the
  action removes it); one that already has the new bytes (or is already gone) is left; one
  that has neither (changed by hand since) is left as it is, and said so;
* the entries are appended unless the journal already holds entries with the intent's id;
* the temporary files a killed write left beside those files (moor's name shape, for those
  names only) are removed: a file is written only once the record is, so no other folder
  can hold one.

A file the action creates (`Change.create`) is written first and exclusively: when one
exists by then, nothing else is written, the record is removed and `FileExistsError` is
raised, so creating never overwrites.

Every step is therefore safe to repeat, and the journal entry and the files of one action
end up together: the reason of a crashed reaffirm is never lost while its lock change stays.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from .environment import Unavailable, free_bytes, refusal
from .inside import (
    NotInside,
    open_inside_dir,
    read_inside,
    remove_inside,
    remove_stray_temporaries,
    write_inside,
)
from .journal import Journal, JournalUnavailable, NewEntry

__all__ = ["INTENT_PATH", "Change", "apply", "pending", "recover"]

_INTENT_NAME: Final = "intent.json"
INTENT_PATH: Final = ".moor/" + _INTENT_NAME
_VERSION: Final = 1


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass
class Change:
    """What one action writes. `files`: workspace-relative path -> (bytes read, new bytes;
    None: the file is removed). `created`: paths of `files` that must not exist yet."""

    action: str
    files: dict[str, tuple[bytes | None, bytes | None]] = field(default_factory=dict)
    entries: list[NewEntry] = field(default_factory=list)
    seals: list[tuple[str, str]] = field(default_factory=list)
    created: set[str] = field(default_factory=set)

    def write(self, rel: str, before: bytes | None, after: bytes | None) -> None:
        if before == after:
            return
        if rel in self.files:  # a second change to the same file: keep what was read first
            before = self.files[rel][0]
        self.files[rel] = (before, after)

    def create(self, rel: str, data: bytes) -> None:
        """A new file, written before any other and only if nothing is there yet."""
        self.files = {rel: (None, data), **{k: v for k, v in self.files.items() if k != rel}}
        self.created.add(rel)

    def remove(self, rel: str, before: bytes) -> None:
        self.write(rel, before, None)

    @property
    def empty(self) -> bool:
        return not self.files and not self.entries and not self.seals


# Fault points for tests that kill an action between its writes (MOOR_FAULT_AT=<name>);
# a no-op unless the variable names this point.
def _fault(point: str) -> None:
    if os.environ.get("MOOR_FAULT_AT") == point:
        os.kill(os.getpid(), 9)


def apply(root: Path, journal: Journal | None, change: Change, *, clock: Callable[[], str]) -> None:
    """Carry out `change`: record it, seal, write each file, journal, forget the record."""
    if change.empty:
        return
    import base64  # a write's: a one-shot read never loads these (~1.5 ms)
    import secrets

    ident = secrets.token_hex(8)
    entries = [_tagged(entry, ident) for entry in change.entries]
    record = {
        "version": _VERSION,
        "id": ident,
        "action": change.action,
        "at": clock(),
        "pid": os.getpid(),
        "files": [
            {
                "path": rel,
                "before": _sha(before),
                "after": None if after is None else base64.b64encode(after).decode("ascii"),
            }
            for rel, (before, after) in change.files.items()
        ],
        "entries": [_entry_json(entry) for entry in entries],
        "seals": change.seals,
    }
    encoded = json.dumps(record).encode("utf-8")
    _make_room(root, journal, change, len(encoded))
    write_inside(root, INTENT_PATH, encoded)
    _fault("after-intent")
    written: list[str] = []
    try:
        if journal is not None and change.seals:
            journal.seal_many(change.seals)
        for rel in change.created:
            try:
                write_inside(root, rel, change.files[rel][1] or b"", exclusive=True)
            except FileExistsError:
                _forget(root)
                raise
            written.append(rel)
        for index, (rel, (_before, after)) in enumerate(change.files.items()):
            if rel not in change.created:
                _write(root, rel, after)
                written.append(rel)
            _fault(f"after-file-{index + 1}")
        if journal is not None and entries:
            journal.append(entries)
    except (Unavailable, JournalUnavailable):
        # The environment failed part-way (a disk that filled after the check): put back
        # what was written, so the action is not half done; if even that fails, the record
        # stays and the next run that can write completes the action instead.
        _undo(root, change, written)
        raise
    _fault("after-journal")
    _forget(root)


# Room a journal batch may take beyond its entries: WAL frames of the pages it touches, and
# the -shm index when it has to be made.
_JOURNAL_ROOM: Final = 128 * 1024
_BLOCK: Final = 4096


def _make_room(root: Path, journal: Journal | None, change: Change, record: int) -> None:
    """Refuse, before anything is written, an action the disk has no room for: the record,
    each new file's bytes (a replaced file is freed only after its copy is written) and the
    journal's batch. `Unavailable` names the space needed and free."""
    free = free_bytes(root / ".moor")
    if free is None:
        return

    def blocks(size: int) -> int:
        return -(-size // _BLOCK) * _BLOCK

    needed = blocks(record) + sum(
        blocks(len(after)) for _before, after in change.files.values() if after is not None
    )
    if journal is not None and (change.entries or change.seals):
        needed += _JOURNAL_ROOM + sum(blocks(len(text)) for _address, text in change.seals)
    if free < needed:
        raise refusal("disk_full", root, f"run {change.action}", needed=needed)


def _undo(root: Path, change: Change, written: list[str]) -> None:
    """Put back the files of `written` as they were read, then forget the record; leave the
    record (to be completed forward) when that cannot be done."""
    try:
        for rel in reversed(written):
            before = change.files[rel][0]
            _write(root, rel, None if rel in change.created else before)
        _forget(root)
    except OSError:
        pass


def pending(root: Path) -> bool:
    try:
        read_inside(root, INTENT_PATH)
    except OSError:
        return False
    return True


def recover(root: Path, journal: Journal | None) -> list[str]:
    """Complete an action a crash interrupted; what was done, as messages (empty: nothing)."""
    try:
        raw = read_inside(root, INTENT_PATH)
    except FileNotFoundError:
        return []
    except NotInside as error:
        return [f"{INTENT_PATH} was not read: {error}"]
    try:
        import base64

        record = json.loads(raw.decode("utf-8"))
        if not isinstance(record, dict) or record.get("version") != _VERSION:
            raise ValueError("unknown intent record version")
        ident = str(record["id"])
        action = str(record["action"])
        files = [
            (
                str(f["path"]),
                f["before"],
                None if f["after"] is None else base64.b64decode(f["after"]),
            )
            for f in record["files"]
        ]
        entries = [_entry_from_json(e) for e in record["entries"]]
        seals = [(str(a), str(t)) for a, t in record["seals"]]
    except (ValueError, KeyError, TypeError) as error:
        _set_aside(root)
        return [
            f"{INTENT_PATH} could not be read ({error}); moved it aside as intent.json.broken — "
            "run `moor check` to see the state of every memory"
        ]
    done: list[str] = []
    if journal is not None and seals:
        journal.seal_many(seals)
    for rel, before, after in files:
        try:
            current: bytes | None = read_inside(root, rel)
        except FileNotFoundError:
            current = None
        except NotInside as error:
            done.append(f"{rel}: not written ({error})")
            continue
        if current == after:
            continue
        if _sha(current) != before:
            done.append(f"{rel} changed since; left as it is")
            continue
        _write(root, rel, after)
        done.append(f"wrote {rel}" if after is not None else f"removed {rel}")
    if journal is not None and entries and not journal.has_intent(entries[0].anchor, ident):
        journal.append(entries)
        done.append(f"journalled {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}")
    _sweep(root, [rel for rel, _before, _after in files])
    _forget(root)
    what = "; ".join(done) if done else "everything had been written"
    return [f"completed an interrupted `{action}` from {record.get('at')}: {what}"]


def _sweep(root: Path, paths: list[str]) -> None:
    """Remove the temporary files the interrupted writer may have left beside the files it
    was writing: only there can they be, since a file is written only after the record."""
    folders: dict[str, set[str]] = {}
    for rel in paths:
        folder, _, name = rel.rpartition("/")
        folders.setdefault(folder or ".", set()).add(name)
    for folder, names in folders.items():
        remove_stray_temporaries(root, folder, names)


def _write(root: Path, rel: str, data: bytes | None) -> None:
    if data is None:
        remove_inside(root, rel)
    else:
        write_inside(root, rel, data)


def _tagged(entry: NewEntry, ident: str) -> NewEntry:
    data = dict(entry.data) if entry.data is not None else {}
    data["intent"] = ident
    return NewEntry(
        entry.kind,
        entry.anchor,
        memory=entry.memory,
        address=entry.address,
        previous=entry.previous,
        reason=entry.reason,
        code=entry.code,
        detail=entry.detail,
        data=data,
    )


_ENTRY_FIELDS: Final = (
    "kind",
    "anchor",
    "memory",
    "address",
    "previous",
    "reason",
    "code",
    "detail",
)


def _entry_json(entry: NewEntry) -> dict[str, object]:
    value: dict[str, object] = {name: getattr(entry, name) for name in _ENTRY_FIELDS}
    value["data"] = dict(entry.data) if entry.data is not None else None
    return value


def _entry_from_json(value: Mapping[str, object]) -> NewEntry:
    def text(name: str) -> str | None:
        item = value.get(name)
        return None if item is None else str(item)

    data = value.get("data")
    kind, anchor = text("kind"), text("anchor")
    if kind is None or anchor is None:
        raise ValueError("an entry without kind or anchor")
    return NewEntry(
        kind,  # type: ignore[arg-type]  # validated by Journal.append
        anchor,
        memory=text("memory"),
        address=text("address"),
        previous=text("previous"),
        reason=text("reason"),
        code=text("code"),
        detail=text("detail"),
        data=data if isinstance(data, dict) else None,
    )


def _forget(root: Path) -> None:
    with open_inside_dir(root, ".moor") as folder, contextlib.suppress(FileNotFoundError):
        os.unlink(_INTENT_NAME, dir_fd=folder)


def _set_aside(root: Path) -> None:
    with open_inside_dir(root, ".moor") as folder, contextlib.suppress(OSError):
        os.replace(_INTENT_NAME, _INTENT_NAME + ".broken", src_dir_fd=folder, dst_dir_fd=folder)
