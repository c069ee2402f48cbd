"""The latch rules (moor_engine.memory.latch) and the latch through sessions and the editor's live
check: a stale snapshot cannot un-retire, and the live check agrees with one from scratch."""

from __future__ import annotations

import shutil

from moor_engine.grounding.actions import bind
from moor_engine.grounding.live import LiveCheck
from moor_engine.memory.latch import Event, latches_of, stamp
from moor_engine.memory.latch_actions import forget, supersede
from moor_engine.session import Session
from moor_store.lockfile import format_lock

from tests.conftest import Workspace

CODE = "def send(body):\n    return body\n\n\ndef post(body):\n    return [body]\n"
OLD, NEW = "memories/old.md", "memories/new.md"


def _event(kind: str, key: str, at: str, origin: str = "moor.lock") -> Event:
    return Event(kind, key, key, "why", at, origin=origin)  # type: ignore[arg-type]


def test_a_retirement_holds_unless_a_later_restore_is_recorded_anywhere() -> None:
    retire = _event("retire", OLD, "2026-01-02T00:00:00.000Z", "journal")
    earlier = _event("restore", OLD, "2026-01-01T00:00:00.000Z")
    later = _event("restore", OLD, "2026-01-03T00:00:00.000Z", "journal")

    assert OLD in latches_of([retire]).retired
    assert OLD in latches_of([earlier, retire]).retired  # an older restore does not undo it
    assert OLD not in latches_of([retire, later]).retired  # control: a later one does
    tie = _event("restore", OLD, retire.at)
    assert OLD in latches_of([retire, tie]).retired  # a tie goes to the latch


def test_a_tombstone_is_lifted_only_by_a_later_restore_of_its_value() -> None:
    forgotten = _event("forget", "value/1 abc", "2026-01-02T00:00:00.000Z")
    other = _event("restore", "value/1 def", "2026-01-03T00:00:00.000Z")
    lifted = _event("restore", "value/1 abc", "2026-01-03T00:00:00.000Z")

    assert latches_of([forgotten, other]).tombstone("value/1 abc") is not None
    assert latches_of([forgotten, lifted]).tombstone("value/1 abc") is None
    assert latches_of([forgotten]).tombstone("") is None  # an empty text is never forgotten


def test_stamps_come_after_the_event_they_override_even_when_the_clock_is_behind() -> None:
    future = "2999-01-01T00:00:00.000Z"
    assert stamp(future) == "2999-01-01T00:00:00.001Z"
    assert stamp(None) < future  # control: without one to follow, it is now


def _setup(ws: Workspace) -> None:
    ws.write("src/a.py", CODE)
    ws.memory("old", "src/a.py#send", body="Send is safe to retry.")
    ws.memory("new", "src/a.py#send", body="Send is safe to retry: it carries a key.")
    ws.memory("other", "src/a.py#post")
    with Session.open(ws.root) as session:
        assert not bind(session, [OLD, NEW]).refused


def test_a_session_opened_before_the_retirement_cannot_write_it_away(ws: Workspace) -> None:
    _setup(ws)
    with Session.open(ws.root) as stale:
        snapshot = stale.lock  # read before the retirement
        ws.moor("supersede", OLD, "--by", NEW, "--why", "in another process", check=True)

        outcome = bind(stale, ["memories/other.md"])

        assert not outcome.refused
    assert ws.state(OLD) == "retired"
    assert OLD in ws.read("moor.lock")
    assert "memories/other.md" in ws.read("moor.lock")  # the stale session's own write landed
    # Positive control: had the stale snapshot been written as it was, it would say current.
    assert OLD not in snapshot.retired
    ws.write("moor.lock", format_lock(snapshot))
    shutil.rmtree(ws.root / ".moor")
    assert ws.state(OLD) == "current"


def test_the_live_check_sees_a_retirement_and_an_old_lock_does_not_undo_it(
    ws: Workspace,
) -> None:
    _setup(ws)
    stale = ws.read("moor.lock")
    live = LiveCheck(ws.root)
    try:
        assert live.refresh(None).reports[OLD].state.value == "current"
        with Session.open(ws.root) as session:
            assert supersede(session, OLD, NEW, "an editor's neighbour").ok

        assert live.refresh({"moor.lock"}).reports[OLD].state.value == "retired"
        ws.write("moor.lock", stale)  # an old lock checked out under the editor
        assert live.refresh({"moor.lock"}).reports[OLD].state.value == "retired"
        assert live.verify() == []
    finally:
        live.close()


def test_the_live_check_flags_a_memory_saved_with_a_forgotten_text(ws: Workspace) -> None:
    _setup(ws)
    live = LiveCheck(ws.root)
    try:
        live.refresh(None)
        with Session.open(ws.root) as session:
            assert forget(session, OLD, "it never held").ok
        live.refresh({OLD, "moor.lock"})
        ws.memory("copy", "src/a.py#send", body="send IS safe to   retry")

        report = live.refresh({"memories/copy.md"}).reports["memories/copy.md"]

        assert (report.state.value, report.code) == ("retired", "tombstoned")
        assert live.refresh(None).reports["memories/copy.md"].code == "tombstoned"
        ws.memory("copy", "src/a.py#send", body="Send is not safe to retry.")
        control = live.refresh({"memories/copy.md"}).reports["memories/copy.md"]
        assert control.code != "tombstoned"
        assert live.verify() == []
    finally:
        live.close()
