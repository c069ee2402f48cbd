"""Retirement is a latch (issue 11.2): nothing but `moor restore --why` un-retires a memory —
not a later write, a reload, a stale snapshot, nor a `git checkout` of an older moor.lock.
Each test has its positive control: the same setup without the latch does resurrect."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from moor_store.lockfile import parse_lock

from tests.conftest import Workspace

CODE = "def send(body):\n    return body\n\n\ndef post(body):\n    return [body]\n"
OLD, NEW = "memories/old.md", "memories/new.md"


def _two_bound(ws: Workspace) -> None:
    ws.git("init", "-q")
    ws.write(".gitignore", ".moor/\n")
    ws.write("src/a.py", CODE)
    ws.memory("old", "src/a.py#send", body="Send is safe to retry.")
    ws.memory("new", "src/a.py#send", body="Send is safe to retry: it carries a key.")
    ws.moor("bind", check=True)
    ws.git("add", "-A")
    ws.git("commit", "-qm", "bound")


def test_supersede_retires_and_check_is_quiet_about_it(ws: Workspace) -> None:
    _two_bound(ws)
    ws.write("src/a.py", CODE.replace("return body", "return body * 2"))
    assert ws.state(OLD) == "drifted"  # control: without retirement, the old one needs a look

    run = ws.moor("supersede", OLD, "--by", NEW, "--why", "new says it better", "--format", "json")

    assert run.code == 0, run.err
    result = run.json()
    assert result["path"] == OLD and result["content_hash"]
    # What is already known about its code: the live one, never the retired one itself.
    assert [k["path"] for k in result["known_here"]] == [NEW]
    states = ws.states()
    assert states[OLD]["state"] == "retired"
    assert "superseded by memories/new.md" in str(states[OLD]["notes"])
    ws.moor("reaffirm", NEW, "--why", "still true", check=True)
    assert ws.moor("check").code == 0  # retired is quiet, however its code changed
    assert parse_lock(ws.read("moor.lock")).retired[OLD].by == NEW
    log = ws.moor("log", OLD).out
    assert "retire" in log and "new says it better" in log


def test_checking_out_an_older_moor_lock_does_not_un_retire(ws: Workspace) -> None:
    _two_bound(ws)
    ws.moor("supersede", OLD, "--by", NEW, "--why", "new says it better", check=True)
    assert ws.state(OLD) == "retired"

    ws.git("checkout", "HEAD", "--", "moor.lock")  # the lock from before the retirement

    assert OLD not in parse_lock(ws.read("moor.lock")).retired
    assert ws.state(OLD) == "retired"  # this clone's journal holds the latch
    # The next write records it in moor.lock again, for the team.
    bind = ws.moor("bind")
    assert bind.code == 0, bind.err
    assert "recorded them again" in bind.out
    assert parse_lock(ws.read("moor.lock")).retired[OLD].by == NEW
    # Positive control: the same old lock without this clone's journal says current.
    ws.git("checkout", "HEAD", "--", "moor.lock")
    shutil.rmtree(ws.root / ".moor")
    assert ws.state(OLD) == "current"


def test_a_later_write_or_reload_from_a_stale_lock_cannot_un_retire(ws: Workspace) -> None:
    _two_bound(ws)
    stale = ws.read("moor.lock")
    ws.moor("supersede", OLD, "--by", NEW, "--why", "x", check=True)

    # A writer that kept the lock it read before the retirement writes it back whole.
    ws.write("moor.lock", stale)
    ws.write("src/a.py", CODE.replace("return [body]", "return [body, 1]"))
    ws.memory("third", "src/a.py#post")
    assert ws.moor("bind").code == 0
    assert ws.moor("reaffirm", NEW, "--why", "y").code == 0

    assert ws.state(OLD) == "retired"
    assert OLD in parse_lock(ws.read("moor.lock")).retired
    # Positive control: the stale lock alone, without the journal, would say current.
    ws.write("moor.lock", stale)
    shutil.rmtree(ws.root / ".moor")
    assert ws.state(OLD) == "current"


# Holds the workspace write lock; on a line, runs `moor supersede` in this process (the lock
# is re-entrant for its holder), prints its JSON answer and exit status; on a second line,
# lets go.
SUPERSEDE_HOLDING_THE_LOCK = """
import sys
from pathlib import Path
from moor_store.writelock import write_lock
from moor.main import main
with write_lock(Path.cwd(), "moor test-holder"):
    print("held", flush=True)
    sys.stdin.readline()
    args = ["supersede", sys.argv[1], "--by", sys.argv[2], "--why", "concurrent"]
    code = main([*args, "--format", "json"])
    print(f"exit {code}", flush=True)
    sys.stdin.readline()
