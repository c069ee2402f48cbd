"""The path from the issue: init, bind, check, diff, reaffirm, log — real command, real files."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from tests.conftest import Workspace

CLIENT = '''
class Client:
    def send(self, payload):
        """Send one payload."""
        for attempt in range(3):
            if self.transport.put(payload):
                return True
        return False
'''
CLIENT_CHANGED = CLIENT.replace("range(3)", "range(5)")


def setup_retry(ws: Workspace) -> str:
    ws.write("src/net/client.py", CLIENT)
    ws.memory("retry", "src/net/client.py#Client.send", body="Retries are idempotent.")
    ws.moor("bind", check=True)
    return "memories/retry.md"


def test_init_creates_config_memories_folder_and_ignores_the_local_state(ws: Workspace) -> None:
    (ws.root / "moor.toml").unlink()
    first = ws.moor("init")
    assert first.code == 0
    assert (ws.root / "moor.toml").is_file()
    assert (ws.root / "memories").is_dir()
    assert ".moor/" in ws.read(".gitignore").splitlines()
    second = ws.moor("init")
    assert second.code == 0
    assert ws.read(".gitignore").count(".moor/") == 1
    assert "already" in second.out


def test_the_issue_walkthrough_bind_drift_diff_reaffirm_log(ws: Workspace) -> None:
    memory = setup_retry(ws)
    assert ws.moor("check").code == 0
    ws.write("src/net/client.py", CLIENT_CHANGED)
    run = ws.moor("check")
    assert run.code == 1
    assert "drifted" in run.out and "body" in run.out

    diff = ws.moor("diff", memory)
    # The method is shown dedented, as if it were its own file.
    assert "-    for attempt in range(3):" in diff.out
    assert "+    for attempt in range(5):" in diff.out
    assert " def send(self, payload):" in diff.out

    reaffirm = ws.moor("reaffirm", memory, "--why", "still true: retries are idempotent")
    assert reaffirm.code == 0, reaffirm.err
    assert ws.moor("check").code == 0

    log = ws.moor("log", memory)
    assert log.code == 0
    lines = log.out.splitlines()
    kinds = [line.split("  ")[2] for line in lines]
    assert kinds[0] == "open" and "bind" in lines[0]
    assert "transition" in kinds
    assert lines[-1].split("  ")[2] == "revise"
    assert "still true: retries are idempotent" in lines[-1]


def test_reaffirm_without_a_reason_is_a_usage_error(ws: Workspace) -> None:
    memory = setup_retry(ws)
    assert ws.moor("reaffirm", memory).code == 2
    assert ws.moor("reaffirm", memory, "--why", "  ").code == 2
    assert ws.moor("reaffirm", memory, "--why", "fine").code == 0


def test_editing_the_memory_text_after_bind_is_rewritten_and_reaffirm_clears_it(
    ws: Workspace,
) -> None:
    memory = setup_retry(ws)
    path = ws.root / memory
    # Line endings alone are not a rewrite ...
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert ws.state(memory) == "current"
    # ... a real edit is.
    path.write_text(
        path.read_text(encoding="utf-8").replace("idempotent", "safe"), encoding="utf-8"
    )
    assert ws.state(memory) == "rewritten"
    assert ws.moor("check").code == 1
    ws.moor("reaffirm", memory, "--why", "reworded", check=True)
    assert ws.state(memory) == "current"


def test_a_memory_without_about_is_ungrounded_and_does_not_fail_the_check(ws: Workspace) -> None:
    ws.write("memories/loose.md", "---\nconfidence: inferred\n---\n# Loose idea\n")
    run = ws.moor("check", "--format", "json")
    assert run.code == 0
    assert run.json()["memories"][0]["state"] == "ungrounded"
    # Control: an unbound grounded memory next to it does need a look.
    ws.write("src/net/client.py", CLIENT)
    ws.memory("retry", "src/net/client.py#Client.send")
    assert ws.moor("check").code == 1
    assert ws.state("memories/retry.md") == "unbound"


def test_check_json_has_the_documented_shape(ws: Workspace) -> None:
    memory = setup_retry(ws)
    ws.write("src/net/client.py", CLIENT_CHANGED)
    report = ws.moor("check", "--format", "json").json()
    assert set(report) == {"memories", "summary"}
    assert report["summary"] == {"drifted": 1}
    entry = report["memories"][0]
    assert entry["path"] == memory and entry["state"] == "drifted"
    anchor = entry["anchors"][0]
    for key in ("ref", "state", "axes", "reason", "code", "moved_to"):
        assert key in anchor
    assert anchor["axes"] == ["body"]


def test_check_sarif_points_at_the_about_line(ws: Workspace) -> None:
    memory = setup_retry(ws)
    ws.write("src/net/client.py", CLIENT_CHANGED)
    run = ws.moor("check", "--format", "sarif")
    assert run.code == 1
    sarif = json.loads(run.out)
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert len(results) == 1
    assert results[0]["ruleId"] == "moor/drifted"
    location = results[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == memory
    about_line = ws.read(memory).splitlines().index("about:") + 2
    assert location["region"]["startLine"] == about_line


def test_a_fresh_clone_without_the_journal_gets_the_same_states(ws: Workspace) -> None:
    setup_retry(ws)
    ws.write("src/other.py", "def stable():\n    return 1\n")
    ws.memory("stable", "src/other.py#stable")
    ws.moor("bind", check=True)
    ws.write("src/net/client.py", CLIENT_CHANGED)
    before = {path: m["state"] for path, m in ws.states().items()}
    assert before == {"memories/retry.md": "drifted", "memories/stable.md": "current"}
    shutil.rmtree(ws.root / ".moor")
    after = {path: m["state"] for path, m in ws.states().items()}
    assert after == before


def test_the_journal_is_append_only_and_gap_free_after_real_commands(ws: Workspace) -> None:
    memory = setup_retry(ws)
    ws.write("src/net/client.py", CLIENT_CHANGED)
    ws.moor("check")
    ws.moor("reaffirm", memory, "--why", "ok", check=True)
    db = sqlite3.connect(ws.root / ".moor" / "journal.sqlite")
    try:
        tables = {row[0] for row in db.execute("select name from sqlite_master where type='table'")}
        journal_table = "journal" if "journal" in tables else sorted(tables)[0]
        seqs = [row[0] for row in db.execute(f"select seq from {journal_table} order by seq")]
        assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) >= 3
        with pytest.raises(sqlite3.DatabaseError):
            db.execute(f"update {journal_table} set reason = 'forged'")
        with pytest.raises(sqlite3.DatabaseError):
            db.execute(f"delete from {journal_table}")
    finally:
        db.close()


def test_a_markdown_section_reference_drifts_when_its_text_changes(ws: Workspace) -> None:
    ws.write(
        "docs/arch.md",
        "# Architecture\n\n## Storage\n\nSQLite.\n\n"
        "### Journal\n\nAppend-only.\n\n## Other\n\nX.\n",
    )
    ws.memory("journal", "docs/arch.md#Storage > Journal")
    ws.memory("other", "docs/arch.md#Architecture > Other")
    ws.moor("bind", check=True)
    ws.write(
        "docs/arch.md",
        "# Architecture\n\n## Storage\n\nSQLite.\n\n"
        "### Journal\n\nAppend-only,  \nforever.\n\n## Other\n\nX.\n",
    )
    states = ws.states()
    assert states["memories/journal.md"]["state"] == "drifted"
    assert states["memories/other.md"]["state"] == "current"


def test_check_exits_2_on_a_usage_error(ws: Workspace) -> None:
    assert ws.moor("check", "no/such/thing").code == 2
    assert ws.moor("frobnicate").code == 2
    assert ws.moor("check").code == 0


def test_a_full_bind_drops_lock_entries_of_deleted_memory_files(ws: Workspace) -> None:
    memory = setup_retry(ws)
    ws.write("src/other.py", "def stable():\n    return 1\n")
    ws.memory("stable", "src/other.py#stable")
    ws.moor("bind", check=True)
    (ws.root / memory).unlink()
    run = ws.moor("bind")
    assert run.code == 0
    assert "no longer exists" in run.out
    lock = ws.read("moor.lock")
    assert memory not in lock
    # Control: the memory that still exists keeps its entry.
    assert "memories/stable.md" in lock


def test_paths_are_relative_to_the_folder_given_with_dash_c(ws: Workspace) -> None:
    import subprocess
    import sys

    memory = setup_retry(ws)
    run = subprocess.run(
        [sys.executable, "-m", "moor", "-C", ws.root.name, "log", memory],
        cwd=ws.root.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "open  bind" in run.stdout
    # Control: the same relative path from the parent folder without -C is not a memory.
    ws_parent = subprocess.run(
        [sys.executable, "-m", "moor", "log", memory],
        cwd=ws.root.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ws_parent.returncode == 2


def test_a_reader_closing_the_pipe_early_is_not_an_error(ws: Workspace) -> None:
    import subprocess
    import sys

    setup_retry(ws)
    for index in range(300):
        ws.memory(f"m{index}", "src/net/client.py#Client.send")
    reader = subprocess.Popen(
        [sys.executable, "-m", "moor", "check", "-v", "--format", "json"],
        cwd=ws.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.read(10)
    reader.stdout.close()
    reader.wait(timeout=60)
    assert "internal error" not in reader.stderr.read().decode()


def test_check_narrows_to_memories_folders_or_the_code_they_are_about(ws: Workspace) -> None:
    setup_retry(ws)
    ws.write("src/other.py", "def stable():\n    return 1\n")
    ws.memory("stable", "src/other.py#stable")
    ws.moor("bind", check=True)
    by_code = ws.moor("check", "--format", "json", "src/net/client.py").json()
    assert [m["path"] for m in by_code["memories"]] == ["memories/retry.md"]
    by_memory = ws.moor("check", "--format", "json", "memories/stable.md").json()
    assert [m["path"] for m in by_memory["memories"]] == ["memories/stable.md"]
    # Control: the folder holds both.
    by_folder = ws.moor("check", "--format", "json", "memories").json()
    assert len(by_folder["memories"]) == 2


def test_diff_keeps_a_changed_last_line_before_and_after_on_lines_of_their_own(
    ws: Workspace,
) -> None:
    ws.write("src/g.py", "def g():\n    return 2\n")
    ws.memory("g", "src/g.py#g")
    ws.moor("bind", check=True)
    ws.write("src/g.py", "def g():\n    return 3\n")
    lines = ws.moor("diff", "memories/g.md").out.splitlines()
    assert "-    return 2" in lines and "+    return 3" in lines
    # Control: the glued form the bug produced is absent, whatever the rendering.
    assert not any("return 2+" in line for line in lines)
