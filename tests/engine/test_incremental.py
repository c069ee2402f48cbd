"""The parse cache: a warm check reads and parses nothing; only changed bytes are re-parsed."""

from __future__ import annotations

import os
from pathlib import Path

from moor_engine.grounding.actions import bind
from moor_engine.session import Session

CODE = "class A:\n    def f(self):\n        return 1\n\n\ndef g():\n    return 2\n"


def age(root: Path) -> None:
    """Files written seconds ago, as in a real repository (fresh ones are re-hashed)."""
    for path in root.rglob("*.py"):
        os.utime(path, ns=(10**18, 10**18))


def make_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "memories").mkdir()
    (root / "src/a.py").write_text(CODE, encoding="utf-8")
    (root / "src/b.py").write_text("def h():\n    return 3\n", encoding="utf-8")
    for name, ref in [("f", "src/a.py#A.f"), ("g", "src/a.py#g"), ("h", "src/b.py#h")]:
        (root / f"memories/{name}.md").write_text(
            f"---\nabout: {ref}\n---\n# {name}\n", encoding="utf-8"
        )
    age(root)
    with Session.open(root) as session:
        assert not bind(session, []).refused
    return root


def check(root: Path) -> tuple[list[str], int, set[str]]:
    with Session.open(root) as session:
        report = session.check(session.select([]))
        return (
            [m.state.value for m in report.memories],
            session.observer.parse_count,
            set(session.observer.reread),
        )


def test_a_warm_check_reads_and_parses_nothing(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    states, parses, reread = check(root)
    assert states == ["current", "current", "current"]
    assert parses == 0 and reread == set()
    # Control: after the cache is gone the same check must parse both files.
    (root / ".moor/journal.sqlite").unlink()
    for suffix in ("-wal", "-shm"):
        (root / f".moor/journal.sqlite{suffix}").unlink(missing_ok=True)
    states, parses, _ = check(root)
    assert states == ["current", "current", "current"]
    assert parses == 2


def test_a_file_changed_within_its_timestamp_tick_is_still_seen(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    (root / "src/a.py").write_text(CODE, encoding="utf-8")  # fresh: racily clean
    info = (root / "src/a.py").stat()
    assert check(root)[0] == ["current", "current", "current"]
    # Same size, same mtime, different bytes: only a re-hash can notice.
    (root / "src/a.py").write_text(CODE.replace("return 2", "return 3"), encoding="utf-8")
    os.utime(root / "src/a.py", ns=(info.st_atime_ns, info.st_mtime_ns))
    assert check(root)[0] == ["current", "drifted", "current"]


def test_a_touched_but_unchanged_file_is_read_but_not_parsed(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    os.utime(root / "src/a.py", ns=(2 * 10**18, 2 * 10**18))
    states, parses, reread = check(root)
    assert states == ["current", "current", "current"]
    assert reread == {"src/a.py"} and parses == 0
    # Control: a real byte change in the same file is parsed, once, and only that file.
    # (Aged by hand: `age` would touch b.py too, and a touched file is read again.)
    (root / "src/a.py").write_text(CODE.replace("return 2", "return 20"), encoding="utf-8")
    os.utime(root / "src/a.py", ns=(10**18, 10**18))
    states, parses, reread = check(root)
    assert states == ["current", "drifted", "current"]
    assert reread == {"src/a.py"} and parses == 1


def test_a_warm_check_of_overloads_and_a_spelled_overload_parses_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "memories").mkdir()
    (root / "src/R.java").write_text(
        "class R {\n    int get(int a) { return a; }\n    int get(String s) { return 0; }\n}\n",
        encoding="utf-8",
    )
    for name, ref in [("all", "src/R.java#R.get"), ("one", "src/R.java#R.get(String)")]:
        (root / f"memories/{name}.md").write_text(
            f"---\nabout: {ref}\n---\n# {name}\n", encoding="utf-8"
        )
    os.utime(root / "src/R.java", ns=(10**18, 10**18))
    with Session.open(root) as session:
        assert not bind(session, []).refused
    states, parses, reread = check(root)
    assert states == ["current", "current"]
    assert parses == 0 and reread == set()
    # Control: with the cache gone, knowing what `R.get` means takes a parse.
    (root / ".moor/journal.sqlite").unlink()
    for suffix in ("-wal", "-shm"):
        (root / f".moor/journal.sqlite{suffix}").unlink(missing_ok=True)
    states, parses, _ = check(root)
    assert states == ["current", "current"]
    assert parses == 1
