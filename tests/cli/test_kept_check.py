"""A check of every memory answered from the last one's kept report
(`moor_engine.kept_check`): only while nothing it rests on moved, with the same output, and
every change — to bound code, a memory, moor.lock, moor.toml; an edit that keeps the size
and the mtime; a file replaced by a link or a FIFO, or deleted — shows on the next check."""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from moor_engine import kept_check
from moor_engine import session as session_module
from moor_engine.workspace.workspace import Workspace as Place
from moor_store.lockfile import format_lock, parse_lock

from tests.cli.test_hook_answers import backdate
from tests.conftest import Workspace

CODE = "def alpha(x):\n    return x + 1\n\n\ndef beta(y):\n    return y * 2\n"


def prepared(ws: Workspace) -> Workspace:
    ws.write("src/code.py", CODE)
    ws.memory("a", "src/code.py#alpha", body="alpha adds one.")
    ws.memory("b", "src/code.py#beta", body="beta doubles.")
    ws.moor("bind", check=True)
    backdate(ws.root)
    return ws


@pytest.fixture
def kept(ws: Workspace) -> Workspace:
    """A bound workspace whose last check's report is kept and vouched for."""
    prepared(ws)
    ws.moor("check", check=True)
    assert kept_check.kept_report(Place.open(ws.root)) is not None
    return ws


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """The sessions opened meanwhile (a check answered from its kept report opens none)."""
    calls: list[Path] = []
    real = session_module.Session.open.__func__  # type: ignore[attr-defined]

    def spy(cls: type[session_module.Session], /, start: Path, **kw: bool) -> object:
        calls.append(start)
        return real(cls, start, **kw)

    monkeypatch.setattr(session_module.Session, "open", classmethod(spy))
    yield calls


def states(ws: Workspace) -> dict[str, str]:
    return {path: memory["state"] for path, memory in ws.states().items()}


def test_a_warm_check_with_nothing_changed_answers_from_the_kept_report_alike(
    ws: Workspace, opened: list[Path]
) -> None:
    prepared(ws)
    fresh = ws.moor("check", "--format", "json")
    assert opened, "control: the first check opens a session"
    assert kept_check.kept_report(Place.open(ws.root)) is not None
    opened.clear()
    for form in ("json", "text", "sarif"):
        again = ws.moor("check", "--format", form)
        (ws.root / kept_check.FILE).rename(ws.root / "kept.aside")
        made = ws.moor("check", "--format", form)
        (ws.root / "kept.aside").rename(ws.root / kept_check.FILE)
        assert (again.code, again.out, again.err) == (made.code, made.out, made.err), form
    assert ws.moor("check", "--format", "json").out == fresh.out
    assert len(opened) == 3, "only the three checks made without the kept report opened one"


def drift_alpha(ws: Workspace) -> None:
    ws.write("src/code.py", CODE.replace("x + 1", "x - 1000"))


