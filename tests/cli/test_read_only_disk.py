"""A read-only workspace can still be read (issue 20.3, 20.8): on a read-only filesystem
every read answers as it does on a writable copy (the control), saying on stderr that
nothing is recorded; every write refuses with exit 2 naming the read-only filesystem and
changes nothing, and succeeds once the filesystem is writable again (its control)."""

from __future__ import annotations

import shutil

import pytest

from tests.cli.disks import Disk, snapshot
from tests.conftest import Workspace

REASON = "the reason we must keep"

READS = {
    "status": ["status"],
    "check": ["check"],
    "check json": ["check", "--format", "json"],
    "log": ["log", "memories/f.md"],
    "recall": ["recall", "retries"],
    "about": ["about", "app.py"],
    "context": ["context"],
    "rules": ["rules"],
}

WRITES = {
    "bind": ["bind", "memories/h.md"],
    "reaffirm": ["reaffirm", "memories/g.md", "--why", "still holds"],
    "add": ["add", "Retries are safe.", "--about", "app.py#f"],
    "edit": ["edit", "memories/f.md", "--section", "When this changes, ask", "--text", "- Now?"],
    "forget": ["forget", "memories/f.md", "--why", "no longer true"],
    "supersede": ["supersede", "memories/f.md", "--by", "memories/g.md", "--why", "g says it"],
    "restore": ["restore", "memories/wrong.md", "--why", "it did hold"],
    "pin": ["pin", "memories/g.md", "--why", "always read it"],
    "checkpoint save": ["checkpoint", "save", "--agent", "a", "where it stands"],
    "context --write": ["context", "--write", "CLAUDE.md"],
    "rules --write": ["rules", "--write"],
}


def _workspace(disk: Disk) -> Workspace:
    """Current, drifted, unbound and forgotten memories, and a reason in the journal."""
    ws = disk.workspace()
    ws.write("app.py", "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x - 1\n")
    ws.memory("f", "app.py#f", body="Retries of f are safe.")
    ws.memory("g", "app.py#g", body="g never returns a negative number.")
    ws.memory("wrong", "app.py#g", body="g is never called with retries.")
    ws.moor("bind", check=True)
    ws.moor("forget", "memories/wrong.md", "--why", "it never held", check=True)
    ws.write("app.py", "def f(x):\n    return x + 2\n\n\ndef g(x):\n    return x - 1\n")
    ws.moor("reaffirm", "memories/f.md", "--why", REASON, check=True)
    ws.write("app.py", "def f(x):\n    return x + 2\n\n\ndef g(x):\n    return x - 2\n")
    ws.memory("h", "app.py#g", body="h is new, not bound yet.")
    ws.moor("log", "memories/f.md", check=True)  # the journal at rest, its WAL folded in
    return ws


def test_every_read_on_a_read_only_disk_answers_as_on_a_writable_copy(disk: Disk) -> None:
    ws = _workspace(disk)
    copy = Workspace(disk.mount.parent / "copy")
    shutil.copytree(ws.root, copy.root)
    disk.read_only()

    for name, command in READS.items():
        control = copy.moor(*command)
        run = ws.moor(*command)
        assert control.code in (0, 1), (name, control.err)
        assert (run.code, run.out) == (control.code, control.out), (name, run.err)
        assert "read-only filesystem" in run.err and "records nothing" in run.err, (name, run.err)
        assert "read-only" not in control.err, (name, control.err)
    assert REASON in ws.moor("log", "memories/f.md").out
    assert "drifted" in ws.moor("check").out  # a verdict, not a blank report


def _command(ws: Workspace, write: str) -> list[str]:
    if write != "edit":
        return WRITES[write]
    shown = ws.moor("edit", "memories/f.md", "--format", "json", check=True).json()
    return [*WRITES[write], "--base-hash", str(shown["content_hash"])]


@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_write_on_a_read_only_disk_refuses_and_changes_nothing(
    disk: Disk, write: str
) -> None:
    ws = _workspace(disk)
    command = _command(ws, write)
    before = snapshot(ws.root)
    disk.read_only()

    run = ws.moor(*command)
    assert run.code == 2, (run.code, run.out, run.err)
    assert "read-only filesystem" in run.err, run.err
    assert "internal error" not in run.err and "aside" not in run.err, run.err
    disk.writable()
    assert snapshot(ws.root) == before

    # The control: writable again, the same write changes the workspace.
    done = ws.moor(*command)
    assert done.code == 0, (done.out, done.err)
    assert snapshot(ws.root) != before
