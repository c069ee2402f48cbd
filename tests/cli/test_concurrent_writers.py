"""No lost updates (issue 9.1): writers take the workspace write lock, re-read moor.lock under
it, and wait (then refuse, clearly) while another holds it — real processes throughout."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from moor_store.lockfile import parse_lock

from tests.conftest import Workspace

CODE = "".join(
    f"def f{i}(x):\n    total = x * {i} + {i}\n    return [total, total + 1, total + 2, x]\n\n"
    for i in range(8)
)


def _drift_all(ws: Workspace, count: int) -> None:
    ws.write("app.py", CODE)
    for i in range(count):
        ws.memory(f"m{i}", f"app.py#f{i}")
    ws.moor("bind", check=True)
    ws.write("app.py", CODE.replace("+ 2, x]", "+ 3, x]"))


def _start(ws: Workspace, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    import os

    return subprocess.Popen(
        [sys.executable, "-m", "moor", *args],
        cwd=ws.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


def _locked_addresses(ws: Workspace) -> dict[str, str]:
    lock = parse_lock(ws.read("moor.lock"))
    return {
        path: next(iter(memory.anchors.values())).address for path, memory in lock.memories.items()
    }


def test_eight_reaffirms_at_once_each_keep_their_update(ws: Workspace) -> None:
    _drift_all(ws, 8)
    before = _locked_addresses(ws)
    assert ws.moor("check").code == 1  # control: every memory drifted, so each has a change
    procs = [_start(ws, "reaffirm", f"memories/m{i}.md", "--why", f"reason {i}") for i in range(8)]
    results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    assert all(code == 0 for code, _ in results), results
    after = _locked_addresses(ws)
    assert all(after[f"memories/m{i}.md"] != before[f"memories/m{i}.md"] for i in range(8))
    assert ws.moor("check").code == 0
    for i in range(8):
        log = ws.moor("log", f"memories/m{i}.md").out
        assert f"reason {i}" in log


def test_a_bind_and_reaffirms_at_once_lose_nothing(ws: Workspace) -> None:
    _drift_all(ws, 4)
    for i in range(4, 8):
        ws.memory(f"m{i}", f"app.py#f{i}")  # new, unbound: the bind's work
    procs = [_start(ws, "bind")] + [
        _start(ws, "reaffirm", f"memories/m{i}.md", "--why", f"reason {i}") for i in range(4)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    assert set(_locked_addresses(ws)) == {f"memories/m{i}.md" for i in range(8)}
    assert ws.moor("check").code == 0


HOLD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from moor_store.writelock import write_lock
    with write_lock(Path(sys.argv[1]), "moor test-holder"):
        print("held", flush=True)
        sys.stdin.readline()
    """
)


def test_a_writer_waits_for_the_lock_then_refuses_naming_the_holder(ws: Workspace) -> None:
    _drift_all(ws, 1)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(ws.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        lock_before = ws.read("moor.lock")
        refused = ws.moor(
            "reaffirm", "memories/m0.md", "--why", "x", env={"MOOR_WRITE_WAIT": "0.5"}, process=True
        )
        assert refused.code == 2
        assert "waiting for another moor process" in refused.err
        assert f"pid {holder.pid}" in refused.err and "moor test-holder" in refused.err
        assert "nothing was changed" in refused.err
        assert ws.read("moor.lock") == lock_before
        waiting = _start(ws, "reaffirm", "memories/m0.md", "--why", "after the holder")
        assert waiting.stderr is not None
        assert "waiting for" in waiting.stderr.readline()  # it waits, as a writer should
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    assert waiting.wait(timeout=60) == 0  # control: once released, the same write goes through
    assert ws.read("moor.lock") != lock_before
    assert ws.moor("check").code == 0


def test_a_killed_holder_never_leaves_the_workspace_locked(ws: Workspace) -> None:
    _drift_all(ws, 1)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(ws.root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    held = ws.moor(
        "reaffirm", "memories/m0.md", "--why", "x", env={"MOOR_WRITE_WAIT": "0"}, process=True
    )
    assert held.code == 2  # control: the lock was really held
    holder.kill()
    holder.wait(timeout=30)
    ws.moor("reaffirm", "memories/m0.md", "--why", "x", env={"MOOR_WRITE_WAIT": "0"}, check=True)
    assert (Path(ws.root) / ".moor/write.lock").exists()
