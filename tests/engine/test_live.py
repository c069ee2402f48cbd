"""LiveCheck: an editor's incremental check must say what a full check says, cheaper."""

from __future__ import annotations

import gc
import os
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from moor_engine.grounding.actions import bind, reaffirm
from moor_engine.grounding.live import LiveCheck
from moor_engine.grounding.observe import FileView
from moor_engine.session import Session
from moor_store.journal import Journal

from tests.conftest import Workspace

CODE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n\n\ndef h():\n    return 3\n"


def age(root: Path) -> None:
    """Files written long ago, as in a real repository (fresh ones are re-hashed)."""
    for path in root.rglob("*"):
        if path.is_file() and ".moor" not in path.parts:
            os.utime(path, ns=(10**18, 10**18))


def setup(ws: Workspace) -> None:
    ws.write("src/a.py", CODE)
    ws.write("src/b.py", "def k():\n    return 4\n")
    for name in ("f", "g", "h"):
        ws.memory(name, f"src/a.py#{name}")
    ws.memory("k", "src/b.py#k")
    age(ws.root)
    with Session.open(ws.root) as session:
        assert not bind(session, []).refused


@pytest.fixture
def live(ws: Workspace) -> Iterator[LiveCheck]:
    """A live check of the `setup` workspace, after its first (full) refresh."""
    setup(ws)
    check = LiveCheck(ws.root)
    states(check, None)
    yield check
    check.close()


def states(live: LiveCheck, changed: set[str] | None) -> dict[str, str]:
    refreshed = live.refresh(changed)
    return {m.path: m.state.value for m in refreshed.report.memories}


def journal_kinds(ws: Workspace, anchor: str) -> list[str]:
    with Journal(ws.root / ".moor/journal.sqlite") as journal:
        return [e.kind for e in journal.entries() if e.anchor == anchor]


def test_an_edited_code_file_re_observes_only_its_anchors_and_agrees_with_a_full_check(
    ws: Workspace,
) -> None:
    setup(ws)
    live = LiveCheck(ws.root)
    assert set(states(live, None).values()) == {"current"}
    assert live.last_reobserved == 4  # the first refresh is a full check
    ws.write("src/a.py", CODE.replace("return 2", "return 20"))
    now = states(live, {"src/a.py"})
    assert now["memories/g.md"] == "drifted"
    assert now["memories/f.md"] == now["memories/h.md"] == now["memories/k.md"] == "current"
    assert live.last_reobserved == 3  # f, g, h: not k, whose file did not change
    assert live.verify() == []
    live.close()


def test_verify_catches_a_live_check_that_was_not_told_of_a_change(
    ws: Workspace, live: LiveCheck
) -> None:
    ws.write("src/b.py", "def k():\n    return 40\n")
    states(live, {"src/a.py"})  # told of the wrong file
    problems = live.verify()
    assert len(problems) == 1 and problems[0].startswith("memories/k.md: live current")
    # Told of the right file, it agrees again.
    assert states(live, {"src/b.py"})["memories/k.md"] == "drifted"
    assert live.verify() == []


def test_only_the_edited_definition_is_normalised_again(ws: Workspace, live: LiveCheck) -> None:
    ws.write("src/a.py", CODE.replace("return 3", "return 30"))
    states(live, {"src/a.py"})
    assert live.session is not None
    view = live.session.observer.view("src/a.py")
    assert isinstance(view, FileView)
    assert view.normalised == 1  # h; f and g are known by their unchanged bytes
    # Control: with nothing known of the file, all three are normalised.
    (ws.root / ".moor/journal.sqlite").unlink()
    fresh = LiveCheck(ws.root)
    states(fresh, None)
    assert fresh.session is not None
    cold = fresh.session.observer.view("src/a.py")
    assert isinstance(cold, FileView) and cold.normalised == 3
    fresh.close()


def test_an_edit_above_a_definition_that_shifts_it_reuses_its_facts_and_keeps_it_current(
    ws: Workspace, live: LiveCheck
) -> None:
    ws.write("src/a.py", "import os\n\n\n" + CODE)
    assert set(states(live, {"src/a.py"}).values()) == {"current"}
    assert live.verify() == []
    # Control: a comment moved into a docstring position would change g's doc, not body:
    # still current; a change of g's code drifts it.
    ws.write("src/a.py", "import os\n\n\n" + CODE.replace("return 2", "return 2 + 0"))
    assert states(live, {"src/a.py"})["memories/g.md"] == "drifted"
    assert live.verify() == []


