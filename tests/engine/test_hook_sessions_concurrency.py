"""`.moor/hook-sessions.json` under parallel hooks (issue 26): sub-agents of one session,
and other sessions, note what their tool hooks saw at the same moment, from real processes
released together; no note may be lost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from moor_engine.agents import hook_sessions

WRITERS = 8
NOTES = 25  # per writer: each one a read-modify-write of the whole file

# Each writer waits for one line on stdin (released together), then notes its own paths.
WRITER = """
import sys
from pathlib import Path
from moor_engine.agents import hook_sessions

root, writer, notes = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
session = "shared" if int(writer) % 2 == 0 else f"own-{writer}"
sys.stdin.readline()
for k in range(notes):
    path = f"memories/w{writer}-{k}.md"
    hook_sessions.note(root, session, touched=[path], states={path: "current"}, edited=[path])
"""


def test_parallel_hooks_noting_at_once_lose_no_update(tmp_path: Path) -> None:
    (tmp_path / ".moor").mkdir()
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(n), str(NOTES)],
            stdin=subprocess.PIPE,
            text=True,
        )
        for n in range(WRITERS)
    ]
    for writer in writers:  # the event that releases them all
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        assert writer.wait(timeout=120) == 0
    document = json.loads((tmp_path / hook_sessions.FILE).read_text())
    expected: dict[str, set[str]] = {}
    for n in range(WRITERS):
        session = "shared" if n % 2 == 0 else f"own-{n}"
        expected.setdefault(session, set()).update(f"memories/w{n}-{k}.md" for k in range(NOTES))
    assert set(document) == set(expected)
    for session, paths in expected.items():
        assert set(hook_sessions.touched(tmp_path, session)) == paths, session
        assert set(hook_sessions.edited(tmp_path, session)) == paths, session
        assert set(hook_sessions.states(tmp_path, session)) == paths, session