def same_size_same_mtime(ws: Workspace) -> None:
    path = ws.root / "src/code.py"
    before = path.stat()
    path.write_text(CODE.replace("x + 1", "x - 1"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def replaced_by_link(ws: Workspace) -> None:
    ws.write("src/other.py", CODE.replace("x + 1", "x - 1"))
    (ws.root / "src/code.py").unlink()
    (ws.root / "src/code.py").symlink_to("other.py")


def replaced_by_fifo(ws: Workspace) -> None:
    (ws.root / "src/code.py").unlink()
    os.mkfifo(ws.root / "src/code.py")


def deleted(ws: Workspace) -> None:
    (ws.root / "src/code.py").unlink()


def memory_rewritten(ws: Workspace) -> None:
    path = ws.root / "memories/a.md"
    path.write_text(path.read_text().replace("alpha adds one.", "alpha adds two."))


def memory_deleted(ws: Workspace) -> None:
    (ws.root / "memories/b.md").unlink()


def memory_added(ws: Workspace) -> None:
    ws.memory("c", "src/code.py#beta", body="beta again.")


def lock_lost_a(ws: Workspace) -> None:
    lock = parse_lock(ws.read("moor.lock"))
    memories = {path: m for path, m in lock.memories.items() if path != "memories/a.md"}
    (ws.root / "moor.lock").write_text(format_lock(replace(lock, memories=memories)))


def config_ignores_b(ws: Workspace) -> None:
    (ws.root / "moor.toml").write_text('ignore = ["memories/b.md"]\n', encoding="utf-8")


def config_caps_file_size(ws: Workspace) -> None:
    (ws.root / "moor.toml").write_text("max_file_size = 10\n", encoding="utf-8")


def pyproject_caps_file_size(ws: Workspace) -> None:
    (ws.root / "moor.toml").unlink()  # the settings then come from pyproject.toml
    (ws.root / "pyproject.toml").write_text("[tool.moor]\nmax_file_size = 10\n")


CHANGES: dict[str, tuple[Callable[[Workspace], None], dict[str, str]]] = {
    "bound code edited": (drift_alpha, {"memories/a.md": "drifted"}),
    "same size, same mtime": (same_size_same_mtime, {"memories/a.md": "drifted"}),
    "bound file replaced by a link": (replaced_by_link, {"memories/a.md": "drifted"}),
    "bound file replaced by a FIFO": (replaced_by_fifo, {"memories/a.md": "unverified"}),
    "bound file deleted": (deleted, {"memories/a.md": "gone", "memories/b.md": "gone"}),
    "memory rewritten": (memory_rewritten, {"memories/a.md": "rewritten"}),
    "memory deleted": (memory_deleted, {"memories/b.md": "(none)"}),
    "memory added": (memory_added, {"memories/c.md": "unbound"}),
    "moor.lock changed": (lock_lost_a, {"memories/a.md": "unbound"}),
    "moor.toml ignores a memory": (config_ignores_b, {"memories/b.md": "(none)"}),
    "moor.toml caps the file size": (config_caps_file_size, {"memories/a.md": "unverified"}),
    "moor.toml gives way to pyproject.toml": (
        pyproject_caps_file_size,
        {"memories/a.md": "unverified"},
    ),
}


@pytest.mark.parametrize("name", CHANGES)
def test_each_change_shows_on_the_next_check(kept: Workspace, name: str) -> None:
    change, expected = CHANGES[name]
    before = states(kept)
    assert before == {"memories/a.md": "current", "memories/b.md": "current"}
    assert kept_check.kept_report(Place.open(kept.root)) is not None  # control: it vouches
    change(kept)
    after = states(kept)
    for path, state in expected.items():
        assert after.get(path, "(none)") == state, (name, after)
    # What the check answered is what a check from nothing answers.
    (kept.root / kept_check.FILE).unlink(missing_ok=True)
    assert states(kept) == after


def test_settings_in_pyproject_toml_changed_show_on_the_next_check(ws: Workspace) -> None:
    ws.write("pyproject.toml", "[tool.moor]\nmax_file_size = 100000\n")
    (ws.root / "moor.toml").unlink(missing_ok=True)
    prepared(ws)
    assert states(ws) == {"memories/a.md": "current", "memories/b.md": "current"}
    assert kept_check.kept_report(Place.open(ws.root)) is not None  # control: it vouches
    ws.write("pyproject.toml", "[tool.moor]\nmax_file_size = 10\n")
    assert states(ws)["memories/a.md"] == "unverified"


def test_a_file_changed_within_the_racy_window_is_never_vouched_for(ws: Workspace) -> None:
    prepared(ws)
    path = ws.root / "src/code.py"
    path.write_text(CODE.replace("x + 1", "x + 2"), encoding="utf-8")  # modified just now
    first = states(ws)
    assert first["memories/a.md"] == "drifted"
    assert kept_check.kept_report(Place.open(ws.root)) is None
    assert not (ws.root / kept_check.FILE).exists()
    # Control: the same workspace once the file is older than the window is kept.
    backdate(ws.root)
    assert states(ws) == first
    assert kept_check.kept_report(Place.open(ws.root)) is not None


def test_a_change_during_the_check_is_read_again_by_the_next_one(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file changed after the check read it carries a key newer than the check's start:
    kept, it would vouch for the old verdict."""
    prepared(ws)
    real = session_module.Session.evaluate

    def edited_meanwhile(self: session_module.Session, *args: object, **kw: object) -> object:
        evaluation = real(self, *args, **kw)  # type: ignore[arg-type]
        drift_alpha(ws)  # after it was read, before the report is kept
        return evaluation

    monkeypatch.setattr(session_module.Session, "evaluate", edited_meanwhile)
    assert states(ws)["memories/a.md"] == "current"
    monkeypatch.undo()
    assert kept_check.kept_report(Place.open(ws.root)) is None
    assert states(ws)["memories/a.md"] == "drifted"


def test_moor_lock_changed_during_the_check_is_read_again_by_the_next_one(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moor.lock is read when the session opens: one written after that, before the
    report is kept, must not vouch for a report of the old one."""
    prepared(ws)
    real = session_module.Session.evaluate

    def written_meanwhile(self: session_module.Session, *args: object, **kw: object) -> object:
        evaluation = real(self, *args, **kw)  # type: ignore[arg-type]
        lock_lost_a(ws)
        return evaluation

    monkeypatch.setattr(session_module.Session, "evaluate", written_meanwhile)
    assert states(ws)["memories/a.md"] == "current"
    monkeypatch.undo()
    assert kept_check.kept_report(Place.open(ws.root)) is None
    assert states(ws)["memories/a.md"] == "unbound"


def test_a_report_depending_on_a_search_of_the_tree_is_not_kept(ws: Workspace) -> None:
    prepared(ws)
    ws.write("src/code.py", CODE.replace("alpha", "renamed_alpha"))
    backdate(ws.root)
    assert states(ws)["memories/a.md"] in ("moved", "gone")
    assert kept_check.kept_report(Place.open(ws.root)) is None
    # Control: with the anchor back in place the report is kept.
    ws.write("src/code.py", CODE)
    backdate(ws.root)
    assert states(ws)["memories/a.md"] == "current"
    assert kept_check.kept_report(Place.open(ws.root)) is not None


@pytest.mark.parametrize(
    "content",
    [b"not json", b"[]", b'{"format": 1}', b'{"format": 999}', b"\xff\xfe", b""],
    ids=["garbage", "a list", "no keys", "another format", "not utf-8", "empty"],
)
def test_a_corrupt_kept_file_is_ignored(kept: Workspace, content: bytes) -> None:
    drift_alpha(kept)
    (kept.root / kept_check.FILE).write_bytes(content)
    run = kept.moor("check", "--format", "json")
    assert (run.code, run.err) == (1, "")
    assert {m["path"]: m["state"] for m in run.json()["memories"]}["memories/a.md"] == "drifted"


def test_a_kept_report_with_a_broken_report_inside_is_ignored(kept: Workspace) -> None:
    path = kept.root / kept_check.FILE
    document = json.loads(path.read_bytes())
    document["report"][0]["anchors"][0][1] = "no such state"
    path.write_text(json.dumps(document))
    assert kept_check.kept_report(Place.open(kept.root)) is None
    assert states(kept)["memories/a.md"] == "current"
    assert kept_check.kept_report(Place.open(kept.root)) is not None  # control: rewritten


def test_a_kept_report_copied_from_another_clone_vouches_for_nothing(
    kept: Workspace, tmp_path: Path
) -> None:
    other = Workspace(tmp_path / "other")
    shutil.copytree(kept.root, other.root, symlinks=True)
    (other.root / kept_check.FILE).unlink()
    drift_alpha(other)
    backdate(other.root)
    shutil.copy2(kept.root / kept_check.FILE, other.root / kept_check.FILE)
    assert kept_check.kept_report(Place.open(kept.root)) is not None  # control: it does here
    assert kept_check.kept_report(Place.open(other.root)) is None
    assert states(other)["memories/a.md"] == "drifted"


def test_a_fifo_in_place_of_the_kept_file_is_ignored(kept: Workspace) -> None:
    (kept.root / kept_check.FILE).unlink()
    os.mkfifo(kept.root / kept_check.FILE)
    started = time.monotonic()
    assert states(kept)["memories/a.md"] == "current"
    assert time.monotonic() - started < 60  # answered, not hung on the FIFO


def test_a_partial_check_neither_keeps_nor_answers_from_the_kept_report(kept: Workspace) -> None:
    drift_alpha(kept)
    backdate(kept.root)
    only_b = kept.states("memories/b.md")
    assert list(only_b) == ["memories/b.md"]
    assert states(kept)["memories/a.md"] == "drifted"
    assert kept_check.kept_report(Place.open(kept.root)) is not None  # control: kept now


def test_another_judge_vouches_for_nothing(
    kept: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moor's version, or any of its modules or grammars changed: a new judge."""
    place = Place.open(kept.root)
    monkeypatch.setattr(kept_check, "version", lambda: "999.0")
    assert kept_check.kept_report(place) is None
    monkeypatch.undo()
    assert kept_check.kept_report(place) is not None  # control
    module = Path(kept_check.__file__).with_name("usage.py")
    info = module.stat()
    os.utime(module, ns=(info.st_atime_ns, info.st_mtime_ns))  # the same times: a new ctime
    assert kept_check.kept_report(place) is None


def test_a_journal_set_aside_is_told_again_what_this_clone_saw(kept: Workspace) -> None:
    assert kept.journalled("memories/a.md", "open")  # control: the first check journalled it
    for suffix in ("", "-wal", "-shm"):
        (kept.root / f".moor/journal.sqlite{suffix}").unlink(missing_ok=True)
    assert kept_check.kept_report(Place.open(kept.root)) is None
    assert states(kept)["memories/a.md"] == "current"
    assert kept.journalled("memories/a.md", "open")


FUNCTIONS = ("alpha", "beta")


def random_edit(ws: Workspace, rng: random.Random) -> str:
    """One edit a person or a tool might make between two checks."""
    code = ws.root / "src/code.py"
    kind = rng.choice(["none", "none", "body", "same size", "restore", "memory", "bind", "touch"])
    if kind == "body":
        name = rng.choice(FUNCTIONS)
        ws.write("src/code.py", code.read_text().replace(f"def {name}(", f"def {name}(z, ", 1))
    elif kind == "same size" and code.read_text() == CODE:
        same_size_same_mtime(ws)
    elif kind == "restore":
        ws.write("src/code.py", CODE)
    elif kind == "memory":
        path = ws.root / f"memories/{rng.choice('ab')}.md"
        path.write_text(path.read_text().replace(".\n", ". Still.\n", 1))
    elif kind == "bind":
        ws.moor("bind")
    elif kind == "touch":
        os.utime(code)  # a new mtime, the same bytes
    if rng.random() < 0.6:
        backdate(ws.root)  # old enough to be vouched for by the next check
    return kind


@pytest.mark.parametrize("seed", range(3))
def test_a_kept_answer_is_always_the_answer_of_a_check_from_nothing(
    ws: Workspace, seed: int
) -> None:
    prepared(ws)
    ws.moor("check")
    rng = random.Random(seed)
    answered = 0
    for _step in range(14):
        kind = random_edit(ws, rng)
        vouched = kept_check.kept_report(Place.open(ws.root)) is not None
        kept = ws.moor("check", "--format", "json")
        (ws.root / kept_check.FILE).unlink(missing_ok=True)
        made = ws.moor("check", "--format", "json")
        assert (kept.code, kept.out) == (made.code, made.out), (seed, _step, kind, vouched)
        answered += vouched
    # The control: some checks were answered from the kept report, some were not.
    assert 0 < answered < 14, answered
