"""What a check writes to the journal: transitions once, attempts without repeats."""

from __future__ import annotations

from pathlib import Path

from moor_engine.grounding.actions import bind
from moor_engine.grounding.trust import SEVERITY_ORDER, State, worst
from moor_engine.session import Session
from moor_store.journal import Journal

CODE = "def g():\n    return 2\n"


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "memories").mkdir()
    (root / "src/a.py").write_text(CODE, encoding="utf-8")
    (root / "memories/g.md").write_text("---\nabout: src/a.py#g\n---\n# g\n", encoding="utf-8")
    with Session.open(root) as session:
        assert not bind(session, []).refused
    return root


def kinds(root: Path) -> list[tuple[str, str | None]]:
    with Journal(root / ".moor/journal.sqlite") as journal:
        return [(e.kind, e.code) for e in journal.entries(anchor="src/a.py#g")]


def run_check(root: Path) -> str:
    with Session.open(root) as session:
        return session.check(session.select([])).memories[0].state.value


def test_a_drift_is_journalled_once_however_often_it_is_checked(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    assert run_check(root) == "current"
    assert kinds(root) == [("open", "bind")]
    (root / "src/a.py").write_text(CODE.replace("2", "3"), encoding="utf-8")
    for _ in range(3):
        assert run_check(root) == "drifted"
    assert kinds(root) == [("open", "bind"), ("transition", "drifted")]


def test_a_persistent_failure_is_one_attempt_and_recovery_is_a_still(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    (root / "src/a.py").write_bytes(b"def g():\n    return '\xff'\n")
    for _ in range(3):
        assert run_check(root) == "unverified"
    assert kinds(root) == [("open", "bind"), ("attempt", "invalid_utf8")]
    (root / "src/a.py").write_text(CODE, encoding="utf-8")
    assert run_check(root) == "current"
    assert kinds(root) == [("open", "bind"), ("attempt", "invalid_utf8"), ("still", None)]


def test_worst_state_wins_in_the_documented_order() -> None:
    assert [s.value for s in SEVERITY_ORDER] == [
        "invalid", "retired", "gone", "drifted", "moved", "rewritten",
        "unverified", "unbound", "ungrounded", "current",
    ]  # fmt: skip
    assert worst([State.CURRENT, State.UNBOUND, State.DRIFTED]) == State.DRIFTED
    assert worst([State.MOVED, State.GONE]) == State.GONE
    assert worst([]) == State.CURRENT
