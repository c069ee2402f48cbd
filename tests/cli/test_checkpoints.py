"""`moor checkpoint save | resume | list`, run as the real command on a real workspace."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from moor_engine.memory import checkpoints

from tests.conftest import Workspace


def test_a_saved_checkpoint_resumes_newest_first_with_its_steps_and_files(ws: Workspace) -> None:
    ws.write("src/a.py", "def send():\n    return 1\n")
    first = ws.moor(
        "checkpoint", "save", "--agent", "claude-1", "Half way through the retry work",
        "--next", "test the timeout", "--next", "write the memory", "--file", "src/a.py",
        "--format", "json",
    )  # fmt: skip
    ws.moor("checkpoint", "save", "--agent", "claude-1", "Retries done", check=True)
    ws.moor("checkpoint", "save", "--agent", "other", "Not mine", check=True)

    assert first.code == 0, first.err
    saved = first.json()
    on_disk = json.loads((ws.root / saved["path"]).read_text(encoding="utf-8"))
    assert on_disk["summary"] == "Half way through the retry work"
    assert saved["path"].startswith(".moor/checkpoints/claude-1/")

    newest = ws.moor("checkpoint", "resume", "--agent", "claude-1", "--format", "json")
    assert newest.code == 0
    assert [c["summary"] for c in newest.json()["checkpoints"]] == ["Retries done"]
    both = ws.moor(
        "checkpoint", "resume", "--agent", "claude-1", "--limit", "5", "--format", "json"
    )
    shown = both.json()["checkpoints"]
    assert [c["summary"] for c in shown] == ["Retries done", "Half way through the retry work"]
    assert shown[1]["next_steps"] == ["test the timeout", "write the memory"]
    assert shown[1]["files"] == ["src/a.py"]
    text = ws.moor("checkpoint", "resume", "--agent", "claude-1", "--limit", "5").out
    assert text.index("Retries done") < text.index("next: test the timeout")

    listed = json.loads(ws.moor("checkpoint", "list", "--format", "json").out)
    assert [(a["agent"], a["count"]) for a in listed] == [("claude-1", 2), ("other", 1)]


def test_an_agent_with_no_checkpoint_resumes_to_nothing_with_exit_1(ws: Workspace) -> None:
    ws.moor("checkpoint", "save", "--agent", "someone", "A note", check=True)
    found = ws.moor("checkpoint", "resume", "--agent", "someone")  # the control
    fresh = ws.moor("checkpoint", "resume", "--agent", "nobody")
    assert found.code == 0 and "A note" in found.out
    assert fresh.code == 1 and "no checkpoints for agent nobody" in fresh.out


@pytest.mark.parametrize("agent", ["a/b", "..", "", "x" * 65, "name with space", "ä"])
def test_an_agent_name_that_is_not_a_plain_folder_name_is_refused(
    ws: Workspace, agent: str
) -> None:
    good = ws.moor("checkpoint", "save", "--agent", "ok-agent_1.2", "Fine")  # the control
    bad = ws.moor("checkpoint", "save", "--agent", agent, "Nope")
    assert good.code == 0
    assert bad.code == 2 and f"agent {agent!r} is not an agent name" in bad.err
    assert "Traceback" not in bad.err
    assert sorted(p.name for p in (ws.root / ".moor" / "checkpoints").iterdir()) == ["ok-agent_1.2"]


def test_a_checkpoint_folder_saved_under_an_uppercase_name_is_refused_and_named_by_list(
    ws: Workspace,
) -> None:
    saved = ws.moor("checkpoint", "save", "--agent", "claude", "Mine", "--format", "json").json()
    old = ws.root / ".moor" / "checkpoints" / "Claude"
    old.mkdir()
    (old / Path(saved["path"]).name).write_bytes((ws.root / saved["path"]).read_bytes())

    mine = ws.moor("checkpoint", "resume", "--agent", "claude")  # the control: same file
    upper = ws.moor("checkpoint", "resume", "--agent", "Claude")
    listed = ws.moor("checkpoint", "list", "--format", "json")
    assert mine.code == 0 and "Mine" in mine.out
    assert upper.code == 2 and "lowercase" in upper.err and "Traceback" not in upper.err
    assert [a["agent"] for a in json.loads(listed.out)] == ["claude"]
    assert ".moor/checkpoints/Claude: 'Claude' is not an agent name" in listed.err
    assert "rename the folder to claude" in listed.err


def test_an_empty_summary_or_a_file_outside_the_workspace_is_refused(ws: Workspace) -> None:
    empty = ws.moor("checkpoint", "save", "--agent", "a", "   ")
    outside = ws.moor("checkpoint", "save", "--agent", "a", "S", "--file", "../secret.txt")
    inside = ws.moor("checkpoint", "save", "--agent", "a", "S", "--file", "./docs/x.md")
    assert empty.code == 2 and "needs a summary" in empty.err
    assert outside.code == 2 and "../secret.txt" in outside.err
    assert inside.code == 0  # the control: a path inside is taken, made canonical
    assert ws.moor("checkpoint", "resume", "--agent", "a", "--format", "json").json()[
        "checkpoints"
    ][0]["files"] == ["docs/x.md"]


def test_a_checkpoints_folder_that_is_a_link_outside_is_refused(
    ws: Workspace, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    ws.moor("checkpoint", "save", "--agent", "a", "Before the link", check=True)  # the control
    folder = ws.root / ".moor" / "checkpoints" / "b"
    folder.symlink_to(outside, target_is_directory=True)
    linked = ws.moor("checkpoint", "save", "--agent", "b", "Through the link")
    assert linked.code == 2 and "outside the workspace" in linked.err
    assert list(outside.iterdir()) == []


def test_saves_at_the_same_moment_each_keep_their_own_file(ws: Workspace) -> None:
    from datetime import UTC, datetime

    moment = datetime(2026, 12, 2, 8, 0, 0, 123000, tzinfo=UTC)
    saved: list[str] = []
    lock = threading.Lock()

    def save(i: int) -> None:
        checkpoint = checkpoints.save(ws.root, "many", f"save {i}", now=moment)
        with lock:
            saved.append(checkpoint.id)

    threads = [threading.Thread(target=save, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(saved) == sorted(f"20261202T080000.123Z-{n}" for n in range(1, 13))
    resumed = ws.moor(
        "checkpoint", "resume", "--agent", "many", "--limit", "12", "--format", "json"
    )
    ids = [c["id"] for c in resumed.json()["checkpoints"]]
    assert ids == [f"20261202T080000.123Z-{n}" for n in range(12, 0, -1)]  # 10 sorts after 9
    assert len({c["summary"] for c in resumed.json()["checkpoints"]}) == 12


def test_an_unreadable_checkpoint_is_named_and_left_out(ws: Workspace) -> None:
    ws.moor("checkpoint", "save", "--agent", "a", "Good one", check=True)
    folder = ws.root / ".moor" / "checkpoints" / "a"
    (folder / "29991231T235959.999Z-1.json").write_text("{not json", encoding="utf-8")
    resumed = ws.moor("checkpoint", "resume", "--agent", "a", "--format", "json")
    assert resumed.code == 0
    body = resumed.json()
    assert [c["summary"] for c in body["checkpoints"]] == ["Good one"]
    assert body["unreadable"] == [".moor/checkpoints/a/29991231T235959.999Z-1.json"]
    assert os.path.exists(folder / "29991231T235959.999Z-1.json")  # never removed