def calls_to(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    """The first argument (a language) of every call the observer makes to its `name`
    (`parse_source`, `file_facts`) from now on; the real function still runs."""
    import moor_engine.grounding.observe

    real = getattr(moor_engine.grounding.observe, name)
    made: list[str] = []

    def spy(language: str | None, *args: Any) -> Any:
        made.append(str(language))
        return real(language, *args)

    monkeypatch.setattr(moor_engine.grounding.observe, name, spy)
    return made


def test_a_file_parsed_ahead_is_not_parsed_again_unless_it_changed_since(
    ws: Workspace, live: LiveCheck, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses = calls_to(monkeypatch, "parse_source")
    ws.write("src/a.py", CODE.replace("return 2", "return 20"))
    assert live.prepare({"src/a.py", "src/none.py", "memories/g.md"}) == 1
    assert len(parses) == 1
    assert states(live, {"src/a.py"})["memories/g.md"] == "drifted"
    assert len(parses) == 1  # the refresh used the parse made ahead
    # Parsed ahead, then written again before the refresh: the newer bytes are observed.
    ws.write("src/a.py", CODE.replace("return 3", "return 30"))
    assert live.prepare({"src/a.py"}) == 1
    ws.write("src/a.py", CODE.replace("return 1", "return 10"))
    now = states(live, {"src/a.py"})
    assert (now["memories/f.md"], now["memories/g.md"], now["memories/h.md"]) == (
        "drifted",
        "current",
        "current",
    )
    assert len(parses) == 3
    assert live.verify() == []  # (which parses every file again, from scratch)
    # Bytes already parsed are not parsed ahead again.
    assert live.prepare({"src/a.py"}) == 0


def test_a_whole_file_memory_is_normalised_ahead_too(
    ws: Workspace, live: LiveCheck, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws.memory("whole", "src/b.py")
    with Session.open(ws.root) as session:
        assert not bind(session, [str(ws.root / "memories/whole.md")]).refused
    assert states(live, {"memories/whole.md", "moor.lock"})["memories/whole.md"] == "current"
    made = calls_to(monkeypatch, "file_facts")
    ws.write("src/b.py", "def k():\n    return 40\n")
    assert live.prepare({"src/b.py"}) == 1 and made == ["python"]
    now = states(live, {"src/b.py"})
    assert now["memories/whole.md"] == now["memories/k.md"] == "drifted"
    assert made == ["python"]  # the refresh used the facts made ahead
    assert live.verify() == []


def test_memory_files_created_edited_and_deleted_are_picked_up(
    ws: Workspace, live: LiveCheck
) -> None:
    ws.memory("new", "src/b.py#k")
    assert states(live, {"memories/new.md"})["memories/new.md"] == "unbound"
    ws.memory("f", "src/a.py#missing")
    assert states(live, {"memories/f.md"})["memories/f.md"] == "gone"
    (ws.root / "memories/h.md").unlink()
    assert "memories/h.md" not in states(live, {"memories/h.md"})
    assert live.verify() == []


def test_a_lock_rewritten_by_another_process_is_read_again(ws: Workspace, live: LiveCheck) -> None:
    ws.write("src/b.py", "def k():\n    return 40\n")
    assert states(live, {"src/b.py"})["memories/k.md"] == "drifted"
    with Session.open(ws.root) as session:  # `moor reaffirm` in a terminal
        assert not reaffirm(session, str(ws.root / "memories/k.md"), "fine").refused
    assert states(live, {"moor.lock"})["memories/k.md"] == "current"
    assert live.verify() == []


def test_gone_code_is_found_again_when_another_file_gains_it(
    ws: Workspace, live: LiveCheck
) -> None:
    ws.write("src/b.py", "")
    # Emptied long ago, not just now (a file emptied just now may be a save's first step).
    os.utime(ws.root / "src/b.py", ns=(10**18, 10**18))
    assert states(live, {"src/b.py"})["memories/k.md"] == "gone"
    ws.write("src/c.py", "def k():\n    return 4\n")
    assert states(live, {"src/c.py"})["memories/k.md"] == "moved"
    assert live.verify() == []


def test_drift_is_journalled_as_moor_check_would(ws: Workspace, live: LiveCheck) -> None:
    live.commit()
    before = journal_kinds(ws, "src/a.py#g")
    ws.write("src/a.py", CODE.replace("return 2", "return 20"))
    states(live, {"src/a.py"})
    live.commit()
    assert journal_kinds(ws, "src/a.py#g") == [*before, "transition"]
    assert journal_kinds(ws, "src/a.py#f")[-1] == "still"  # its file changed, it held


def test_an_unsaved_buffer_previews_drift_without_writing_the_journal_or_the_lock(
    ws: Workspace, live: LiveCheck
) -> None:
    live.commit()
    lock = (ws.root / "moor.lock").read_bytes()
    before = journal_kinds(ws, "src/a.py#g")
    edited = CODE.replace("return 2", "return 20").encode()
    assert live.set_overlay("src/a.py", edited)
    refreshed = live.refresh({"src/a.py"})
    assert {m.path: m.state.value for m in refreshed.report.memories}["memories/g.md"] == (
        "drifted"
    )
    assert refreshed.overlaid == {"src/a.py"}
    assert live.verify() == []
    live.commit()
    assert journal_kinds(ws, "src/a.py#g") == before
    assert (ws.root / "moor.lock").read_bytes() == lock
    # Closing the buffer unsaved: the file on disk holds again.
    assert live.set_overlay("src/a.py", None)
    assert states(live, {"src/a.py"})["memories/g.md"] == "current"
    # Control: the same edit saved is journalled.
    (ws.root / "src/a.py").write_bytes(edited)
    states(live, {"src/a.py"})
    live.commit()
    assert journal_kinds(ws, "src/a.py#g") == [*before, "transition"]


def test_random_edits_keep_the_live_check_equal_to_a_full_one(
    ws: Workspace, live: LiveCheck
) -> None:
    rng = random.Random(20261201)
    edits: list[tuple[str, Callable[[], str]]] = [
        ("src/a.py", lambda: CODE.replace("return 1", f"return {rng.randint(0, 3)}")),
        ("src/a.py", lambda: "# header\n" * rng.randint(0, 3) + CODE),
        ("src/a.py", lambda: CODE.replace("def h", "def h2")),
        ("src/b.py", lambda: f"def k():\n    return {rng.randint(3, 5)}\n"),
        ("src/b.py", lambda: ""),
        ("src/c.py", lambda: "def k():\n    return 4\n" if rng.random() < 0.5 else ""),
        ("memories/g.md", lambda: f"---\nabout: src/a.py#{rng.choice('fgh')}\n---\n# g\n"),
    ]
    for _ in range(40):
        rel, text = rng.choice(edits)
        ws.write(rel, text())
        changed = {rel}
        if rng.random() < 0.5:  # as an editor does while the change settles
            live.prepare(changed)
            if rng.random() < 0.3:  # … and a file is written again meanwhile
                rel, text = rng.choice(edits)
                ws.write(rel, text())
                changed.add(rel)
        live.refresh(changed)
        assert live.verify() == []


def kept_trees(live: LiveCheck, *paths: str) -> set[str]:
    assert live.session is not None
    views = {rel: live.session.observer.view(rel) for rel in paths}
    return {rel for rel, v in views.items() if isinstance(v, FileView) and v.latest_parse()}


@pytest.mark.parametrize("budget", [1, 1 << 20])
def test_the_trees_kept_between_edits_fit_a_byte_budget_the_newest_file_always(
    ws: Workspace, live: LiveCheck, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    monkeypatch.setattr("moor_engine.grounding.live.KEEP_TREE_BYTES", budget)
    ws.write("src/a.py", CODE.replace("return 2", "return 20"))
    states(live, {"src/a.py"})
    ws.write("src/b.py", "def k():\n    return 40\n")
    states(live, {"src/b.py"})
    live.commit()
    # The newest file's tree is kept whatever its size; the one before it only within the
    # budget (the control: a budget both fit in keeps both).
    expected = {"src/b.py"} if budget == 1 else {"src/a.py", "src/b.py"}
    assert kept_trees(live, "src/a.py", "src/b.py") == expected


def strings_holding(marker: str) -> int:
    """How many strings reachable from a tracked object hold `marker` (beside the marker
    itself, which the caller holds)."""
    gc.collect()
    return sum(
        1
        for holder in gc.get_objects()
        for item in gc.get_referents(holder)
        if isinstance(item, str) and marker in item and item != marker
    )


def test_a_long_lived_check_keeps_no_memory_body(ws: Workspace) -> None:
    marker = "zebra-quartz-body-marker"
    ws.write("src/a.py", CODE)
    ws.memory("f", "src/a.py#f")
    ws.write("memories/f.md", ws.read("memories/f.md") + f"\n{marker} " * 50 + "\n")
    with Session.open(ws.root) as session:
        assert not bind(session, []).refused
    with Session.open(ws.root) as session:
        evaluation = session.checker.evaluate(session.select([]))
        # Control: what a check loads holds the body, where the search can see it.
        assert strings_holding(marker) > 0
        del evaluation
    live = LiveCheck(ws.root)
    assert states(live, None)["memories/f.md"] == "current"
    live.commit()
    ws.write("memories/f.md", ws.read("memories/f.md").replace(marker, marker + "!"))
    states(live, {"memories/f.md"})
    live.commit()
    assert strings_holding(marker) == 0
    assert live.verify() == []
    live.close()


def test_a_lock_written_again_while_it_is_being_read_is_read_once_more(
    ws: Workspace, live: LiveCheck, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock's stat must be the one from before the read: a stat taken after would
    vouch for bytes this check never read, and the next change event would be ignored."""
    ws.write("src/a.py", CODE.replace("return 2", "return 20"))
    ws.write("src/b.py", "def k():\n    return 40\n")
    now = states(live, {"src/a.py", "src/b.py"})
    assert now["memories/g.md"] == now["memories/k.md"] == "drifted"
    with Session.open(ws.root) as session:  # `moor reaffirm k` in a terminal
        assert not reaffirm(session, str(ws.root / "memories/k.md"), "fine").refused
    assert live.session is not None
    read_lock = live.session.read_lock

    def read_then_another_write() -> Any:
        read = read_lock()
        monkeypatch.setattr(live.session, "read_lock", read_lock)
        with Session.open(ws.root) as other:  # `moor reaffirm g`, just after the read
            assert not reaffirm(other, str(ws.root / "memories/g.md"), "fine too").refused
        return read

    monkeypatch.setattr(live.session, "read_lock", read_then_another_write)
    now = states(live, {"moor.lock"})
    # Control: the first write was read (the lock was reloaded), the second not yet.
    assert now["memories/k.md"] == "current" and now["memories/g.md"] == "drifted"
    # The watcher's event for the second write: the lock is read again.
    assert states(live, {"moor.lock"})["memories/g.md"] == "current"
    assert live.verify() == []


def test_a_lock_written_again_just_after_the_live_check_re_baselines_it_is_read_once_more(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`commit` re-baselines moor.lock (an older normaliser's); the lock's stat it keeps must
    be one of its own bytes: a stat taken after another writer's write would vouch for bytes
    this check never read, and that write's change event would be ignored."""
    setup(ws)
    lock = ws.read("moor.lock")
    older = re.sub(
        r'body = "[0-9a-f]+"', 'body = "' + "1" * 32 + '"', re.sub(r"norm/\d+", "norm/0", lock)
    )
    ws.write("moor.lock", older)  # as a moor with another normaliser wrote it
    ws.write("src/a.py", CODE.replace("return 2", "return 20"))
    live = LiveCheck(ws.root)
    assert states(live, None)["memories/g.md"] == "drifted"
    assert live.session is not None
    record = live.session.record

    def record_then_another_write(*args: Any) -> int:
        count = record(*args)
        monkeypatch.setattr(live.session, "record", record)
        assert count > 0  # control: this commit did write moor.lock (re-baselined)
        with Session.open(ws.root) as other:  # `moor reaffirm g`, just after the re-baseline
            assert not reaffirm(other, str(ws.root / "memories/g.md"), "fine").refused
        return count

    monkeypatch.setattr(live.session, "record", record_then_another_write)
    live.commit()
    assert "norm/0" not in ws.read("moor.lock")
    # The watcher's event for the other write: the lock is read again.
    assert states(live, {"moor.lock"})["memories/g.md"] == "current"
    assert live.verify() == []
    live.close()
