"""Retirement and forgetting are latches (docs/decisions.md): what is retired or forgotten now.

A latch is a list of events per key: a retirement (key: the memory's path), a forget (key:
the normalised value it said, `Memory.value`) and an explicit restore of either key. Each
event is recorded twice: in moor.lock (the team's committed state) and in the journal
(this clone's local, append-only history, under `LATCH_ANCHOR`). A key is latched when its
latest retirement or forget is not older than its latest restore, whichever record holds
them — so a moor.lock from before the retirement (a `git checkout` of an old lock, a
stale snapshot written back, a merge that dropped the table) cannot un-retire anything
this clone saw retired, while a restore journalled here, or committed by a teammate into
moor.lock, does. Ties go to the latch; every action stamps its event later than the ones it
overrides (`stamp`), so a clock that steps back cannot reorder a restore before its
retirement.

A memory whose `supersedes:` names another retires it as soon as moor reads it
(`declared`), before any action has recorded that: the actions that record a memory (add,
bind, reaffirm) latch what it declares (`latch_declared`). A restore is refused while a
memory still declares the retirement: the declaration would retire it again.

Every write re-records the latches in force into moor.lock (`healed`, from
`Session.writing`): an old lock that came back is mended by the next write.

A retirement's journal entry also keeps what the retired memory said (its `Memory.value`,
a digest), so its text stays retired after its file is deleted (`retired_text`). moor.lock
does not carry it: its retirement table has a fixed shape that moor versions before this
one parse strictly, so only clones that journalled the retirement know a deleted file's
value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from moor_extractors.memory import Memory, parse_memory
from moor_store.inside import NotInside, exists_inside, read_inside
from moor_store.journal import Journal, NewEntry, utc_now
from moor_store.lockfile import Lock, Restoration, Retirement, Tombstone

# The journal's anchor for every latch event (its `memory` names the memory concerned):
# one indexed lookup finds them all.
LATCH_ANCHOR = "moor:latch"

EventKind = Literal["retire", "forget", "restore"]


@dataclass(frozen=True)
class Event:
    """One retirement, forget or restore, from moor.lock or this clone's journal."""

    kind: EventKind
    key: str  # a memory path (retire; restore of one) or a value key (forget; restore of one)
    path: str  # the memory concerned
    reason: str
    at: str  # ISO-8601 UTC, as the journal writes it
    by: str = ""  # retire: the memory that superseded it
    origin: str = "moor.lock"  # "moor.lock", "journal" or "declared"
    value: str = ""  # retire: what the retired memory said then (`Memory.value`), if known

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "path": self.path,
            "by": self.by or None,
            "reason": self.reason,
            "at": self.at,
            "origin": self.origin,
        }

    def describe(self) -> str:
        day = self.at[:10]
        if self.kind == "retire":
            if self.origin == "declared":
                return f"superseded by {self.by} (its `supersedes:`)"
            return f"superseded by {self.by} on {day}: {self.reason}"
        if self.kind == "forget":
            return f"forgotten on {day} ({self.path}): {self.reason}"
        return f"restored on {day}: {self.reason}"


@dataclass(frozen=True)
class Latches:
    """The latches in force: retirements by path, tombstones by value key, and the latest
    restore of each key (kept in moor.lock, so a teammate's restore travels too)."""

    retired: Mapping[str, Event] = field(default_factory=dict)
    tombstones: Mapping[str, Event] = field(default_factory=dict)
    restored: Mapping[str, Event] = field(default_factory=dict)
    # Every tombstone of a value in force (moor.lock may hold several: one per forget).
    tombstone_records: tuple[Tombstone, ...] = ()

    def tombstone(self, value: str) -> Event | None:
        return self.tombstones.get(value) if value else None


def stamp(*after: str | None) -> str:
    """Now, or just after the latest of `after` when the clock says otherwise."""
    now = utc_now()
    latest = max((a for a in after if a), default="")
    if now > latest:
        return now
    moment = datetime.fromisoformat(latest.replace("Z", "+00:00")) + timedelta(milliseconds=1)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def lock_events(lock: Lock) -> list[Event]:
    events = [
        Event("retire", path, path, r.reason, r.at, by=r.by) for path, r in lock.retired.items()
    ]
    events += [Event("restore", key, r.path, r.reason, r.at) for key, r in lock.restored.items()]
    events += [Event("forget", t.content, t.path, t.reason, t.at) for t in lock.tombstones]
    return events


def journal_events(journal: Journal | None) -> list[Event]:
    if journal is None:
        return []
    events = []
    for entry in journal.entries(anchor=LATCH_ANCHOR):
        data = entry.data if isinstance(entry.data, dict) else {}
        at = str(data.get("at") or entry.at)
        path = entry.memory or ""
        reason = entry.reason or ""
        if entry.code == "retire":
            by, value = str(data.get("by", "")), str(data.get("value") or "")
            events.append(Event("retire", path, path, reason, at, by, "journal", value))
        elif entry.code == "forget" and data.get("value"):
            events.append(Event("forget", str(data["value"]), path, reason, at, origin="journal"))
        elif entry.code == "restore" and data.get("key"):
            events.append(Event("restore", str(data["key"]), path, reason, at, origin="journal"))
    return events