"""


def test_writes_that_read_moor_lock_before_a_supersede_and_write_after_it_keep_the_retirement(
    ws: Workspace,
) -> None:
    _two_bound(ws)
    for i in range(4):
        ws.memory(f"extra{i}", "src/a.py#post")
    env = {**os.environ, "NO_COLOR": "1", "MOOR_WRITE_WAIT": "60"}

    def start(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, *args],
            cwd=ws.root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    holder = start("-c", SUPERSEDE_HOLDING_THE_LOCK, OLD, NEW)
    binds: list[subprocess.Popen[str]] = []
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        stale = ws.read("moor.lock")
        binds = [start("-m", "moor", "bind", f"memories/extra{i}.md") for i in range(4)]
        for bind in binds:
            # Each has opened its session, reading moor.lock as it is before the retirement,
            # and waits for the lock.
            assert bind.stderr is not None
            waiting = bind.stderr.readline()
            assert f"waiting for another moor process (pid {holder.pid}" in waiting, waiting
        holder.stdin.write("\n")
        holder.stdin.flush()
        answer = holder.stdout.readline()
        assert holder.stdout.readline().strip() == "exit 0", answer
        assert json.loads(answer)["ok"] is True
        # Positive control: the race is real. The retirement is written while every bind
        # that read the lock without it has still to write, and that lock, written back,
        # would un-retire the memory (the journal aside, as a clone without it reads it).
        assert OLD in parse_lock(ws.read("moor.lock")).retired
        assert OLD not in parse_lock(stale).retired
        assert [bind.poll() for bind in binds] == [None] * 4
        holder.stdin.write("\n")
        holder.stdin.close()
        assert holder.wait(timeout=60) == 0
        results = [(bind.wait(timeout=120), bind.communicate()[1]) for bind in binds]
    finally:
        for process in [holder, *binds]:
            if process.poll() is None:
                process.kill()
                process.wait()

    assert [code for code, _err in results] == [0] * 4, results
    lock = parse_lock(ws.read("moor.lock"))
    assert OLD in lock.retired  # no bind wrote back the lock it read before the retirement
    assert all(f"memories/extra{i}.md" in lock.memories for i in range(4))
    assert ws.state(OLD) == "retired"
    # Positive control, continued: the lock the binds read, alone, says current.
    ws.write("moor.lock", stale)
    shutil.rmtree(ws.root / ".moor")
    assert ws.state(OLD) == "current"


def test_only_restore_with_a_reason_un_retires_and_it_is_journalled(ws: Workspace) -> None:
    _two_bound(ws)
    ws.moor("supersede", OLD, "--by", NEW, "--why", "x", check=True)

    assert ws.moor("restore", OLD).code == 2  # a reason is required
    assert ws.state(OLD) == "retired"
    run = ws.moor("restore", OLD, "--why", "the old wording was right")

    assert run.code == 0, run.err
    assert ws.state(OLD) == "current"
    lock = parse_lock(ws.read("moor.lock"))
    assert OLD not in lock.retired and OLD in lock.restored
    assert "the old wording was right" in ws.moor("log", OLD).out


def test_a_restored_memory_stays_restored_when_the_lock_that_retired_it_comes_back(
    ws: Workspace,
) -> None:
    _two_bound(ws)
    ws.moor("supersede", OLD, "--by", NEW, "--why", "x", check=True)
    ws.git("commit", "-qam", "retired")
    ws.moor("restore", OLD, "--why", "wrong call", check=True)

    ws.git("checkout", "HEAD", "--", "moor.lock")  # says retired, without the restore

    assert OLD in parse_lock(ws.read("moor.lock")).retired
    assert ws.state(OLD) == "current"  # the journalled restore is later than that retirement
    # Control: without this clone's journal, that lock alone says retired.
    shutil.rmtree(ws.root / ".moor")
    assert ws.state(OLD) == "retired"


def test_supersedes_in_frontmatter_retires_and_is_latched_when_bound(ws: Workspace) -> None:
    _two_bound(ws)
    declaring = ws.read(NEW).replace("about:", "supersedes: memories/old.md\nabout:", 1)
    ws.write(NEW, declaring)

    assert ws.state(OLD) == "retired"  # declared: retired as soon as moor reads it
    run = ws.moor("reaffirm", NEW, "--why", "now says it supersedes old")
    assert run.code == 0, run.err
    assert OLD in parse_lock(ws.read("moor.lock")).retired

    # Taking the declaration out again does not un-retire: the latch holds.
    ws.write(NEW, declaring.replace("supersedes: memories/old.md\n", ""))
    assert ws.state(OLD) == "retired"
    # Restore is refused while a memory still declares it (it would retire it again).
    ws.write(NEW, declaring)
    refused = ws.moor("restore", OLD, "--why", "try")
    assert refused.code == 1 and "still says `supersedes: memories/old.md`" in refused.err
    ws.write(NEW, declaring.replace("supersedes: memories/old.md\n", ""))
    assert ws.moor("restore", OLD, "--why", "not superseded after all").code == 0
    assert ws.state(OLD) == "current"


def test_add_with_supersedes_retires_the_old_memory_in_the_same_unit(ws: Workspace) -> None:
    _two_bound(ws)

    run = ws.moor(
        "add",
        "Send carries a key and retries once",
        "--about",
        "src/a.py#send",
        "--supersedes",
        OLD,
    )

    assert run.code == 0, run.err
    assert ws.state(OLD) == "retired"
    assert OLD in parse_lock(ws.read("moor.lock")).retired


def test_supersede_refuses_what_is_not_a_memory_or_is_already_retired(ws: Workspace) -> None:
    _two_bound(ws)

    missing = ws.moor("supersede", "memories/nope.md", "--by", NEW, "--why", "x")
    assert missing.code == 1 and "no memory file there" in missing.err
    itself = ws.moor("supersede", OLD, "--by", OLD, "--why", "x")
    assert itself.code == 1 and "cannot supersede itself" in itself.err
    ws.moor("supersede", OLD, "--by", NEW, "--why", "x", check=True)
    again = ws.moor("supersede", OLD, "--by", NEW, "--why", "x")
    assert again.code == 1 and "already retired" in again.err
