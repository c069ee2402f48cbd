"""Custom anchors observed by a command (issue 25): each way a probe can fail is an attempt
with its code, never drift — and the same setup reports a real change, so it could have."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Workspace

PROBE = "memories/roster.md"


@pytest.fixture(autouse=True)
def no_trust_from_the_host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The user's own list of trusted roots and MOOR_TRUST never reach these tests."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("MOOR_TRUST", raising=False)


def declare(ws: Workspace, name: str, script: str, extra: str = "") -> None:
    """`[anchors.NAME]` running `script` (a Python file written into the workspace)."""
    ws.write(f"probes/{name}.py", script)
    command = json.dumps([sys.executable, f"probes/{name}.py"])
    with (ws.root / "moor.toml").open("a", encoding="utf-8") as config:
        config.write(f'\n[anchors.{name}]\ncommand = {command}\ntimeout = "20s"\n{extra}\n')


def print_file(path: str) -> str:
    return f"print(open({path!r}).read(), end='')\n"


def bound(ws: Workspace, name: str = "roster", memory: str = "roster") -> None:
    ws.memory(memory, f"anchor:{name}")
    ws.moor("bind", "--trust", check=True)


def anchor(ws: Workspace, memory: str = PROBE, *args: str) -> dict[str, object]:
    run = ws.moor("check", "--format", "json", *args)
    assert run.code in (0, 1), run.err
    found = next(m for m in run.json()["memories"] if m["path"] == memory)
    value = found["anchors"][0]
    assert isinstance(value, dict)
    return value


def test_a_changed_fact_drifts_the_memory_and_an_unchanged_one_keeps_it_current(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "test_a\ntest_b\n")
    declare(ws, "roster", print_file("roster.txt"))
    bound(ws)
    same = anchor(ws, PROBE, "--trust")
    assert same["state"] == "current"
    assert same["probe"] == {"kind": "command", "reproducibility": "closed", "streak": [1, 1]}
    ws.write("roster.txt", "test_a\n")
    changed = anchor(ws, PROBE, "--trust")
    assert changed["state"] == "drifted"
    assert changed["code"] == "drifted"
    assert "closed" in str(changed["detail"])


@pytest.mark.parametrize(
    ("script", "extra", "code"),
    [
        (
            "import sys\nprint('boom: no tests', file=sys.stderr)\nsys.exit(1)\n",
            "",
            "process_failed",
        ),
        ("print('{not json')\n", 'facts = "json"', "invalid_json"),
        ("print('x' * 5000)\n", 'output_cap = "1KiB"', "output_too_large"),
        ("import sys\nsys.stdout.buffer.write(b'\\xff\\xfe')\n", "", "invalid_utf8"),
    ],
    ids=["exit-1", "invalid-json", "too-much-output", "not-utf8"],
)
def test_a_probe_that_fails_is_unverified_with_its_code_never_drifted(
    ws: Workspace, script: str, extra: str, code: str
) -> None:
    ws.write("roster.txt", '{"n": 1}\n')
    ws.write("broken", "")
    declare(
        ws,
        "roster",
        "import os, sys\nif os.path.getsize('broken'):\n    exec(open('fail.py').read())\n"
        + print_file("roster.txt"),
        extra,
    )
    ws.write("fail.py", script)
    bound(ws)
    ws.write("broken", "yes")
    failed = anchor(ws, PROBE, "--trust")
    assert (failed["state"], failed["code"]) == ("unverified", code)
    if code == "process_failed":
        assert "boom: no tests" in str(failed["detail"])  # the last stderr lines
    # Positive control: the same probe, working again, reports a real change as drift.
    ws.write("broken", "")
    ws.write("roster.txt", '{"n": 2}\n')
    assert anchor(ws, PROBE, "--trust")["state"] == "drifted"


def test_a_probe_past_its_timeout_is_killed_with_its_process_group(ws: Workspace) -> None:
    ws.write("roster.txt", "a\n")
    ws.write("hang", "")
    declare(
        ws,
        "roster",
        "import os, subprocess, sys, time\n"
        "if os.path.getsize('hang'):\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "    open('grandchild.pid', 'w').write(str(child.pid))\n"
        "    time.sleep(600)\n" + print_file("roster.txt"),
    )
    text = ws.read("moor.toml").replace('timeout = "20s"', 'timeout = "2s"')
    ws.write("moor.toml", text)
    bound(ws)
    ws.write("hang", "yes")
    started = time.monotonic()
    failed = anchor(ws, PROBE, "--trust")
    assert (failed["state"], failed["code"]) == ("unverified", "timed_out")
    assert time.monotonic() - started < 60
    grandchild = int(ws.read("grandchild.pid"))
    deadline = time.monotonic() + 30
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)  # waiting for an event (init reaping it), bounded
    assert not _alive(grandchild), "the probe's grandchild outlived its deadline"
    ws.write("hang", "")
    ws.write("roster.txt", "b\n")
    assert anchor(ws, PROBE, "--trust")["state"] == "drifted"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split()[2] == "Z")


def test_a_change_counts_only_after_its_streak_so_alternating_values_never_drift(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "a\n")
    declare(ws, "roster", print_file("roster.txt"), "streak = 2")
    bound(ws)
    for value in ("b\n", "a\n", "b\n", "a\n"):
        ws.write("roster.txt", value)
        seen = anchor(ws, PROBE, "--trust")
        assert seen["state"] == "current", seen
    ws.write("roster.txt", "b\n")
    first = anchor(ws, PROBE, "--trust")
    assert (first["state"], first["code"]) == ("current", "streak_pending")
    assert first["probe"]["streak"] == [1, 2]  # type: ignore[index]
    # Positive control: seen twice in a row, the change counts.
    second = anchor(ws, PROBE, "--trust")
    assert (second["state"], second["code"]) == ("drifted", "drifted")


def test_json_null_is_not_found_and_moves_the_anchor(ws: Workspace) -> None:
    ws.write("version.json", '{"version": "1.2.3"}\n')
    declare(ws, "dep", print_file("version.json"), 'facts = "json"')
    bound(ws, "dep", "dep")
    assert anchor(ws, "memories/dep.md", "--trust")["state"] == "current"
    ws.write("version.json", "null\n")
    gone = anchor(ws, "memories/dep.md", "--trust")
    assert (gone["state"], gone["code"]) == ("gone", "not_found")


def test_the_command_runs_in_the_root_with_a_cleared_environment_and_stdin_closed(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOR_SECRET_OF_THE_HOST", "s3cret")
    monkeypatch.setenv("LISTED_VARIABLE", "given")
    declare(
        ws,
        "env",
        "import json, os, sys\n"
        "seen = json.dumps({'cwd': os.getcwd(), 'env': dict(os.environ), "
        "'stdin': sys.stdin.read() if sys.stdin else None})\n"
        "open('seen.json', 'w').write(seen)\n"
        "print('{}')\n",
        'facts = "json"\nenv = ["LISTED_VARIABLE"]',
    )
    bound(ws, "env", "env")
    run = ws.moor("anchors", "--format", "json", check=True)
    row = next(r for r in run.json()["anchors"] if r["anchor"] == "anchor:env")
    assert row["reproducibility"] == "open"  # it reads a host variable
    ws.moor("check", "--trust", check=True)
    out = json.loads(ws.read("seen.json"))  # what the command saw, run by `moor check`
    assert out["cwd"] == str(ws.root.resolve())
    assert out["stdin"] == ""
    env = out["env"]
    assert env["LISTED_VARIABLE"] == "given"
    assert env["LC_ALL"] == "C"
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin"
    assert "MOOR_SECRET_OF_THE_HOST" not in env  # and the control: the host had it
    assert os.environ["MOOR_SECRET_OF_THE_HOST"] == "s3cret"


def test_a_probe_that_cannot_run_never_blames_the_anchors_after_it(ws: Workspace) -> None:
    ws.write("roster.txt", "a\n")
    ws.write("later.txt", "1\n")
    declare(ws, "aaa", "import sys\nsys.exit(3)\n")
    declare(ws, "zzz", print_file("later.txt"))
    ws.memory("later", "anchor:zzz")
    ws.moor("bind", "--trust", "memories/later.md", check=True)
    ws.memory("broken", ["anchor:aaa", "anchor:zzz"])
    ws.write("later.txt", "2\n")
    states = {
        m["path"]: m for m in ws.moor("check", "--trust", "--format", "json").json()["memories"]
    }
    later = states["memories/later.md"]["anchors"][0]
    assert later["state"] == "drifted"
    broken = states["memories/broken.md"]["anchors"]
    assert (broken[0]["state"], broken[0]["code"]) == ("unverified", "process_failed")


def test_a_declaration_change_is_reported_never_read_as_changed_facts(ws: Workspace) -> None:
    ws.write("roster.txt", "a\n")
    declare(ws, "roster", print_file("roster.txt"))
    bound(ws)
    ws.write(
        "moor.toml",
        ws.read("moor.toml").replace('timeout = "20s"', 'timeout = "20s"\nenv = ["HOME"]'),
    )
    changed = anchor(ws, PROBE, "--trust")
    assert (changed["state"], changed["code"]) == ("drifted", "declaration_changed")


def test_changing_how_often_the_editor_observes_an_anchor_is_no_declaration_change(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "a\n")
    declare(ws, "roster", print_file("roster.txt"))
    bound(ws)
    toml = ws.read("moor.toml")
    ws.write("moor.toml", toml.replace('timeout = "20s"', 'timeout = "20s"\nevery = "1h"'))
    assert anchor(ws, PROBE, "--trust")["state"] == "current"
    # The control: a change of what runs is one.
    ws.write("moor.toml", toml.replace('timeout = "20s"', 'timeout = "20s"\nenv = ["HOME"]'))
    assert anchor(ws, PROBE, "--trust")["code"] == "declaration_changed"


@pytest.mark.parametrize(
    ("declaration", "said"),
    [
        ('command = "pytest -q"', "never a shell line"),
        ("command = []", "non-empty list"),
        ('command = ["x"]\ntimeout = "30"', "duration with its unit"),
        ('command = ["x"]\noutput_cap = "0"', "more than 0"),
        ('command = ["x"]\nfacts = "yaml"', '"lines" or "json"'),
        ('command = ["x"]\nstreak = 0', "streak"),
        ('command = ["x"]\nenv = ["PATH"]', "fixed by moor"),
        ('command = ["x"]\nshell = true', "unknown key"),
        ('command = ["x"]\nevery = "1s"', "every must be a duration"),
        ('command = ["x"]\nevery = 300', "every must be a duration"),
    ],
)
def test_a_bad_declaration_is_refused_with_its_line(
    ws: Workspace, declaration: str, said: str
) -> None:
    ws.memory("roster", "anchor:roster")
    ws.write("moor.toml", f'memory_roots = ["memories"]\n\n[anchors.roster]\n{declaration}\n')
    run = ws.moor("check")
    assert run.code == 2
    assert said in run.err
    assert "moor.toml:" in run.err
    assert "Traceback" not in run.err
    # Positive control: a good declaration is accepted.
    ws.write("moor.toml", 'memory_roots = ["memories"]\n\n[anchors.roster]\ncommand = ["x"]\n')
    assert ws.moor("check").code in (0, 1)


def test_add_binds_a_declared_anchor_and_refuses_an_undeclared_one(ws: Workspace) -> None:
    ws.write("roster.txt", "a\n")
    declare(ws, "roster", print_file("roster.txt"))
    refused = ws.moor("add", "About nothing", "--about", "anchor:nothing", "--trust")
    assert refused.code == 1
    assert "no [anchors.nothing] is declared" in refused.err
    added = ws.moor("add", "The roster is a", "--about", "anchor:roster", "--trust")
    assert added.code == 0, added.err
    memories = ws.moor("check", "--trust", "--format", "json").json()["memories"]
    assert [m["state"] for m in memories] == ["current"]


def test_moor_anchors_lists_command_and_code_anchors_with_their_last_look(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "a\n")
    ws.write("app.py", "def f():\n    return 1\n")
    declare(ws, "roster", print_file("roster.txt"), "streak = 3")
    bound(ws)
    ws.memory("code", "app.py#f")
    ws.moor("bind", check=True)
    ws.moor("check", "--trust", check=True)
    rows = {
        r["anchor"]: r for r in ws.moor("anchors", "--format", "json", check=True).json()["anchors"]
    }
    roster = rows["anchor:roster"]
    assert (roster["kind"], roster["streak"], roster["memories"]) == ("command", 3, [PROBE])
    assert roster["last_state"] == "current" and roster["last_observed"]
    assert rows["app.py#f"]["kind"] == "symbol"
    text = ws.moor("anchors", check=True).out
    assert "anchor:roster  (command, closed, streak 3, 1 memory)" in text


def test_moor_log_of_an_anchor_shows_its_observations_attempts_and_transition(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "a\n")
    ws.write("broken", "")
    declare(
        ws,
        "roster",
        "import os, sys\nif os.path.getsize('broken'):\n    sys.exit(4)\n"
        + print_file("roster.txt"),
    )
    bound(ws)
    ws.moor("check", "--trust", check=True)
    ws.write("broken", "yes")
    ws.moor("check", "--trust")
    ws.write("broken", "")
    ws.write("roster.txt", "b\n")
    ws.moor("check", "--trust")
    entries = ws.moor("log", "anchor:roster", "--format", "json", check=True).json()["entries"]
    seen = [(e["kind"], e["code"]) for e in entries]
    assert seen == [
        ("open", "bind"),
        ("still", "observed"),
        ("attempt", "process_failed"),
        ("transition", "drifted"),
        ("still", "observed"),
    ]
    assert {e["anchor"] for e in entries} == {"anchor:roster"}
    refused = ws.moor("log", "anchor:nothing")
    assert refused.code == 2 and "neither declared" in refused.err


def test_moor_diff_shows_the_facts_that_changed_since_bound_never_a_file_named_like_it(
    ws: Workspace,
) -> None:
    ws.write("roster.txt", "test_a\ntest_b\n")
    ws.write("anchor:roster", "PLANTED\n")  # a file named as the anchor: never its facts
    declare(ws, "roster", print_file("roster.txt"))
    bound(ws)
    same = ws.moor("diff", PROBE, "--trust", "--format", "json").json()["anchors"][0]
    assert (same["changed"], same["diff"]) == (False, "")
    ws.write("roster.txt", "test_a\ntest_c\n")
    run = ws.moor("diff", PROBE, "--trust")
    assert run.code == 1
    assert "-test_b\n+test_c\n" in run.out
    assert "--- anchor:roster (bound)" in run.out
    assert "PLANTED" not in run.out
    untrusted = ws.moor("diff", PROBE)
    assert "workspace_not_trusted" in untrusted.out and "test_c" not in untrusted.out


def test_declared_inputs_are_hashed_so_a_drift_says_whether_they_changed(
    ws: Workspace, tmp_path: Path
) -> None:
    ws.write("roster.txt", "a\n")
    ws.write("extra.txt", "x\n")
    script = "print(open('roster.txt').read() + open('extra.txt').read(), end='')\n"
    declare(ws, "roster", script, 'inputs = ["roster.txt"]')
    bound(ws)
    assert "inputs = " in ws.read("moor.lock")  # the bound inputs' digest is recorded
    ws.write("extra.txt", "y\n")  # not a declared input
    outside = anchor(ws, PROBE, "--trust")
    assert outside["state"] == "drifted"
    assert "its declared inputs did not" in str(outside["detail"])
    ws.write("extra.txt", "x\n")
    ws.write("roster.txt", "b\n")
    inside = anchor(ws, PROBE, "--trust")
    assert "and so did its inputs" in str(inside["detail"])
    # An input that leads outside the workspace is refused, never read.
    secret = tmp_path / "secret.txt"
    secret.write_text("s\n")
    (ws.root / "roster.txt").unlink()
    (ws.root / "roster.txt").symlink_to(secret)
    refused = anchor(ws, PROBE, "--trust")
    assert (refused["state"], refused["code"]) == ("unverified", "outside_workspace")


def test_a_kept_check_never_vouches_for_a_command_anchor(ws: Workspace) -> None:
    """A warm check answers from its kept report while the files it rests on are unchanged,
    but a command's output rests on more than files moor can stat: every check runs it."""
    ws.write("roster.txt", "test_a\ntest_b\n")
    ws.write("notes.py", "def kept() -> int:\n    return 1\n")
    declare(ws, "roster", print_file("roster.txt"))
    ws.memory("notes", "notes.py#kept")
    bound(ws)
    kept = ws.root / ".moor" / "kept-check.json"

    def settled() -> None:  # out of the kept report's racy window, as on a real machine
        old = time.time() - 3600
        for path in ws.root.rglob("*"):
            if path.is_file() and ".git" not in path.parts and ".moor" not in path.parts:
                os.utime(path, (old, old))

    settled()
    assert anchor(ws, PROBE, "--trust")["state"] == "current"
    assert not kept.exists()
    ws.write("roster.txt", "test_a\n")
    settled()
    assert anchor(ws, PROBE, "--trust")["state"] == "drifted"

    # The control: without the command anchor, the same workspace's check is kept.
    (ws.root / PROBE).unlink()
    settled()
    assert anchor(ws, "memories/notes.md")["state"] == "current"
    assert kept.exists()
