"""A process that opens many sessions (an editor: one a hover) holds moor.lock's parse, not
its bytes, and knows an unchanged lock by its stat key (memory
an-editor-keeps-only-what-its-next-check-needs)."""

from __future__ import annotations

import os

from moor_engine import session as session_module
from moor_engine.grounding.actions import bind
from moor_engine.kept_lock import kept_digest
from moor_engine.session import Session

from tests.cli.test_hook_answers import backdate
from tests.conftest import Workspace

CODE = "def g():\n    return 2\n\n\ndef h():\n    return 3\n"


def bound(ws: Workspace) -> bytes:
    ws.write("src/a.py", CODE)
    ws.memory("retry", "src/a.py#g")
    ws.memory("other", "src/a.py#h")
    with Session.open(ws.root) as session:
        assert not bind(session, []).refused
    backdate(ws.root)
    session_module._last_parsed = None  # a new process
    return (ws.root / "moor.lock").read_bytes()


def test_a_session_opened_again_is_given_the_parsed_lock_unread_and_sees_another_writers_change(
    ws: Workspace,
) -> None:
    data = bound(ws)
    with Session.open(ws.root) as first:
        assert first.lock_bytes == data  # control: the first session reads the lock
    with Session.open(ws.root) as again:
        assert again.lock_bytes is None and again.lock is first.lock  # known by its stat key
        assert again.lock_digest == kept_digest(data)
        assert again.reads_as_seen(data)

    # Another writer changes one digest: the same size, the mtime put back as it was.
    path = ws.root / "moor.lock"
    before = path.stat()
    anchor = first.lock.memories["memories/retry.md"].anchors["src/a.py#g"]
    old_digest = anchor.axes["body"]  # this function's own, in the file once
    new_digest = old_digest[:-1] + ("0" if old_digest[-1] != "0" else "1")
    changed = data.replace(old_digest.encode(), new_digest.encode(), 1)
    assert len(changed) == len(data) and changed != data
    path.write_bytes(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_mtime_ns == before.st_mtime_ns

    with Session.open(ws.root) as after:
        assert after.lock_bytes == changed  # read again: the ctime moved
        assert not after.reads_as_seen(data)
        axes = after.lock.memories["memories/retry.md"].anchors["src/a.py#g"].axes
        assert axes["body"] == new_digest


def test_a_session_that_let_its_lock_bytes_go_still_tells_another_writers_lock_from_its_own(
    ws: Workspace,
) -> None:
    data = bound(ws)
    with Session.open(ws.root) as session:
        session.let_go_of_lock_bytes()
        assert session.lock_bytes is None
        assert session.reads_as_seen(data)  # control: what it read
        assert not session.reads_as_seen(data + b"\n")
        assert not session.reads_as_seen(None)  # the file removed
        with session.writing("a test"):
            assert session.lock_bytes == data  # a writer has the bytes it replaces
        assert session.lock_bytes is None
