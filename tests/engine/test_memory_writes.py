"""The write path's engine surface: structured results, and the hook an index listens on."""

from __future__ import annotations

from moor_engine.memory.latch_actions import forget
from moor_engine.memory.memory_writes import AFTER_WRITE, Draft, add
from moor_engine.session import Session
from moor_engine.written import Written

from tests.conftest import Workspace


def test_every_landed_write_calls_the_after_write_hook_and_a_refused_one_does_not(
    ws: Workspace,
) -> None:
    ws.write("src/a.py", "def send(body):\n    return body\n")
    seen: list[tuple[str, str | None]] = []

    def hook(_session: Session, written: Written) -> None:
        seen.append((written.action, written.path))

    AFTER_WRITE.append(hook)
    try:
        with Session.open(ws.root) as session:
            landed = add(session, Draft("Send returns its body", about=["src/a.py#send"]))
            refused = add(session, Draft("Send returns its body", about=["src/a.py#send"]))
            gone = forget(session, str(landed.path), "wrong")
    finally:
        AFTER_WRITE.remove(hook)

    assert landed.ok and gone.ok
    assert [r.code for r in refused.refused] == ["exists"]  # control: this one wrote nothing
    assert seen == [("add", landed.path), ("forget", landed.path)]
    assert landed.as_json()["content_hash"] == landed.content_hash
