"""moor.lock's `[closed."anchor:NAME"]` tables: written deterministically, read back the same
(through tomllib: the canonical fast path leaves them to it), hostile strings included."""

from __future__ import annotations

from moor_store.lockfile import Closure, Lock, LockedMemory, format_lock, parse_lock


def test_closures_round_trip_through_the_lock_text() -> None:
    lock = Lock(
        memories={"memories/a.md": LockedMemory("memories/a.md", "c0ffee")},
        closed={
            "anchor:b": Closure("anchor:b", "anchor:c", 'split "in two"\n]\n[x]', "2026-01-01"),
            "anchor:a": Closure("anchor:a", "", "gone", "2026-01-02"),
        },
    )
    text = format_lock(lock)
    assert text.index('[closed."anchor:a"]') < text.index('[closed."anchor:b"]')  # sorted
    assert parse_lock(text) == lock
    assert format_lock(parse_lock(text)) == text
    # The control: a lock without closures has no such table, and reads back without any.
    plain = Lock(memories=lock.memories)
    assert "[closed." not in format_lock(plain)
    assert parse_lock(format_lock(plain)).closed == {}
