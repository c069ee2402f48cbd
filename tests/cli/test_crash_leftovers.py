"""What a crash leaves is cleaned up or finished (issue 20.9): every write moor makes, killed
with SIGKILL at each of its renames and links (strace's syscall injection, as
`bench/faults.py`), leaves no temporary file in the workspace once one ordinary moor command
has run, and ends all or nothing — the memory writes in `memories/`, `moor rules --write` in
`.claude/rules/`, `.cursor/rules/` and the AGENTS.md of `src/` and the root, `moor context
--write`, and `moor checkpoint save` in `.moor/checkpoints/<agent>/`. A user's own files
with names like a temporary file's are never removed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from moor_store.lockfile import parse_lock

from tests.conftest import Workspace

# The syscalls just before which a written temporary file has its name and the target still
# has its old bytes (a rename over the target, or a link to a new one).
_SWAPS = ("rename", "renameat", "renameat2", "linkat")
# A user's files that look like temporary files; none may ever be removed.
_USERS = (
    "memories/notes.tmp",
    "memories/.send.md.swp",
    "memories/.other.md.123.deadbeef.tmp",
    "src/.AGENTS.md.swp",
    ".claude/rules/draft.tmp",
)
_TEMPORARY = re.compile(r"(\.tmp|\.swp)$")

CODE = "def send(payload):\n    return payload\n\n\ndef top():\n    return 1\n"


def _strace(ws: Workspace, args: tuple[str, ...], *strace: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("strace") is None:  # it injects the kills: without it nothing is tested
        pytest.fail("strace is missing: `bash bench/setup.sh --tools` installs it")
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        ["strace", "-f", "-qq", *strace, sys.executable, "-m", "moor", *args],
        cwd=ws.root,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _killed_at(ws: Workspace, args: tuple[str, ...], syscall: str, n: int) -> None:
    """Run moor with `args`, killed with SIGKILL at its `n`th `syscall`."""
    killed = _strace(
        ws,
        args,
        "-o",
        "/dev/null",
        "-e",
        f"trace={syscall}",
        "-e",
        f"inject={syscall}:signal=KILL:when={n}",
    )
    assert killed.returncode in (-9, 137), (syscall, n, killed.stderr)


def _swap_points(
    ws: Workspace, args: tuple[str, ...], syscalls: tuple[str, ...] = _SWAPS
) -> list[tuple[str, int]]:
    """Every rename and link (or other `syscalls`) an uninterrupted run makes, as
    (syscall, nth)."""
    out = ws.root.parent / f"{ws.root.name}.strace"
    _strace(ws, args, "-c", "-o", str(out), "-e", "trace=" + ",".join(syscalls))
    points = []
    for line in out.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[-1] in syscalls:
            points += [(parts[-1], n) for n in range(1, int(parts[3]) + 1)]
    return points


_STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def _files(root: Path) -> dict[str, object]:
    """Every file of the workspace but git's and moor's state, by path: its bytes with times
    masked (a write stamps when it was made), and moor.lock as what it records."""
    found: dict[str, object] = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith((".git/", ".moor/")):
            found[rel] = _STAMP.sub(b"<time>", path.read_bytes())
    if "moor.lock" in found:
        lock = parse_lock((root / "moor.lock").read_text(encoding="utf-8"))
        found["moor.lock"] = (
            sorted(lock.memories),
            sorted(lock.retired),
            sorted(t.reason for t in lock.tombstones),
        )
    return found


def _leftovers(root: Path) -> list[str]:
    """Temporary files anywhere in the workspace (git's folder aside), the user's aside."""
    return sorted(
        rel
        for path in root.rglob("*")
        if not (rel := path.relative_to(root).as_posix()).startswith(".git/")
        and _TEMPORARY.search(path.name)
        and rel not in _USERS
    )


def _plant_users(ws: Workspace) -> None:
    for rel in _USERS:
        ws.write(rel, "a user's own file\n")


def _copy(ws: Workspace, name: str) -> Workspace:
    other = Workspace(ws.root.parent / name)
    shutil.copytree(ws.root, other.root, symlinks=True)
    return other


def _bound(ws: Workspace) -> None:
    subprocess.run(["git", "init", "-q"], cwd=ws.root, check=True)
    ws.write("src/client.py", CODE)
    ws.write("main.py", "def main():\n    return 0\n")
    ws.memory("send", "src/client.py#send", body="Send returns what it is given.")
    ws.memory("other", "main.py#main", body="Main returns zero.")
    ws.moor("bind", check=True)


def _add(ws: Workspace) -> tuple[str, ...]:
    return ("add", "Top returns one", "--about", "src/client.py#top")


def _edit(ws: Workspace) -> tuple[str, ...]:
    base = ws.moor("edit", "memories/send.md", "--format", "json").json()["content_hash"]
    section = ("--section", "send", "--text", "New.", "--why", "clearer")
    return ("edit", "memories/send.md", *section, "--base-hash", str(base))


def _supersede(ws: Workspace) -> tuple[str, ...]:
    ws.memory("send2", "src/client.py#send", body="Send returns its payload unchanged.")
    ws.moor("bind", check=True)
    return ("supersede", "memories/send.md", "--by", "memories/send2.md", "--why", "reworded")


def _forget(ws: Workspace) -> tuple[str, ...]:
    return ("forget", "memories/send.md", "--why", "never true")


def _rules(ws: Workspace) -> tuple[str, ...]:
    ws.write("AGENTS.md", "# My project\n\nThe user's own words.\n")
    return ("rules", "--write")


def _context(ws: Workspace) -> tuple[str, ...]:
    ws.write("src/AGENTS.md", "# The src folder\n")
    return ("context", "--write", "src/AGENTS.md")


WRITES: dict[str, Callable[[Workspace], tuple[str, ...]]] = {
    "add": _add,
    "edit": _edit,
    "supersede": _supersede,
    "forget": _forget,
    "rules --write": _rules,
    "context --write": _context,
}


@pytest.mark.parametrize("write", list(WRITES))
def test_a_write_killed_at_each_rename_leaves_no_temporary_file_and_ends_all_or_nothing(
    ws: Workspace, write: str
) -> None:
    _bound(ws)
    command = WRITES[write](ws)
    _plant_users(ws)
    before = _files(ws.root)
    finished = _copy(ws, "finished")
    assert finished.moor(*command).code == 0
    finished.moor("check")
    after = _files(finished.root)
    assert after != before  # control: the write changes something
    points = _swap_points(_copy(ws, "counted"), command)
    assert len(points) >= 2, points

    left_behind = 0
    for syscall, n in points:
        trial = _copy(ws, f"{syscall}-{n}")
        _killed_at(trial, command, syscall, n)
        left_behind += bool(_leftovers(trial.root))

        trial.moor("check")

        assert _leftovers(trial.root) == [], (syscall, n)
        assert _files(trial.root) in (before, after), (syscall, n)
        if write == "rules --write" and _files(trial.root) != before:
            assert trial.moor("rules", "--check").code == 0  # every file of the plan
        for rel in _USERS:
            assert (trial.root / rel).exists(), rel
        shutil.rmtree(trial.root)
    # The control: some kill came after a temporary file was written under its own name,
    # so the next run had one to remove.
    assert left_behind, f"no kill of {write} left a temporary file: {points}"


def test_a_checkpoint_save_killed_at_each_write_leaves_no_temporary_file(ws: Workspace) -> None:
    ws.write("main.py", "def main():\n    return 0\n")
    _plant_users(ws)
    command = ("checkpoint", "save", "--agent", "claude", "half way", "--next", "finish")
    # Its writes too: the data goes into the file before the link, the answer after it.
    points = _swap_points(_copy(ws, "counted"), command, (*_SWAPS, "write", "fsync"))
    assert ("linkat", 1) in points or ("rename", 1) in points, points  # control: it writes

    outcomes = set()
    for syscall, n in points:
        trial = _copy(ws, f"{syscall}-{n}")
        _killed_at(trial, command, syscall, n)

        resumed = trial.moor("checkpoint", "resume", "--agent", "claude")

        assert _leftovers(trial.root) == [], (syscall, n)
        # Nothing or the whole checkpoint: never a torn one.
        assert resumed.code == 1 or "half way" in resumed.out, resumed.out
        outcomes.add(resumed.code)
        assert "unreadable" not in resumed.out + resumed.err
        for rel in _USERS:
            assert (trial.root / rel).exists(), rel
        shutil.rmtree(trial.root)
    # The control: kills came both before the checkpoint was in place and after, so a
    # killed save had its data written (a named temporary file, before the fix) at some point.
    assert outcomes == {0, 1}, outcomes


def test_a_dead_savers_temporary_checkpoint_is_removed_but_a_live_ones_and_a_users_stay(
    ws: Workspace,
) -> None:
    # Where a system cannot create a file unnamed, a killed `checkpoint save` (which takes no
    # write lock) leaves a named temporary file; the next writer removes it once its pid is gone.
    ws.write("main.py", "def main():\n    return 0\n")
    ws.memory("main", "main.py#main")
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead = (
        f".moor/checkpoints/claude/.20261207T101010.000Z-1.json.{gone.stdout.strip()}.0badcafe.tmp"
    )
    live = f".moor/checkpoints/claude/.20261207T101011.000Z-1.json.{os.getpid()}.0badcafe.tmp"
    users = [".moor/checkpoints/claude/notes.tmp", ".moor/checkpoints/claude/.a.json.swp"]
    for rel in [dead, live, *users]:
        ws.write(rel, "{")
    assert (ws.root / dead).exists()  # the control: there is one to remove

    ws.moor("bind", check=True)

    assert not (ws.root / dead).exists()
    assert (ws.root / live).exists()  # its writer may still link it into place
    assert all((ws.root / rel).exists() for rel in users)
    resumed = ws.moor("checkpoint", "resume", "--agent", "claude")
    assert resumed.code == 1 and "unreadable" not in resumed.out + resumed.err
