"""Fault report (issue 9): writers at once lose nothing; actions killed at every write recover;
hostile workspaces are refused without reading outside.

Every figure comes from real `moor` processes on real temporary workspaces:

* **concurrent writers** — R rounds of W `moor reaffirm` processes started at once on W
  drifted memories; a round passes when every reaffirmation is in moor.lock and its reason
  in `moor log`. Baseline: the same rounds with the write lock switched off in a copy of
  the write-lock module (`--no-baseline` skips it), showing how many updates are lost then.
* **killed at every write** — for `follow`, `reaffirm` and `bind`, each file-system write a
  run makes (rename, pwrite64, write, fsync, unlink, link — as strace counts them) is in turn
  made to kill the process (`strace -e inject=SYSCALL:signal=KILL:when=N`); the next
  `moor check` must end in the state of either the untouched workspace (killed before the
  action's intent record) or the uninterrupted action: memory, moor.lock and the journal's
  reasons alike.
* **killed, then nothing left behind** — `add`, `edit`, `supersede`, `forget` (memories/),
  `rules --write` (.claude/rules/, .cursor/rules/, AGENTS.md), `context --write` (src/) and
  `checkpoint save` (.moor/checkpoints/<agent>/), killed the same way; after one `moor check`
  no temporary file may be anywhere in the workspace and the workspace must be as untouched
  or as the uninterrupted write left it (a torn checkpoint counts as neither).
* **hostile workspaces** — layouts that try to make moor read or write outside the workspace;
  each passes when a planted secret never reaches moor.lock, the journal or the output and
  no file outside changes.
* **full and read-only disks** — a workspace on a small tmpfs (root only), filled to ENOSPC
  or remounted read-only: each write command passes when it exits 2 naming the full or
  read-only disk and the workspace's files and journal history are unchanged; each read
  command when it answers as on a writable copy; and the journal when it is kept (never set
  aside) and its reasons are all in `moor log` once space is freed.

    python bench/faults.py [--json] [--rounds R] [--writers W] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SECRET = "TOP-SECRET-7f3a19"
_SYSCALLS = (
    "rename",
    "renameat",
    "renameat2",
    "write",
    "pwrite64",
    "ftruncate",
    "fsync",
    "fdatasync",
    "unlink",
    "unlinkat",
    "linkat",
)


def moor(
    root: Path,
    *args: str,
    env: dict[str, str] | None = None,
    prefix: list[str] | None = None,
    stdin: str = "",
) -> subprocess.CompletedProcess[str]:
    # -P: run as the `moor` command does, never importing a module of the workspace (the
    # hostile cases plant some).
    return subprocess.run(
        [*(prefix or []), PYTHON, "-P", "-m", "moor", *args],
        cwd=root,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        timeout=300,
    )


def workspace(base: Path, name: str) -> Path:
    root = base / name
    (root / "memories").mkdir(parents=True)
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    return root


def memory(root: Path, name: str, ref: str, body: str = "A decision.") -> None:
    (root / "memories" / f"{name}.md").write_text(
        f"---\nabout: {ref}\n---\n# {name}\n\n{body}\n\n## When this changes, ask\n- Still?\n",
        encoding="utf-8",
    )


def code(count: int, variant: int = 0) -> str:
    return "".join(
        f"def f{i}(x):\n    total = x * {i} + {i}\n"
        f"    return [total, total + 1, total + {2 + variant}, x]\n\n"
        for i in range(count)
    )


# -- concurrent writers --------------------------------------------------------------------


def concurrent_round(base: Path, writers: int, env: dict[str, str]) -> tuple[int, int]:
    """(updates kept, updates made) for one round of `writers` reaffirms at once."""
    root = workspace(base, f"round-{time.monotonic_ns()}")
    (root / "app.py").write_text(code(writers), encoding="utf-8")
    for i in range(writers):
        memory(root, f"m{i}", f"app.py#f{i}")
    moor(root, "bind", env=env)
    (root / "app.py").write_text(code(writers, 1), encoding="utf-8")
    procs = [
        subprocess.Popen(
            [PYTHON, "-P", "-m", "moor", "reaffirm", f"memories/m{i}.md", "--why", f"reason {i}"],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **env},
        )
        for i in range(writers)
    ]
    for p in procs:
        p.wait(timeout=300)
    check = moor(root, "check", "--format", "json", env=env)
    states = {m["path"]: m["state"] for m in json.loads(check.stdout)["memories"]}
    kept = 0
    for i in range(writers):
        if (
            states.get(f"memories/m{i}.md") == "current"
            and f"reason {i}" in moor(root, "log", f"memories/m{i}.md", env=env).stdout
        ):
            kept += 1
    shutil.rmtree(root, ignore_errors=True)
    return kept, writers


def unlocked_env(base: Path) -> dict[str, str]:
    """PYTHONPATH with a copy of moor_store whose write lock does nothing: the baseline."""
    shadow = base / "unlocked"
    shutil.copytree(ROOT / "store" / "moor_store", shadow / "moor_store")
    path = shadow / "moor_store" / "writelock.py"
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "    state = _state(root)\n    me = threading.get_ident()",
        "    yield\n    return\n    state = _state(root)\n    me = threading.get_ident()",
        1,
    )
    path.write_text(text, encoding="utf-8")
    return {"PYTHONPATH": str(shadow)}


# -- killed at every write -----------------------------------------------------------------


def _setup_follow(root: Path) -> list[str]:
    (root / "client.py").write_text(SEND, encoding="utf-8")
    memory(root, "retry", "client.py#Client.send")
    moor(root, "bind")
    (root / "client.py").write_text(
        SEND.replace("def send(", "def send_payload("), encoding="utf-8"
    )
    return ["follow", "memories/retry.md", "--why", "renamed"]


def _setup_reaffirm(root: Path) -> list[str]:
    (root / "client.py").write_text(SEND, encoding="utf-8")
    memory(root, "retry", "client.py#Client.send")
    moor(root, "bind")
    (root / "client.py").write_text(SEND.replace("attempt += 1", "attempt += 2"), encoding="utf-8")
    return ["reaffirm", "memories/retry.md", "--why", "still fine"]


def _setup_bind(root: Path) -> list[str]:
    (root / "client.py").write_text(SEND, encoding="utf-8")
    memory(root, "retry", "client.py#Client.send")
    return ["bind"]


SEND = """class Client:
    def send(self, payload, retries=3):
        attempt = 0
        while attempt <= retries:
            if self.transport.post(payload, key=payload.idempotency_key):
                return True
            attempt += 1
        return False
