"""What an anchor report tells an editor: where the reference starts and ends."""

from __future__ import annotations

from pathlib import Path

from moor_engine.session import Session


def test_an_anchor_report_spans_its_reference_text(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memories").mkdir(parents=True)
    (root / "a.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    text = '---\nabout:\n  - "a.py#f"\n  - a.py#missing\n---\n# F\n'
    (root / "memories/f.md").write_text(text, encoding="utf-8")
    with Session.open(root) as session:
        report = session.check(session.select([]))
        assert session.last_evaluation is not None
    first, second = report.memories[0].anchors
    line = text.splitlines()[2]
    assert (first.line, first.end_line) == (3, 3)
    assert line[first.column - 1 : first.end_column - 1] == '"a.py#f"'
    # Control: the other reference has its own, different span.
    assert (second.line, second.column) == (4, 5)
    assert second.end_column - second.column == len("a.py#missing")
