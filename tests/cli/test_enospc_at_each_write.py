"""A disk that fills part-way through an action (issue 20.8): ENOSPC is injected into each
write-like system call a real `moor reaffirm` / `moor add` makes in turn (`strace -e
inject=SYSCALL:error=ENOSPC:when=N`), after moor found room to start. Each run must end in
the state of the untouched workspace (a refusal, exit 2, naming the full disk) or of the
finished action (exit 0) — never half: no memory without its lock entry, no reason lost,
no temporary file or intent record left behind."""

from __future__ import annotations

import re
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.conftest import Workspace

SYSCALLS = ("write", "pwrite64", "fsync", "fdatasync", "ftruncate")
# At most this many injection points per action (spread over all of them): the test's time.
POINTS = 24


def _state(root: Path) -> tuple[object, ...]:
    """Files and journal rows, without what differs between two runs of the same action
    (an added memory's `created:` time, and so its content hash in moor.lock)."""
    files = {
        p.relative_to(root).as_posix(): re.sub(
            rb"created: '[^']*'|content = \"[0-9a-f]+\"", b"~", p.read_bytes()
        )
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".moor" not in p.parts
    }
    db = sqlite3.connect(root / ".moor/journal.sqlite")
    try:
        rows = db.execute(
            "SELECT kind, anchor, memory, reason FROM journal ORDER BY seq"
        ).fetchall()
    finally:
        db.close()
    return files, rows


def _leftovers(root: Path) -> list[str]:
    return [
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.name.endswith(".tmp") or p.name == "intent.json"
    ]


def _ready(ws: Workspace) -> None:
    ws.write("app.py", "def f(x):\n    return x + 1\n")
    ws.memory("f", "app.py#f")
    ws.moor("bind", check=True)
    ws.write("app.py", "def f(x):\n    return x + 2\n")


ACTIONS = {
    "reaffirm": ["reaffirm", "memories/f.md", "--why", "the reason we keep"],
    "add": ["add", "Retries of f are safe.", "--about", "app.py#f"],
}


def _strace(ws: Workspace, command: list[str], options: list[str]) -> tuple[int, str, str]:
    import subprocess

    log = ws.root.parent / "strace.log"
    run = subprocess.run(
        ["strace", "-f", "-qq", "-o", str(log), *options, sys.executable, "-m", "moor", *command],
        cwd=ws.root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return run.returncode, run.stderr, log.read_text(encoding="utf-8", errors="replace")


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_enospc_at_each_write_of_an_action_leaves_it_undone_or_done_never_half(
    tmp_path: Path, action: str
) -> None:
    if shutil.which("strace") is None:
        pytest.fail("strace is missing: `bash bench/setup.sh --tools` installs it")
    template = Workspace(tmp_path / "template")
    template.root.mkdir()
    (template.root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (template.root / "memories").mkdir()
    _ready(template)
    command = ACTIONS[action]
    before = _state(template.root)
    done = Workspace(tmp_path / "done")
    shutil.copytree(template.root, done.root)
    done.moor(*command, check=True)
    after = _state(done.root)
    assert after != before

    counted = Workspace(tmp_path / "counted")
    shutil.copytree(template.root, counted.root)
    _code, _err, log = _strace(counted, command, ["-c", "-e", "trace=" + ",".join(SYSCALLS)])
    counts = {
        parts[-1]: int(parts[3])
        for parts in (line.split() for line in log.splitlines())
        if parts and parts[-1] in SYSCALLS and len(parts) >= 5
    }
    points = [(name, n) for name, total in sorted(counts.items()) for n in range(1, total + 1)]
    if len(points) > POINTS:
        points = [points[i * len(points) // POINTS] for i in range(POINTS)]
    refused = 0
    for syscall, n in points:
        ws = Workspace(tmp_path / f"{syscall}-{n}")
        shutil.copytree(template.root, ws.root)
        code, err, log = _strace(
            ws,
            command,
            ["-e", f"trace={syscall}", "-e", f"inject={syscall}:error=ENOSPC:when={n}"],
        )
        injected = [line for line in log.splitlines() if "(INJECTED)" in line]
        # A failed write to stdout or stderr is the terminal's, not the workspace's.
        to_terminal = any(re.search(rf"\b{syscall}\((1|2),", line) for line in injected)
        where = f"ENOSPC at {syscall} #{n}: exit {code}, {err!r}, {injected}"
        assert _leftovers(ws.root) == [], where
        state = _state(ws.root)
        assert state in (before, after), where
        if to_terminal:
            continue
        assert "internal error" not in err, where
        if code == 2:
            refused += 1
            # SQLite reports a failed sync as an I/O error: the disk is not really full.
            assert state == before and "nothing was changed" in err, where
            assert "is full" in err or "an I/O error" in err, where
        else:
            assert code == 0 and state == after, where
        shutil.rmtree(ws.root)
    assert refused > 0, "no injected ENOSPC reached a write of the workspace"