"""

ACTIONS: dict[str, Callable[[Path], list[str]]] = {
    "follow": _setup_follow,
    "reaffirm": _setup_reaffirm,
    "bind": _setup_bind,
}


def _state(root: Path) -> tuple[str, str, tuple[tuple[str, str, str], ...]]:
    lock = (root / "moor.lock").read_text(encoding="utf-8") if (root / "moor.lock").exists() else ""
    mem = (root / "memories/retry.md").read_text(encoding="utf-8")
    journal = root / ".moor/journal.sqlite"
    rows: tuple[tuple[str, str, str], ...] = ()
    if journal.exists():
        db = sqlite3.connect(journal)
        with contextlib.closing(db):
            rows = tuple(
                (str(k), str(c), str(r))
                for k, c, r in db.execute(
                    "SELECT kind, code, reason FROM journal WHERE kind = 'revise' OR code = 'bind' "
                    "ORDER BY seq"
                )
            )
    return lock, mem, rows


def _count_calls(root: Path, command: list[str]) -> dict[str, int]:
    out = root.parent / f"{root.name}.strace"
    moor(
        root,
        *command,
        prefix=["strace", "-f", "-qq", "-c", "-o", str(out), "-e", "trace=" + ",".join(_SYSCALLS)],
    )
    counts: dict[str, int] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if parts and parts[-1] in _SYSCALLS and len(parts) >= 5:
            counts[parts[-1]] = int(parts[3])
    return counts


def _kill_points(
    base: Path, template: Path, command: list[str], per_action: int | None
) -> list[tuple[str, int]]:
    """Each write-like syscall an uninterrupted run of `command` makes, as (syscall, nth),
    spread evenly down to `per_action` of them."""
    counts = _count_calls(_fresh(base, template, "count"), command)
    points = [(name, n) for name, total in sorted(counts.items()) for n in range(1, total + 1)]
    if per_action is not None and len(points) > per_action:
        points = [points[i * len(points) // per_action] for i in range(per_action)]
    return points


def _killing(syscall: str, n: int) -> list[str]:
    """The strace prefix that kills a run with SIGKILL at its `n`th `syscall`."""
    inject = f"inject={syscall}:signal=KILL:when={n}"
    return ["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={syscall}", "-e", inject]


def killed_at_every_write(base: Path, per_action: int | None) -> dict[str, dict[str, int]]:
    results: dict[str, dict[str, int]] = {}
    for action, setup in ACTIONS.items():
        template = workspace(base, f"{action}-template")
        command = setup(template)
        before = _state(template)
        after_root = base / f"{action}-after"
        shutil.copytree(template, after_root)
        moor(after_root, *command)
        moor(after_root, "check")
        after = _state(after_root)
        points = _kill_points(base, template, command, per_action)
        trials = killed = recovered = 0
        for syscall, n in points:
            root = _fresh(base, template, f"{syscall}-{n}")
            run = moor(root, *command, prefix=_killing(syscall, n))
            trials += 1
            if run.returncode in (-9, 137):
                killed += 1
            moor(root, "check")
            if _state(root) in (before, after):
                recovered += 1
            else:
                print(f"  NOT RECOVERED: {action} killed at {syscall} #{n}", file=sys.stderr)
            shutil.rmtree(root, ignore_errors=True)
        results[action] = {"trials": trials, "killed": killed, "recovered": recovered}
    return results


def _fresh(base: Path, template: Path, name: str) -> Path:
    root = base / f"{template.name}-{name}"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(template, root)
    return root


# -- full and read-only disks --------------------------------------------------------------

DISK_WRITES: dict[str, list[str]] = {
    "add": ["add", "Retries are safe.", "--about", "app.py#f"],
    "forget": ["forget", "memories/f.md", "--why", "no longer true"],
    "reaffirm": ["reaffirm", "memories/g.md", "--why", "still holds"],
    "bind": ["bind"],
    "supersede": ["supersede", "memories/f.md", "--by", "memories/g.md", "--why", "g says it"],
    "checkpoint save": ["checkpoint", "save", "--agent", "a", "where it stands"],
    "context --write": ["context", "--write", "CLAUDE.md"],
    "rules --write": ["rules", "--write"],
}
DISK_READS: dict[str, list[str]] = {
    "status": ["status"],
    "check": ["check"],
    "log": ["log", "memories/f.md"],
    "recall": ["recall", "retries"],
    "about": ["about", "app.py"],
    "context": ["context"],
    "rules": ["rules"],
}
_REASON = "the reason to keep"


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True, check=False).returncode == 0


def _disk_workspace(mount: Path) -> Path:
    root = workspace(mount, "ws")
    (root / "app.py").write_text("def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x\n")
    memory(root, "f", "app.py#f", "Retries of f are safe.")
    memory(root, "g", "app.py#g")
    moor(root, "bind")
    (root / "app.py").write_text("def f(x):\n    return x + 2\n\n\ndef g(x):\n    return x\n")
    moor(root, "reaffirm", "memories/f.md", "--why", _REASON)
    (root / "app.py").write_text("def f(x):\n    return x + 2\n\n\ndef g(x):\n    return -x\n")
    memory(root, "h", "app.py#g", "Not bound yet.")
    moor(root, "log", "memories/f.md")  # the journal at rest, its WAL folded in
    return root


def _disk_state(root: Path) -> dict[str, object]:
    found: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or rel.endswith(("-wal", "-shm")) or "recall.sqlite" in rel:
            continue
        if rel == ".moor/journal.sqlite":
            db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
            found[rel] = db.execute("SELECT * FROM journal ORDER BY seq").fetchall()
            db.close()
        else:
            found[rel] = path.read_bytes()
    return found


def _fill(mount: Path) -> None:
    with open(mount / ".filler", "ab", buffering=0) as filler:
        for size in (65536, 4096):
            with contextlib.suppress(OSError):
                while True:
                    filler.write(b"\0" * size)


def disk_cases(base: Path) -> dict[str, bool] | None:
    """Each case: True when it held. None when a tmpfs cannot be mounted (not root)."""
    if os.geteuid() != 0:
        return None
    mount = base / "disk"
    mount.mkdir()
    cases: dict[str, bool] = {}

    def on_disk(name: str, trial: Callable[[Path], bool]) -> None:
        if not _mount("-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)):
            raise RuntimeError("cannot mount a tmpfs as root")
        try:
            cases[name] = trial(_disk_workspace(mount))
        finally:
            _mount("-o", "remount,rw", str(mount))
            if subprocess.run(["umount", str(mount)], check=False).returncode:
                subprocess.run(["umount", "-l", str(mount)], check=False)

    def refused(how: str, command: list[str]) -> Callable[[Path], bool]:
        def trial(root: Path) -> bool:
            before = _disk_state(root)
            if how == "full":
                _fill(mount)
            else:
                _mount("-o", "remount,ro", str(mount))
            run = moor(root, *command)
            said = "is full" if how == "full" else "read-only filesystem"
            _mount("-o", "remount,rw", str(mount))
            (mount / ".filler").unlink(missing_ok=True)
            return (
                run.returncode == 2
                and said in run.stderr
                and "internal error" not in run.stderr
                and _disk_state(root) == before
                and not list((root / ".moor").glob("journal.sqlite.broken-*"))
            )

        return trial

    def answered(how: str, command: list[str]) -> Callable[[Path], bool]:
        def trial(root: Path) -> bool:
            copy = base / "disk-copy"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(root, copy)
            if how == "full":
                _fill(mount)
            else:
                _mount("-o", "remount,ro", str(mount))
            control, run = moor(copy, *command), moor(root, *command)
            return (
                run.returncode == control.returncode
                and run.returncode in (0, 1)
                and run.stdout == control.stdout
                and "records nothing" in run.stderr
                and not list((root / ".moor").glob("journal.sqlite.broken-*"))
            )

        return trial

    def kept(root: Path) -> bool:
        _fill(mount)
        runs = [moor(root, "check"), moor(root, "reaffirm", "memories/g.md", "--why", "x")]
        (mount / ".filler").unlink()
        return (
            not list((root / ".moor").glob("journal.sqlite.broken-*"))
            and [r.returncode for r in runs] == [1, 2]
            and _REASON in moor(root, "log", "memories/f.md").stdout
        )

    for how in ("full", "read-only"):
        for name, command in DISK_WRITES.items():
            on_disk(f"{how}: {name}", refused(how, command))
        for name, command in DISK_READS.items():
            on_disk(f"{how}: {name}", answered(how, command))
    on_disk("full: the journal and its reasons kept", kept)
    return cases


# -- killed, then nothing left behind -------------------------------------------------------

_STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
_CHECKPOINT = ["checkpoint", "save", "--agent", "claude", "half way", "--next", "finish"]


def _two_folders(root: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "src").mkdir()
    (root / "src/client.py").write_text(
        "def send(payload):\n    return payload\n\n\ndef top():\n    return 1\n", encoding="utf-8"
    )
    (root / "main.py").write_text("def main():\n    return 0\n", encoding="utf-8")
    memory(root, "send", "src/client.py#send", "Send returns what it is given.")
    memory(root, "other", "main.py#main", "Main returns zero.")
    moor(root, "bind")


def _leave_add(root: Path) -> list[str]:
    _two_folders(root)
    return ["add", "Top returns one", "--about", "src/client.py#top"]


def _leave_edit(root: Path) -> list[str]:
    _two_folders(root)
    shown = moor(root, "edit", "memories/send.md", "--format", "json").stdout
    base = str(json.loads(shown)["content_hash"])
    section = ["--section", "send", "--text", "New.", "--why", "clearer"]
    return ["edit", "memories/send.md", *section, "--base-hash", base]


def _leave_supersede(root: Path) -> list[str]:
    _two_folders(root)
    memory(root, "send2", "src/client.py#send", "Send returns its payload unchanged.")
    moor(root, "bind")
    return ["supersede", "memories/send.md", "--by", "memories/send2.md", "--why", "reworded"]


def _leave_forget(root: Path) -> list[str]:
    _two_folders(root)
    return ["forget", "memories/send.md", "--why", "never true"]


def _leave_rules(root: Path) -> list[str]:
    _two_folders(root)
    (root / "AGENTS.md").write_text("# My project\n\nThe user's own words.\n", encoding="utf-8")
    return ["rules", "--write"]


def _leave_context(root: Path) -> list[str]:
    _two_folders(root)
    (root / "src/AGENTS.md").write_text("# The src folder\n", encoding="utf-8")
    return ["context", "--write", "src/AGENTS.md"]


def _leave_checkpoint(root: Path) -> list[str]:
    (root / "main.py").write_text("def main():\n    return 0\n", encoding="utf-8")
    return list(_CHECKPOINT)


LEAVERS: dict[str, tuple[str, Callable[[Path], list[str]]]] = {
    "add": ("memories/", _leave_add),
    "edit": ("memories/", _leave_edit),
    "supersede": ("memories/", _leave_supersede),
    "forget": ("memories/", _leave_forget),
    "rules --write": (".claude/rules/, .cursor/rules/, AGENTS.md, src/", _leave_rules),
    "context --write": ("src/", _leave_context),
    "checkpoint save": (".moor/checkpoints/claude/", _leave_checkpoint),
}


def _temporaries(root: Path) -> list[str]:
    """Every temporary file in the workspace (git's folder aside)."""
    return sorted(
        rel
        for path in root.rglob("*.tmp")
        if not (rel := path.relative_to(root).as_posix()).startswith(".git/")
    )


def _outcome(root: Path) -> tuple[object, ...]:
    """What a write can change: every file outside git's and moor's state (times masked),
    moor.lock as what it records, and each checkpoint (or that one is torn)."""
    from moor_store.lockfile import parse_lock

    files: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith((".git/", ".moor/")):
            files[rel] = _STAMP.sub(b"<time>", path.read_bytes())
    if (root / "moor.lock").exists():
        lock = parse_lock((root / "moor.lock").read_text(encoding="utf-8"))
        files["moor.lock"] = (
            sorted(lock.memories),
            sorted(lock.retired),
            sorted(t.reason for t in lock.tombstones),
        )
    checkpoints = []
    for path in sorted((root / ".moor/checkpoints").rglob("*.json")):
        try:
            checkpoints.append(json.loads(path.read_text(encoding="utf-8"))["summary"])
        except (ValueError, KeyError):
            checkpoints.append("torn")
    return tuple(sorted(files.items())), tuple(checkpoints)


def killed_leaving_nothing(base: Path, per_action: int | None) -> dict[str, dict[str, object]]:
    """Each write killed at each write-like syscall, then one `moor check`: no temporary file
    anywhere, and the workspace as untouched or as the uninterrupted write left it."""
    results: dict[str, dict[str, object]] = {}
    for action, (folders, setup) in LEAVERS.items():
        slug = action.replace(" --", "-").replace(" ", "-")
        template = workspace(base, f"leave-{slug}")
        command = setup(template)
        before = _outcome(template)
        finished = _fresh(base, template, "finished")
        moor(finished, *command)
        moor(finished, "check")
        after = _outcome(finished)
        points = _kill_points(base, template, command, per_action)
        trials = killed = left = clean = 0
        for syscall, n in points:
            root = _fresh(base, template, f"{syscall}-{n}")
            run = moor(root, *command, prefix=_killing(syscall, n))
            trials += 1
            killed += run.returncode in (-9, 137)
            left += bool(_temporaries(root))
            moor(root, "check")
            if not _temporaries(root) and _outcome(root) in (before, after):
                clean += 1
            else:
                print(f"  LEFT BEHIND: {action} killed at {syscall} #{n}", file=sys.stderr)
            shutil.rmtree(root, ignore_errors=True)
        results[action] = {
            "folders": folders,
            "trials": trials,
            "killed": killed,
            "left_by_the_kill": left,
            "clean": clean,
        }
    return results


# -- hostile workspaces --------------------------------------------------------------------


Command = list[str] | tuple[list[str], str, dict[str, str]]  # argv, or argv, stdin, env


def hostile_cases(base: Path) -> dict[str, bool]:
    outside = base / "outside"
    outside.mkdir()
    secret_file = outside / "secret.md"
    secret_file.write_text(f"---\nabout: app.py#f\n---\n# s\n\n{SECRET}\n", encoding="utf-8")
    (outside / "secret.py").write_text(f"def f(x):\n    return '{SECRET}'\n", encoding="utf-8")
    victim = outside / "victim.txt"
    victim.write_text("precious", encoding="utf-8")

    def case(name: str, plant: Callable[[Path], None], *commands: Command) -> bool:
        root = workspace(base, f"hostile-{name}")
        (root / "app.py").write_text("def f(x):\n    return x + 1\n", encoding="utf-8")
        memory(root, "ok", "app.py#f")
        before = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
        plant(root)
        output = ""
        for command in commands or (["bind"], ["check"]):
            args, stdin, env = command if isinstance(command, tuple) else (command, "", {})
            try:
                run = moor(root, *args, stdin=stdin, env=env)
            except subprocess.TimeoutExpired:
                return False  # a hang is a failed case, not a stuck benchmark
            output += run.stdout + run.stderr
            if "internal error" in output:
                return False
        state = root / ".moor"
        mine = [root / "moor.lock"]
        if state.is_dir() and not state.is_symlink():
            mine += list(state.glob("*"))
        leaked = SECRET in output or any(  # what moor wrote, not what a planted link shows
            SECRET.encode() in p.read_bytes() for p in mine if p.is_file() and not p.is_symlink()
        )
        after = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
        return not leaked and after == before

    def link(rel: str, target: Path | str) -> Callable[[Path], None]:
        def plant(root: Path) -> None:
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
            os.symlink(target, path)

        return plant

    def memories_root(root: Path) -> None:
        shutil.rmtree(root / "memories")
        os.symlink(outside, root / "memories")

    def fifo_memory(root: Path) -> None:
        os.mkfifo(root / "memories/pipe.md")

    def moor_dir(root: Path) -> None:
        os.symlink(outside, root / ".moor")

    def journal_link(root: Path) -> None:
        (root / ".moor").mkdir()
        os.symlink(victim, root / ".moor/journal.sqlite")

    def diff_link(root: Path) -> None:
        (root / ".moor/diffs").mkdir(parents=True)
        os.symlink(victim, root / ".moor/diffs/memories__ok.md.diff")

    def code_link(root: Path) -> None:
        (root / "app.py").unlink()
        os.symlink(outside / "secret.py", root / "app.py")

    def traversal(root: Path) -> None:
        memory(root, "up", "../outside/secret.py#f")

    def intent_link(root: Path) -> None:
        (root / ".moor").mkdir()
        os.symlink(victim, root / ".moor/intent.json")

    def fifo_ignore(root: Path) -> None:
        os.mkfifo(root / ".gitignore")

    def planted_modules(root: Path) -> None:
        # Each leaves a mark outside the workspace if anything moor starts imports it.
        for rel in (
            "json.py",
            "typing.py",
            "socket.py",
            "moor/__init__.py",
            "moor/__main__.py",
            "moor_engine/__init__.py",
            "moor_engine/grounding/index_worker.py",
        ):
            path = root / rel
            path.parent.mkdir(exist_ok=True)
            mark = f"open({str(outside / 'ran.txt')!r}, 'a').write({rel!r})\n"
            path.write_text(mark, encoding="utf-8")
        # Enough files of one language that a gone anchor is searched for by the definition
        # index's worker processes.
        (root / "pkg").mkdir()
        for n in range(1000):
            (root / f"pkg/m{n}.py").write_text(f"def f{n}(x):\n    return x + {n}\n")
        memory(root, "gone", "pkg/m1.py#f1")
        moor(root, "bind")
        (root / "pkg/m1.py").write_text("def other(x):\n    return x\n", encoding="utf-8")

    hook_json = json.dumps({"prompt": "what about f in app.py", "cwd": "."})
    served = {"MOOR_HOOK_SERVER": "1"}
    cases = {
        "memory linked outside": case("memory", link("memories/leak.md", secret_file)),
        "memory root linked outside": case("root", memories_root),
        "memory that is a FIFO": case("fifo", fifo_memory),
        ".moor linked outside": case("moordir", moor_dir),
        "journal linked outside": case("journal", journal_link),
        "moor.lock linked outside": case("lock", link("moor.lock", outside / "secret.py")),
        "moor.toml linked outside": case("toml", link("moor.toml", outside / "secret.py")),
        "code linked outside": case("code", code_link),
        "reference leaving the workspace": case("traversal", traversal),
        "intent record linked outside": case("intent", intent_link),
        "saved diff linked outside": case("diff", diff_link, ["bind"], ["diff", "memories/ok.md"]),
        ".gitignore that is a FIFO": case("fifo-ignore", fifo_ignore),
        "modules planted to shadow moor's (check's index workers, the hook server)": case(
            "planted",
            planted_modules,
            ["check"],
            (["hooks", "run", "session-start"], hook_json, served),
            (["hooks", "run", "prompt"], hook_json, served),
            ["hooks", "stop"],
        ),
    }
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="40 writes per action, 5 rounds")
    parser.add_argument("--per-action", type=int, help="kill at this many writes per action")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--no-disk", action="store_true", help="skip the full/read-only disks")
    parser.add_argument("--only-disk", action="store_true", help="only the full/read-only disks")
    args = parser.parse_args()
    if shutil.which("strace") is None:
        print("strace is needed (apt install strace)", file=sys.stderr)
        return 2
    rounds = min(5, args.rounds) if args.quick else args.rounds
    result: dict[str, object] = {}
    if args.only_disk:
        with tempfile.TemporaryDirectory(prefix="moor-faults-") as tmp:
            disk = disk_cases(Path(tmp))
        if disk is None:
            print("full/read-only disks need root (a tmpfs is mounted)", file=sys.stderr)
            return 2
        failed = [k for k, v in disk.items() if not v]
        print(
            json.dumps({"disk": {"cases": len(disk), "held": sum(disk.values()), "failed": failed}})
            if args.json
            else f"full and read-only disks: {sum(disk.values())}/{len(disk)} held"
            + (f" (failed: {failed})" if failed else "")
        )
        return 0
    with tempfile.TemporaryDirectory(prefix="moor-faults-") as tmp:
        base = Path(tmp)
        kept = sum(
            concurrent_round(base, args.writers, {})[0] == args.writers for _ in range(rounds)
        )
        result["concurrent"] = {
            "rounds": rounds,
            "writers": args.writers,
            "rounds_nothing_lost": kept,
        }
        if not args.no_baseline:
            env = unlocked_env(base)
            lost = [concurrent_round(base, args.writers, env) for _ in range(rounds)]
            result["concurrent_baseline"] = {
                "rounds_nothing_lost": sum(k == n for k, n in lost),
                "updates_lost": sum(n - k for k, n in lost),
            }
        per_action = args.per_action if args.per_action else (40 if args.quick else None)
        result["killed"] = killed_at_every_write(base, per_action)
        result["leftovers"] = killed_leaving_nothing(base, per_action)
        hostile = hostile_cases(base)
        result["hostile"] = {
            "cases": len(hostile),
            "refused": sum(hostile.values()),
            "failed": [k for k, v in hostile.items() if not v],
        }
        disk = None if args.no_disk else disk_cases(base)
        if disk is not None:
            result["disk"] = {
                "cases": len(disk),
                "held": sum(disk.values()),
                "failed": [k for k, v in disk.items() if not v],
            }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    c = result["concurrent"]
    assert isinstance(c, dict)
    print(
        f"concurrent writers: {c['rounds_nothing_lost']}/{c['rounds']} rounds of "
        f"{c['writers']} reaffirms at once lost nothing"
    )
    if "concurrent_baseline" in result:
        b = result["concurrent_baseline"]
        assert isinstance(b, dict)
        print(
            f"  baseline without the write lock: {b['rounds_nothing_lost']}/{rounds} rounds "
            f"lost nothing, {b['updates_lost']} updates lost"
        )
    killed = result["killed"]
    assert isinstance(killed, dict)
    for action, row in killed.items():
        print(
            f"killed at every write: {action}: {row['recovered']}/{row['trials']} recovered "
            f"({row['killed']} runs killed)"
        )
    leftovers = result["leftovers"]
    assert isinstance(leftovers, dict)
    for action, row in leftovers.items():
        print(
            f"killed at every write, then one check: {action} ({row['folders']}): "
            f"{row['clean']}/{row['trials']} left no temporary file and all or nothing "
            f"({row['killed']} runs killed, {row['left_by_the_kill']} left one until the check)"
        )
    h = result["hostile"]
    assert isinstance(h, dict)
    print(
        f"hostile workspaces: {h['refused']}/{h['cases']} refused without reading or "
        "writing outside" + (f" (failed: {h['failed']})" if h["failed"] else "")
    )
    d = result.get("disk")
    if isinstance(d, dict):
        print(
            f"full and read-only disks: {d['held']}/{d['cases']} held"
            + (f" (failed: {d['failed']})" if d["failed"] else "")
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