def read_latches(lock: Lock, journal: Journal | None) -> Latches:
    return latches_of([*lock_events(lock), *journal_events(journal)], lock.tombstones)


def latches_of(events: Iterable[Event], locked: Iterable[Tombstone] = ()) -> Latches:
    latest: dict[tuple[str, str], Event] = {}  # (kind, key) -> its latest event
    for event in events:
        slot = (event.kind, event.key)
        held = latest.get(slot)
        # Equal times: the same event in both records; moor.lock's copy is kept, with the
        # value only the journal's holds.
        if held is None or event.at > held.at:
            latest[slot] = event
        elif event.at == held.at and event.value and not held.value:
            latest[slot] = replace(held, value=event.value)
    restored = {key: e for (kind, key), e in latest.items() if kind == "restore"}

    def in_force(kind: str) -> dict[str, Event]:
        return {
            key: e
            for (k, key), e in latest.items()
            if k == kind and (key not in restored or e.at >= restored[key].at)
        }

    tombstones = in_force("forget")
    records = {t for t in locked if t.content in tombstones}
    records |= {
        Tombstone(e.key, e.path, e.reason, e.at)
        for e in tombstones.values()
        if not any(t.content == e.key for t in records)
    }
    return Latches(in_force("retire"), tombstones, restored, tuple(records))


def healed(lock: Lock, latches: Latches) -> Lock:
    """`lock` recording every latch in force (and the latest restore of each key)."""
    retired = {
        path: Retirement(path, e.by, e.reason, e.at)
        for path, e in latches.retired.items()
        if e.origin != "declared"
    }
    restored = {
        key: Restoration(key, e.path, e.reason, e.at) for key, e in latches.restored.items()
    }
    return replace(lock, retired=retired, restored=restored, tombstones=latches.tombstone_records)


def declared(supersedes: Mapping[str, Iterable[str]]) -> dict[str, Event]:
    """Retirements memories declare (`supersedes:`), by retired path: `supersedes` maps each
    declaring memory to the paths it names. A memory never retires itself."""
    found: dict[str, Event] = {}
    for by in sorted(supersedes):
        for path in supersedes[by]:
            if path != by:
                found.setdefault(path, Event("retire", path, path, "", "", by, "declared"))
    return found


def value_at(root: Path, path: str) -> str:
    """What the memory file at `path` says (`Memory.value`); empty when it cannot be read."""
    try:
        memory = parse_memory(path, read_inside(root, path)).memory
    except (OSError, NotInside):
        return ""
    return memory.value if memory is not None else ""


def retire(
    lock: Lock, latches: Latches, path: str, by: str, why: str, value: str = ""
) -> tuple[Lock, NewEntry, Event]:
    """The lock and journal entry that retire `path` (superseded by `by`); `value` is what
    it says, kept in the journal."""
    previous = latches.restored.get(path)
    at = stamp(previous.at if previous else None)
    event = Event("retire", path, path, why, at, by, value=value)
    retired = {**lock.retired, path: Retirement(path, by, why, at)}
    entry = NewEntry(
        "revise",
        LATCH_ANCHOR,
        memory=path,
        reason=why,
        code="retire",
        detail=f"superseded by {by}",
        data={"by": by, "at": at, **({"value": value} if value else {})},
    )
    return replace(lock, retired=retired), entry, event


def restore_entry(key: str, path: str, why: str, at: str, what: str) -> NewEntry:
    return NewEntry(
        "revise",
        LATCH_ANCHOR,
        memory=path,
        reason=why,
        code="restore",
        detail=what,
        data={"key": key, "at": at},
    )


def forget_entry(path: str, value: str, why: str, at: str, data: Mapping[str, object]) -> NewEntry:
    return NewEntry(
        "revise",
        LATCH_ANCHOR,
        memory=path,
        reason=why,
        code="forget",
        detail="forgotten: the file was removed and its value tombstoned",
        data={**data, "value": value, "at": at},
    )


def latch_declared(
    root: Path, lock: Lock, latches: Latches, memories: Sequence[tuple[str, Memory]]
) -> tuple[Lock, list[NewEntry]]:
    """`lock` recording the retirements these memories declare (`supersedes:`) that are
    not latched yet, and their journal entries. A path with no memory file is not retired."""
    entries: list[NewEntry] = []
    for path, memory in memories:
        for old in memory.supersedes:
            if old == path or old in latches.retired or old in lock.retired:
                continue
            if not exists_inside(root, old):
                continue
            why = f"superseded by {path}"
            lock, entry, _event = retire(lock, latches, old, path, why, value_at(root, old))
            entries.append(entry)
    return lock, entries
