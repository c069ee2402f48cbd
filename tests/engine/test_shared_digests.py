"""A long-lived check holds each digest once: moor.lock's and the observed facts' are one
string (memory an-editor-keeps-only-what-its-next-check-needs; ~15 MiB at 10,000)."""

from __future__ import annotations

from moor_engine import session as session_module
from moor_engine.grounding.actions import bind
from moor_engine.grounding.observe import Found
from moor_engine.session import Session

from tests.conftest import Workspace


def test_a_current_anchors_digests_are_one_string_in_the_lock_and_in_its_facts(
    ws: Workspace,
) -> None:
    ws.write("src/a.py", "def g():\n    return 2\n\n\ndef h():\n    return 3\n")
    ws.memory("retry", "src/a.py#g")
    with Session.open(ws.root) as session:
        assert not bind(session, []).refused
    session_module._last_parsed = None  # moor.lock read from its bytes, as a new process does

    with Session.open(ws.root) as session:  # the facts come from the parse cache
        evaluation = session.evaluate(session.select([]))
        locked = session.lock.memories["memories/retry.md"].anchors["src/a.py#g"]
        found = evaluation.observations["src/a.py#g"]
        assert isinstance(found, Found)
        assert dict(found.facts.axes) == dict(locked.axes)  # control: the same digests
        assert found.address == locked.address
        shared = [axis for axis in locked.axes if found.facts.axes[axis] is locked.axes[axis]]
        assert shared == list(locked.axes)
