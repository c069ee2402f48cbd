"""moor.lock kept as the last process parsed it (`moor_engine.kept_lock`): the next process
builds the same `Lock` without parsing, only while the lock is the very file it parsed; a
changed lock is read again, and a kept file planted by a repository (or copied from another
clone) vouches for nothing."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from moor_engine import kept_lock
from moor_engine import session as session_module
from moor_store.lockfile import (
    Closure,
    Lock,
    LockedAnchor,
    LockedMemory,
    Restoration,
    Retirement,
    Tombstone,
    format_lock,
    parse_lock,
)

from tests.cli.test_hook_answers import backdate
from tests.conftest import Workspace

CODE = "def alpha(x):\n    return x + 1\n\n\ndef beta(y):\n    return y * 2\n"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """The locks parsed meanwhile (a lock built from the kept file is not parsed)."""
    calls: list[bytes] = []
    real = session_module._parse_new_lock

    def spy(workspace: object, data: bytes) -> Lock:
        calls.append(data)
        return real(workspace, data)  # type: ignore[arg-type]

    monkeypatch.setattr(session_module, "_parse_new_lock", spy)
    yield calls


def bound(ws: Workspace) -> Workspace:
    ws.write("src/code.py", CODE)
    ws.memory("a", "src/code.py#alpha", body="alpha adds one.")
    ws.memory("b", "src/code.py#beta", body="beta doubles.")
    ws.moor("bind", check=True)
    backdate(ws.root)
    return ws


def states(ws: Workspace) -> dict[str, str]:
    return {path: memory["state"] for path, memory in ws.states().items()}


def test_the_next_command_builds_the_lock_from_the_kept_file_without_parsing_it(
    ws: Workspace, parses: list[bytes]
) -> None:
    bound(ws)
    first = ws.moor("check", "--format", "json")
    assert len(parses) == 1  # control: the first reading parses moor.lock
    assert (ws.root / kept_lock.FILE).is_file()
    (ws.root / ".moor/kept-check.json").unlink()  # the check itself, not its kept report
    again = ws.moor("check", "--format", "json")
    assert len(parses) == 1, "the second command parsed moor.lock again"
    assert (again.code, again.out) == (first.code, first.out)
    data = (ws.root / "moor.lock").read_bytes()
    assert kept_lock.kept_lock(ws.root, data) == parse_lock(data.decode())


def hostile_lock() -> Lock:
    odd = 'q"uo\\te\t\x01 ✓ \U0001f600 [x] = "y"\n#'
    anchor = LockedAnchor(f"src/{odd}.py#f", "sha:1", "symbol/1 norm/3 python", "function")
    anchors = {
        anchor.ref: anchor,
        "src/a.py#C.m": LockedAnchor(
            "src/a.py#C.m", "a", "d", "method", {"body": "b1", "signature": odd, odd: "x"}
        ),
    }
    return Lock(
        memories={
            f"memories/{odd}.md": LockedMemory(f"memories/{odd}.md", "c1", anchors),
            "memories/plain.md": LockedMemory("memories/plain.md", "c2", {}),
        },
        tombstones=(Tombstone("c9", "memories/gone.md", odd, "2026-01-01T00:00:00.000Z"),),
        retired={"memories/old.md": Retirement("memories/old.md", "memories/plain.md", odd, "t")},
        restored={"memories/x.md": Restoration("memories/x.md", "memories/x.md", "r", "t")},
        closed={"anchor:roster": Closure("anchor:roster", "", odd, "t")},
    )


def test_a_kept_lock_is_the_lock_parsed_with_every_table_and_any_string(tmp_path: Path) -> None:
    lock = hostile_lock()
    data = format_lock(lock).encode()
    (tmp_path / ".moor").mkdir()
    (tmp_path / "moor.lock").write_bytes(data)
    backdate(tmp_path)
    assert kept_lock.kept_lock(tmp_path, data) is None  # control: nothing kept yet
    kept_lock.keep_lock(tmp_path, data, parse_lock(data.decode()), time.time_ns())
    read = kept_lock.kept_lock(tmp_path, data)
    assert read is not None
    parsed = parse_lock(data.decode())
    assert read == parsed == lock
    orders = [
        (p, list(m.anchors), [list(a.axes) for a in m.anchors.values()])
        for p, m in parsed.memories.items()
    ]
    assert orders == [
        (p, list(m.anchors), [list(a.axes) for a in m.anchors.values()])
        for p, m in read.memories.items()
    ]


def test_a_changed_lock_is_read_again_even_with_its_size_and_mtime_restored(
    ws: Workspace, parses: list[bytes]
) -> None:
    bound(ws)
    assert states(ws) == {"memories/a.md": "current", "memories/b.md": "current"}
    assert len(parses) == 1
    path = ws.root / "moor.lock"
    before = path.stat()
    text = path.read_text()
    lock = parse_lock(text)
    bound_a = lock.memories["memories/a.md"]
    # alpha's body bound as another digest, spelt with as many characters: the same size.
    body = bound_a.anchors["src/code.py#alpha"].axes["body"]
    changed = text.replace(body, body[:-1] + ("0" if body[-1] != "0" else "1"))
    assert changed != text and len(changed) == len(text)
    path.write_text(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert states(ws)["memories/a.md"] == "drifted"
    assert len(parses) == 2, "the changed lock was not parsed again"


def test_a_kept_lock_planted_by_a_repository_or_copied_from_a_clone_vouches_for_nothing(
    ws: Workspace, tmp_path: Path, parses: list[bytes]
) -> None:
    bound(ws)
    ws.moor("check", check=True)
    assert len(parses) == 1
    clone = Workspace(tmp_path / "clone")
    shutil.copytree(ws.root, clone.root, symlinks=True)
    # The clone's lock forgets memory b; the planted file says it was bound, and carries
    # the digest of the clone's bytes (anyone can compute it) and the original's keys.
    path = clone.root / "moor.lock"
    lock = parse_lock(path.read_text())
    lock = lock.without_memory("memories/b.md")
    data = format_lock(lock).encode()
    path.write_bytes(data)
    backdate(clone.root)
    planted = json.loads((ws.root / kept_lock.FILE).read_text())
    planted["digest"] = kept_lock.kept_digest(data)
    (clone.root / kept_lock.FILE).write_text(json.dumps(planted))
    (clone.root / ".moor/kept-check.json").unlink()
    original = (ws.root / "moor.lock").read_bytes()
    assert kept_lock.kept_lock(ws.root, original) is not None  # control: it vouches here
    assert kept_lock.kept_lock(clone.root, data) is None
    assert states(clone)["memories/b.md"] == "unbound"
    assert len(parses) == 2  # the clone's lock was parsed


def test_a_lock_written_within_the_racy_window_is_not_kept(
    ws: Workspace, parses: list[bytes]
) -> None:
    ws.write("src/code.py", CODE)
    ws.memory("a", "src/code.py#alpha")
    ws.moor("bind", check=True)  # moor.lock written just now
    ws.moor("check", check=True)
    assert not (ws.root / kept_lock.FILE).exists()
    backdate(ws.root)
    ws.moor("check", check=True)
    assert (ws.root / kept_lock.FILE).is_file()  # control: out of the window, it is kept


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: d.update(format=2),
        lambda d: d.update(key=[]),
        lambda d: d["memories"][0].__setitem__(1, 7),
        lambda d: d["memories"][0][2][0].__setitem__(4, {"body": 1}),
        lambda d: d["memories"].append(d["memories"][0]),
        lambda d: d.update(retired=[["only", "three", "strings"]]),
        lambda d: d.update(closed="not a list"),
        lambda d: d.pop("tombstones"),
        lambda d: d.update(judge=["999.0", []]),
    ],
)
def test_a_kept_file_this_code_did_not_write_is_ignored(
    ws: Workspace, parses: list[bytes], spoil: object
) -> None:
    bound(ws)
    ws.moor("check", check=True)
    path = ws.root / kept_lock.FILE
    data = (ws.root / "moor.lock").read_bytes()
    assert kept_lock.kept_lock(ws.root, data) is not None  # control
    document = json.loads(path.read_text())
    spoil(document)  # type: ignore[operator]
    path.write_text(json.dumps(document))
    assert kept_lock.kept_lock(ws.root, data) is None
    (ws.root / ".moor/kept-check.json").unlink()
    assert states(ws) == {"memories/a.md": "current", "memories/b.md": "current"}


def test_a_fifo_in_place_of_the_kept_file_is_ignored(ws: Workspace) -> None:
    bound(ws)
    os.mkfifo(ws.root / kept_lock.FILE)
    started = time.monotonic()
    assert states(ws)["memories/a.md"] == "current"
    assert time.monotonic() - started < 60  # answered, not hung on the FIFO


def test_a_look_that_changes_nothing_keeps_no_lock(ws: Workspace) -> None:
    bound(ws)
    (ws.root / ".moor").mkdir(exist_ok=True)
    backdate(ws.root)
    ws.moor("doctor")
    assert not (ws.root / kept_lock.FILE).exists()
    ws.moor("check", check=True)
    assert (ws.root / kept_lock.FILE).is_file()  # control: a check keeps it
