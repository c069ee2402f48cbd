"""A typo cannot corrupt moor's files (issue 20, item 10): `moor context --write FILE` refuses
a FILE that is moor's own, git's or a memory — exit 2, a message naming why, the file
byte-identical (or still absent) — and writes a normal target, through the real command."""

from __future__ import annotations

import os

from tests.conftest import Workspace

CODE = "def send(payload):\n    return payload\n"

# Each refused target, with the words of the reason the refusal gives.
REFUSED = [
    ("moor.lock", "moor's own lock file"),
    ("MOOR.LOCK", "moor's own lock file"),  # the same file on a case-insensitive disk
    ("moor.toml", "moor's own configuration file"),
    (".moor/journal.sqlite", "moor's own state (under .moor/)"),
    (".moor/CONTEXT.md", "moor's own state (under .moor/)"),
    (".git/config", "git's own (under .git/)"),
    (".git/info/AGENTS.md", "git's own (under .git/)"),
    ("vendor/lib/.git/config", "git's own (under .git/)"),
    (".gitignore", "git reads it as its own configuration"),
    ("memories/send.md", "under the memory folder memories/"),
    ("memories/AGENTS.md", "under the memory folder memories/"),
    ("memories/notes.txt", "under the memory folder memories/"),
    ("docs/lock-link.md", "(which leads to moor.lock): moor writes no memories block"),
]


def snapshot(ws: Workspace) -> dict[str, bytes]:
    """Every file in the workspace (.git's and .moor's too) and its bytes."""
    files = {}
    for folder, _, names in os.walk(ws.root):
        for name in names:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                with open(path, "rb") as file:
                    files[os.path.relpath(path, ws.root)] = file.read()
    return files


def test_context_refuses_to_write_into_moors_gits_or_a_memory_file_and_writes_agents_md(
    ws: Workspace,
) -> None:
    ws.git("init", "-q")
    ws.write("net/send.py", CODE)
    ws.memory("send", "net/send.py#send", body="Retries are safe: send attaches a key.")
    ws.moor("bind", check=True)
    ws.moor("check", check=True)  # makes the journal
    ws.write(".gitignore", "*.pyc\n")
    ws.write("vendor/lib/.git/config", "[core]\n")
    (ws.root / "docs").mkdir()
    os.symlink("../moor.lock", ws.root / "docs" / "lock-link.md")
    before = snapshot(ws)
    for target, why in REFUSED:
        run = ws.moor("context", "--write", target)
        assert run.code == 2, (target, run)
        assert why in run.err and "moor writes no memories block there" in run.err, (target, run)
        assert "internal error" not in run.err
        assert run.out == ""
    assert snapshot(ws) == before  # nothing written, nothing created
    assert ws.moor("check").code == 0
    # The controls: the usual targets are written, and the check still passes.
    for target in ("AGENTS.md", "docs/CONTEXT.md"):
        run = ws.moor("context", "--write", target)
        assert run.code == 0, (target, run)
        assert "Retries are safe" in ws.read(target)
    assert ws.moor("context", "--check", "AGENTS.md").code == 0
    assert ws.moor("check").code == 0


def test_rules_place_no_agents_md_in_moors_or_gits_folders_and_do_beside_code(
    ws: Workspace,
) -> None:
    ws.write("net/send.py", CODE)
    ws.write(".moor/tools/tool.py", CODE)
    ws.write("vendor/lib/.git/hook.py", CODE)
    ws.memory("send", "net/send.py#send", body="Retries are safe: send attaches a key.")
    ws.memory("tool", ".moor/tools/tool.py#send", body="The tool sends once.")
    ws.memory("hook", "vendor/lib/.git/hook.py#send", body="The hook sends twice.")
    ws.moor("bind", check=True)
    run = ws.moor("rules", "--write", "--only", "agents")
    assert run.code == 0, run
    assert not (ws.root / ".moor" / "tools" / "AGENTS.md").exists()
    assert not (ws.root / "vendor" / "lib" / ".git" / "AGENTS.md").exists()
    assert "Retries are safe" in ws.read("net/AGENTS.md")  # the control
    assert ws.moor("rules", "--check", "--only", "agents").code == 0
