"""`moor doctor` (issue 27.3): the corpus's health through the real command on real
workspaces with git. Every "finds nothing" is paired with a control in the same test that
finds something, and each finding's fix is a command that, run, makes the finding go."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from moor_store.journal import Journal, NewEntry

from tests.conftest import Workspace

CODE = "def send(body):\n    return body\n\n\ndef receive():\n    return None\n"
SAID = "Send returns the body it is given, unchanged: callers rely on it."


def _git_workspace(ws: Workspace) -> Workspace:
    ws.git("init", "-q")
    ws.write("src/a.py", CODE)
    return ws


def _doctor(ws: Workspace) -> tuple[int, list[dict[str, Any]]]:
    run = ws.moor("doctor", "--format", "json")
    assert run.code in (0, 1), run.err
    answer = run.json()
    assert answer["needs_attention"] is (run.code == 1)
    return run.code, answer["findings"]


def _codes(findings: list[dict[str, Any]]) -> list[str]:
    return [finding["code"] for finding in findings]


def test_near_identical_memories_bound_to_the_same_code_are_found_and_superseding_fixes_it(
    ws: Workspace,
) -> None:
    _git_workspace(ws)
    ws.memory("one", "src/a.py#send", body=SAID)
    ws.memory("two", "src/a.py#send", body=SAID.upper() + "!")
    # The same words about other code are not duplicates (by anchor first) …
    ws.memory("elsewhere", "src/a.py#receive", body=SAID)
    # … nor are different words about the same code.
    ws.memory("other", "src/a.py#send", body="Send is cheap; call it in loops.")
    ws.moor("bind", check=True)

    code, findings = _doctor(ws)

    assert code == 1
    [duplicate] = findings
    assert duplicate["code"] == "duplicate"
    assert duplicate["paths"] == ["memories/one.md", "memories/two.md"]
    fix = duplicate["fix"].split()
    assert fix[:4] == ["moor", "supersede", "memories/two.md", "--by"]
    assert (
        ws.moor("supersede", "memories/two.md", "--by", "memories/one.md", "--why", "dup").code == 0
    )
    assert _doctor(ws) == (0, [])


def test_a_memory_whose_every_anchor_is_gone_is_found_and_one_still_anchored_is_not(
    ws: Workspace,
) -> None:
    _git_workspace(ws)
    ws.memory("lost", "src/a.py#send", body="Send is the one way out.")
    ws.memory("half", ["src/a.py#send", "src/a.py#receive"], body="They pair up.")
    ws.moor("bind", check=True)
    assert _doctor(ws) == (0, [])  # the control: bound, nothing gone yet

    ws.write("src/a.py", "def receive():\n    return None\n")
    code, findings = _doctor(ws)

    assert code == 1
    [gone] = [f for f in findings if f["code"] == "all_anchors_gone"]
    assert gone["paths"] == ["memories/lost.md"]
    assert gone["fix"].startswith("moor forget memories/lost.md --why")


def test_ungrounded_memories_beyond_the_configured_share_are_found(ws: Workspace) -> None:
    _git_workspace(ws)
    ws.memory("bound", "src/a.py#send", body="Send is the one way out.")
    for name in ("loose", "looser"):
        ws.write(
            f"memories/{name}.md",
            f"---\nconfidence: inferred\n---\n# {name}\n\nA note about nothing, {name}.\n",
        )
    ws.moor("bind", check=True)
    ws.write("moor.toml", 'memory_roots = ["memories"]\n[doctor]\nungrounded_share = 0.7\n')
    assert _doctor(ws) == (0, [])  # 2 of 3 is within 0.7

    ws.write("moor.toml", 'memory_roots = ["memories"]\n[doctor]\nungrounded_share = 0.5\n')
    code, findings = _doctor(ws)

    assert code == 1
    [share] = findings
    assert share["code"] == "ungrounded_share"
    assert share["paths"] == ["memories/loose.md", "memories/looser.md"]
    assert "2 of 3" in share["message"]


def test_a_share_that_is_no_share_is_refused_naming_the_file_line_and_key(
    ws: Workspace,
) -> None:
    _git_workspace(ws)
    for bad in ("2", "-0.1", '"half"', "true"):
        ws.write("moor.toml", f'memory_roots = ["memories"]\n[doctor]\nungrounded_share = {bad}\n')
        run = ws.moor("doctor")
        assert run.code == 2, (bad, run.out, run.err)
        assert "moor.toml:3" in run.err and "ungrounded_share" in run.err
        assert "Traceback" not in run.err
    ws.write("moor.toml", 'memory_roots = ["memories"]\n[doctor]\nunreaffirmed_months = 0\n')
    run = ws.moor("doctor")
    assert run.code == 2 and "unreaffirmed_months" in run.err
    ws.write("moor.toml", 'memory_roots = ["memories"]\n[doctor]\nungrounded_shar = 0.5\n')
    run = ws.moor("doctor")
    assert run.code == 2 and "moor.toml:3" in run.err and "ungrounded_shar" in run.err
    ws.write("moor.toml", 'memory_roots = ["memories"]\n[doctor]\nungrounded_share = 1\n')
    assert ws.moor("doctor").code == 0  # the control: a share it can use


def test_a_memory_nobody_reaffirmed_for_months_while_its_code_changed_is_found(
    ws: Workspace,
) -> None:
    _git_workspace(ws)
    ws.memory("old", "src/a.py#send", body="Send is the one way out.")
    ws.memory("fresh", "src/a.py#receive", body="Receive waits for nothing.")
    ws.moor("bind", check=True)
    # This clone's history as a clone bound two years ago would have it: the same bind
    # entries, stamped then (the journal's real API, with its clock).
    path = ws.root / ".moor/journal.sqlite"
    binds = Journal(path).entries()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with Journal(path, clock=lambda: "2024-01-02T03:04:05.000Z") as old:
        old.append(
            [NewEntry(**{k: getattr(e, k) for k in NewEntry.__dataclass_fields__}) for e in binds]
        )
    ws.write("src/a.py", CODE.replace("return body", "return body * 2").replace("None", "0"))
    ws.moor("check")  # journals both transitions
    assert ws.moor("reaffirm", "memories/fresh.md", "--why", "still true").code == 0

    code, findings = _doctor(ws)

    assert code == 1
    [stale] = [f for f in findings if f["code"] == "unreaffirmed"]
    assert stale["paths"] == ["memories/old.md"]  # `fresh`, reaffirmed today, is not
    assert "2024-01-02" in stale["message"]
    assert ws.moor("reaffirm", "memories/old.md", "--why", "still true").code == 0
    assert "unreaffirmed" not in _codes(_doctor(ws)[1])


def test_a_corrupt_journal_is_found_on_the_real_file_and_left_as_it_is(ws: Workspace) -> None:
    _git_workspace(ws)
    ws.memory("one", "src/a.py#send", body="Send is the one way out.")
    ws.moor("bind", check=True)
    for i in range(12):  # entries and snapshots over several pages
        ws.write(f"src/m{i}.py", f"def f{i}():\n    return '{'x' * 900}'\n")
        ws.memory(f"m{i}", f"src/m{i}.py#f{i}", body=f"Note {i}.")
    ws.moor("bind", check=True)
    journal = ws.root / ".moor/journal.sqlite"
    with sqlite3.connect(journal) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert "journal_corrupt" not in _codes(_doctor(ws)[1])  # the control: a sound file

    data = bytearray(journal.read_bytes())
    page = 4096
    assert len(data) > 6 * page
    data[3 * page : 5 * page] = b"\x5a" * (2 * page)  # two pages of the tables, not the header
    journal.write_bytes(bytes(data))

    code, findings = _doctor(ws)

    assert code == 1
    [corrupt] = [f for f in findings if f["code"].startswith("journal_")]
    assert corrupt["code"] in ("journal_corrupt", "journal_unreadable")
    assert journal.read_bytes() == bytes(data)  # seen as it is: not set aside, not rebuilt
    assert not list(journal.parent.glob("journal.sqlite.broken-*"))


def test_a_gap_in_the_journal_sequence_is_found(ws: Workspace) -> None:
    _git_workspace(ws)
    ws.memory("one", ["src/a.py#send", "src/a.py#receive"], body="They pair up.")
    ws.moor("bind", check=True)
    assert "journal_gap" not in _codes(_doctor(ws)[1])  # the control: 1..N

    with sqlite3.connect(ws.root / ".moor/journal.sqlite") as db:
        db.execute("DROP TRIGGER journal_no_delete")  # what only another program can do
        db.execute("DELETE FROM journal WHERE seq = 1")

    code, findings = _doctor(ws)

    assert code == 1
    [gap] = [f for f in findings if f["code"] == "journal_gap"]
    assert "seq 1" in gap["message"]


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def test_stray_temporary_files_of_a_dead_writer_are_found_and_no_one_elses(
    ws: Workspace,
) -> None:
    _git_workspace(ws)
    ws.memory("one", "src/a.py#send", body="Send is the one way out.")
    ws.moor("bind", check=True)
    ws.write("notes.tmp", "a user's file")  # not moor's shape
    ws.write(f".moor.lock.{os.getpid()}.0123abcd.tmp", "a live writer's")  # alive: not stray
    assert _doctor(ws) == (0, [])

    stray = f".moor.lock.{_dead_pid()}.0123abcd.tmp"
    ws.write(stray, "half a lock")
    code, findings = _doctor(ws)

    assert code == 1
    [found] = findings
    assert found["code"] == "stray_temporary" and found["paths"] == [stray]
    assert (ws.root / stray).exists()  # reported, not removed


def test_moor_hooks_installed_for_some_events_only_are_found(ws: Workspace) -> None:
    _git_workspace(ws)
    assert ws.moor("hooks", "install", "claude").code == 0
    assert _doctor(ws) == (0, [])  # the control: a whole installation

    settings = ws.read(".claude/settings.json")
    import json

    value = json.loads(settings)
    first = sorted(value["hooks"])[0]
    del value["hooks"][first]
    ws.write(".claude/settings.json", json.dumps(value))
    code, findings = _doctor(ws)
    assert code == 1
    [partial] = findings
    assert (
        partial["code"] == "hooks_partly_installed"
        and partial["fix"] == "moor hooks install claude"
    )
    assert first in partial["message"]

    ws.write(".claude/settings.json", "{not json")
    assert _codes(_doctor(ws)[1]) == ["hooks_settings_unreadable"]


def test_gemini_and_cursor_hooks_installed_in_part_or_unreadable_are_found(
    ws: Workspace,
) -> None:
    import json

    _git_workspace(ws)
    for agent in ("gemini", "cursor"):
        assert ws.moor("hooks", "install", agent).code == 0
    assert _doctor(ws) == (0, [])  # the control: whole installations

    hooks = json.loads(ws.read(".cursor/hooks.json"))
    del hooks["hooks"]["stop"]
    ws.write(".cursor/hooks.json", json.dumps(hooks))
    ws.write(".gemini/settings.json", "{not json")
    code, findings = _doctor(ws)

    assert code == 1
    by_code = {finding["code"]: finding for finding in findings}
    assert set(by_code) == {"hooks_partly_installed", "hooks_settings_unreadable"}
    partial = by_code["hooks_partly_installed"]
    assert partial["fix"] == "moor hooks install cursor" and "stop" in partial["message"]
    assert partial["paths"] == [".cursor/hooks.json"]
    unreadable = by_code["hooks_settings_unreadable"]
    assert unreadable["paths"] == [".gemini/settings.json"]
    assert "moor hooks install gemini" in unreadable["fix"]


def test_an_mcp_configuration_that_is_not_json_is_found(ws: Workspace) -> None:
    _git_workspace(ws)
    ws.write(".mcp.json", '{"mcpServers": {"moor": {"command": "moor", "args": ["mcp"]}}}\n')
    assert _doctor(ws) == (0, [])  # the control: a readable one

    ws.write(".mcp.json", '{"mcpServers": {"moor": {"command": "moor",\n')
    code, findings = _doctor(ws)

    assert code == 1
    [unreadable] = findings
    assert unreadable["code"] == "mcp_config_unreadable" and "line 2" in unreadable["message"]


def test_a_hook_socket_nobody_answers_on_is_told_and_a_live_one_is_not(ws: Workspace) -> None:
    _git_workspace(ws)
    ws.memory("one", "src/a.py#send", body="Send is the one way out.")
    ws.moor("bind", check=True)
    path = ws.root / ".moor/hooks.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as live:
        live.bind(str(path))
        live.listen(1)
        assert _doctor(ws) == (0, [])
    # Closed: the name stays, nobody answers.
    code, findings = _doctor(ws)
    assert code == 0  # nothing to act on: the next hook starts a server
    [told] = findings
    assert told["code"] == "hook_server_gone" and told["act"] is False


def test_the_text_report_names_each_finding_and_its_fix(ws: Workspace) -> None:
    _git_workspace(ws)
    ws.memory("one", "src/a.py#send", body=SAID)
    ws.memory("two", "src/a.py#send", body=SAID)
    ws.moor("bind", check=True)

    run = ws.moor("doctor")

    assert run.code == 1
    assert "[duplicate]" in run.out and "fix: moor supersede memories/two.md" in run.out
    assert "1 to act on" in run.out


def test_a_custom_anchor_no_memory_is_about_is_found_and_closing_it_fixes_it(
    ws: Workspace, monkeypatch: Any, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("MOOR_TRUST", raising=False)
    _git_workspace(ws)
    ws.write("probes/roster.py", "print('test_a')\n")
    command = f'["{sys.executable}", "probes/roster.py"]'
    ws.write(
        "moor.toml",
        f'memory_roots = ["memories"]\n\n[anchors.roster]\ncommand = {command}\n'
        f"\n[anchors.spare]\ncommand = {command}\n",
    )
    ws.memory("roster", "anchor:roster")  # the control: an anchor a memory is about
    ws.moor("bind", "--trust", check=True)

    code, findings = _doctor(ws)

    assert code == 1
    [unbound] = findings
    assert unbound["code"] == "anchor_unbound"
    assert "anchor:spare" in unbound["message"] and "anchor:roster" not in unbound["message"]
    assert unbound["fix"].startswith("moor close anchor:spare --why")
    closed = ws.moor("close", "anchor:spare", "--why", "no memory is about it")
    assert closed.code == 0, closed.err
    assert _doctor(ws) == (0, [])


def test_a_damaged_recall_index_is_found_and_removing_it_fixes_it(ws: Workspace) -> None:
    _git_workspace(ws)
    for i in range(12):  # documents over several pages
        ws.write(f"src/m{i}.py", f"def f{i}():\n    return {i}\n")
        ws.memory(f"m{i}", f"src/m{i}.py#f{i}", body=f"Note {i} " + "word " * 300)
    ws.moor("bind", check=True)
    assert ws.moor("recall", "note").code == 0
    index = ws.root / ".moor/recall.sqlite"
    with sqlite3.connect(index) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert _doctor(ws) == (0, [])  # the control: a sound index

    data = bytearray(index.read_bytes())
    assert len(data) > 6 * 4096
    data[3 * 4096 : 5 * 4096] = b"\x5a" * (2 * 4096)
    index.write_bytes(bytes(data))
    code, findings = _doctor(ws)

    assert code == 1
    [damaged] = findings
    assert damaged["code"] == "index_needs_rebuild"
    assert index.read_bytes() == bytes(data)  # reported, not rebuilt by the look
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    assert ws.moor("recall", "note").code == 0
    assert _doctor(ws) == (0, [])


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git/" not in f"{p.relative_to(root)}/"
    }


def test_the_look_changes_nothing_a_command_that_opens_the_workspace_would(
    ws: Workspace, monkeypatch: Any, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    _git_workspace(ws)
    ws.write("probes/roster.py", "open('ran.txt', 'a').write('ran')\nprint('test_a')\n")
    command = f'["{sys.executable}", "probes/roster.py"]'
    ws.write("moor.toml", f'memory_roots = ["memories"]\n[anchors.roster]\ncommand = {command}\n')
    ws.memory("roster", "anchor:roster")
    before = _tree(ws.root)
    assert _doctor(ws)[0] in (0, 1)
    assert _tree(ws.root) == before  # no journal created, no command run
    assert not (ws.root / ".moor").exists()

    ws.moor("bind", "--trust", check=True)
    (ws.root / "ran.txt").unlink()
    stray = f".moor/.hook-answers.json.{_dead_pid()}.0123abcd.tmp"
    ws.write(stray, "half an answer")
    before = _tree(ws.root)

    code, findings = _doctor(ws)

    assert "stray_temporary" in _codes(findings) and code == 1
    assert _tree(ws.root) == before  # the stray is reported and left; nothing ran
    # The control: a command that opens the workspace sweeps it, and a trusted check runs
    # the anchor's command.
    ws.moor("check", "--trust")
    assert not (ws.root / stray).exists() and (ws.root / "ran.txt").exists()


def test_an_action_killed_half_way_is_found_and_any_command_completes_it(ws: Workspace) -> None:
    _git_workspace(ws)
    ws.memory("one", "src/a.py#send", body="Send is the one way out.")
    ws.moor("bind", check=True)
    ws.write("src/a.py", CODE.replace("return body", "return body or None"))
    assert _codes(_doctor(ws)[1]) == []  # the control: drifted is no doctor's finding
    # A real reaffirm, killed by its own fault point after its first file write.
    killed = ws.moor(
        "reaffirm",
        "memories/one.md",
        "--why",
        "None for an empty body is fine",
        env={"MOOR_FAULT_AT": "after-file-1"},
        process=True,
    )
    assert killed.code == -9, killed.err
    assert (ws.root / ".moor/intent.json").exists()

    code, findings = _doctor(ws)

    assert code == 1
    [interrupted] = findings
    assert interrupted["code"] == "interrupted_action"
    assert interrupted["paths"] == [".moor/intent.json"]
    assert (ws.root / ".moor/intent.json").exists()  # the look completes nothing
    fix = interrupted["fix"].split("#")[0].split()
    assert fix == ["moor", "check"]
    assert "completed an interrupted" in ws.moor(*fix[1:]).err
    assert _doctor(ws) == (0, [])
    assert ws.state("memories/one.md") == "current"  # the reaffirm was carried through


def test_a_hook_socket_path_that_is_not_a_socket_is_found_and_removing_it_fixes_it(
    ws: Workspace,
) -> None:
    _git_workspace(ws)
    ws.memory("one", "src/a.py#send", body="Send is the one way out.")
    ws.moor("bind", check=True)
    path = ws.root / ".moor/hooks.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as live:
        live.bind(str(path))
        live.listen(1)
        assert _doctor(ws) == (0, [])  # the control: a socket that answers is no finding
    path.unlink()
    path.write_text("not a socket", encoding="utf-8")

    code, findings = _doctor(ws)

    assert code == 1
    [found] = findings
    assert found["code"] == "hook_socket_not_a_socket" and found["act"] is True
    assert found["paths"] == [".moor/hooks.sock"] and found["fix"] == "rm -- .moor/hooks.sock"
    subprocess.run(found["fix"].split(), cwd=ws.root, check=True)
    assert _doctor(ws) == (0, [])
