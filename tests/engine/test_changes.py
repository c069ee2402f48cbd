"""Changes since a cursor: the journal read forward a page at a time, on a real workspace."""

from __future__ import annotations

import pytest
from moor_engine.memory.changes import MAX_LIMIT, changes_since
from moor_engine.memory.memory_writes import Draft, add
from moor_engine.session import Session
from moor_engine.usage import UsageError

from tests.conftest import Workspace

CODE = "def send(body):\n    return body\n"


def history(ws: Workspace) -> None:
    """Two memories bound to one function, a third elsewhere, then the function drifts."""
    ws.write("src/a.py", CODE)
    ws.write("src/b.py", "def other():\n    return 1\n")
    with Session.open(ws.root) as session:
        for text, about in [
            ("Send returns its body", "src/a.py#send"),
            ("Send never copies the body", "src/a.py#send"),
            ("Other returns one", "src/b.py#other"),
        ]:
            assert add(session, Draft(text, about=[about])).ok
    ws.write("src/a.py", CODE.replace("return body", "return [body]"))
    ws.moor("check")


def test_pages_of_changes_cover_the_journal_once_in_order(ws: Workspace) -> None:
    history(ws)
    seen: list[int] = []
    cursor, pages = 0, 0
    with Session.open(ws.root) as session:
        assert session.journal is not None
        every = [entry.seq for entry in session.journal.entries()]
        while True:
            page = changes_since(session, cursor, limit=2)
            pages += 1
            seen += [change.seq for change in page.changes]
            assert len(page.changes) <= 2
            cursor = page.next_cursor
            if not page.more:
                break
        last = changes_since(session, cursor, limit=2)
    assert len(every) >= 6  # the control: enough entries for several pages
    assert seen == every == list(range(1, len(every) + 1))
    assert pages == -(-len(every) // 2)
    assert last.changes == [] and last.next_cursor == last.head == every[-1]


def test_an_observation_of_code_names_every_memory_bound_to_it(ws: Workspace) -> None:
    history(ws)
    with Session.open(ws.root) as session:
        changes = changes_since(session).changes
    drifted = [c for c in changes if c.kind == "transition" and c.anchor == "src/a.py#send"]
    assert drifted and all(c.memory is None for c in drifted)
    assert set(drifted[0].memories) == {
        "memories/send-returns-its-body.md",
        "memories/send-never-copies-the-body.md",
    }
    written = [c for c in changes if c.code == "add"]
    assert [c.memories for c in written] == [(c.memory,) for c in written]
    assert len(written) == 3  # the other memory's write is there, not in the transition


def test_a_cursor_past_the_end_gives_nothing_and_the_end(ws: Workspace) -> None:
    history(ws)
    with Session.open(ws.root) as session:
        head = changes_since(session).head
        beyond = changes_since(session, head + 50)
        at_end = changes_since(session, head)
        before_end = changes_since(session, head - 1)
    assert beyond.changes == [] and beyond.next_cursor == head and not beyond.more
    assert at_end.changes == [] and at_end.next_cursor == head
    assert [c.seq for c in before_end.changes] == [head]  # the control: one entry is there


def test_a_rebuilt_journal_hands_back_its_own_end_for_an_old_cursor(ws: Workspace) -> None:
    history(ws)
    with Session.open(ws.root) as session:
        old_head = changes_since(session).head
    for name in ("journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"):
        (ws.root / ".moor" / name).unlink(missing_ok=True)
    ws.moor("check")
    with Session.open(ws.root) as session:
        after = changes_since(session, old_head)
    assert after.changes == [] and after.next_cursor == after.head < old_head


@pytest.mark.parametrize(
    ("cursor", "limit", "message"),
    [
        (-1, 10, "cursor -1"),
        (0, 0, "limit 0: between 1 and"),
        (0, MAX_LIMIT + 1, f"limit {MAX_LIMIT + 1}: between 1 and"),
    ],
)
def test_a_negative_cursor_or_a_limit_out_of_range_is_refused(
    ws: Workspace, cursor: int, limit: int, message: str
) -> None:
    history(ws)
    with Session.open(ws.root) as session:
        assert changes_since(session, 0, MAX_LIMIT).changes  # the control: valid bounds answer
        with pytest.raises(UsageError, match=message):
            changes_since(session, cursor, limit)
