"""`moor export` and `moor import` (issue 27.4) through the real command on real git
workspaces: a clone gets the history git cannot give it (reasons, forgotten texts, sealed
snapshots), byte for byte; a journal that has history, an unknown version and every kind of
bad file are refused with their codes, and nothing is lost or half-written."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from moor_engine.corpus.export import import_file
from moor_engine.session import Session
from moor_store.refusal import RefusalError

from tests.conftest import Workspace, git

CODE = "def send(body):\n    return body\n"


@pytest.fixture
def origin(ws: Workspace) -> Workspace:
    """A repository with history: bound, drifted, reaffirmed with a reason, one memory
    forgotten with a reason, all committed (the journal is not: `.moor/` is ignored)."""
    ws.git("init", "-q")
    ws.write(".gitignore", ".moor/\n")
    ws.write("src/a.py", CODE)
    ws.write(
        "memories/one.md",
        "---\nabout:\n  - src/a.py#send\nlinks:\n  see-also: [memories/two.md]\n---\n"
        "# Send\n\nSend returns the body it is given.\n",
    )
    ws.memory("two", "src/a.py#send", body="Send never returns anything at all.")
    ws.moor("bind", check=True)
    ws.write("src/a.py", CODE.replace("return body", "return body * 2"))
    ws.moor("check")
    ws.moor("reaffirm", "memories/one.md", "--why", "doubling keeps the body", check=True)
    ws.moor("forget", "memories/two.md", "--why", "it never held", check=True)
    ws.git("add", "-A")
    ws.git("commit", "-qm", "history")
    return ws


def _clone(origin: Workspace, tmp_path: Path) -> Workspace:
    target = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin.root), str(target))
    return Workspace(target)


def _head(ws: Workspace) -> int:
    path = ws.root / ".moor/journal.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()[0])


def test_export_import_into_a_fresh_clone_and_export_again_is_byte_identical(
    origin: Workspace, tmp_path: Path
) -> None:
    assert origin.moor("export", "--output", "history.jsonl").code == 0
    exported = (origin.root / "history.jsonl").read_bytes()
    kinds = [json.loads(line)["kind"] for line in exported.decode().splitlines()]
    assert kinds[0] == "moor-export" and kinds[-1] == "end"
    assert {"entry", "snapshot", "binding", "link"} <= set(kinds)
    clone = _clone(origin, tmp_path)
    assert clone.moor("log", "memories/one.md").out.count("doubling keeps the body") == 0

    shutil.copy(origin.root / "history.jsonl", clone.root / "history.jsonl")
    run = clone.moor("import", "history.jsonl", "--format", "json")

    assert run.code == 0, run.err
    assert run.json()["bindings_differ"] == []
    assert clone.moor("export", "--output", "again.jsonl").code == 0
    assert (clone.root / "again.jsonl").read_bytes() == exported
    # The reasons travel, and the forgotten memory's text: restore writes it again.
    assert "doubling keeps the body" in clone.moor("log", "memories/one.md").out
    assert "it never held" in clone.moor("log", "memories/two.md").out
    restored = clone.moor("restore", "memories/two.md", "--why", "it held after all")
    assert restored.code == 0, restored.err
    assert "written again from this clone's journal" in restored.out
    assert "Send never returns anything at all." in clone.read("memories/two.md")


def test_an_import_into_a_journal_with_history_is_refused_and_changes_nothing(
    origin: Workspace,
) -> None:
    assert origin.moor("export", "--output", "history.jsonl").code == 0
    before = _head(origin)
    assert before > 0

    run = origin.moor("import", "history.jsonl")

    assert run.code == 2
    assert "journal_not_empty" in run.err or "already holds entries" in run.err
    assert _head(origin) == before
    # The control: the same file goes into an empty journal.
    for suffix in ("", "-wal", "-shm"):
        Path(f"{origin.root}/.moor/journal.sqlite{suffix}").unlink(missing_ok=True)
    assert origin.moor("import", "history.jsonl").code == 0
    assert _head(origin) == before


def _fresh(origin: Workspace, tmp_path: Path) -> tuple[Workspace, list[str]]:
    assert origin.moor("export", "--output", "history.jsonl").code == 0
    clone = _clone(origin, tmp_path)
    return clone, origin.read("history.jsonl").splitlines(keepends=True)


def _refused(clone: Workspace, name: str, code: str, said: str) -> str:
    """The command refuses with exit 2 and says `said`; the engine's refusal under it has
    the stable `code` (what the MCP and JSON surfaces carry)."""
    run = clone.moor("import", name, "--format", "json")
    assert run.code == 2, (run.out, run.err)
    assert said in run.err and "nothing was imported" in run.err, run.err
    assert "Traceback" not in run.err
    assert _head(clone) == 0  # nothing half-imported
    with Session.open(clone.root) as session, pytest.raises(RefusalError) as refused:
        import_file(session, name)
    assert refused.value.code == code
    assert _head(clone) == 0
    return run.err


def test_an_unknown_version_is_refused_with_its_code(origin: Workspace, tmp_path: Path) -> None:
    clone, lines = _fresh(origin, tmp_path)
    header = json.loads(lines[0])
    clone.write("v2.jsonl", "".join([json.dumps({**header, "version": 2}) + "\n", *lines[1:]]))

    err = _refused(clone, "v2.jsonl", "export_version", "export version 2")

    assert "v2.jsonl:1" in err
    clone.write("v1.jsonl", "".join(lines))
    assert clone.moor("import", "v1.jsonl").code == 0  # the control: version 1 is read


def test_lines_of_an_unknown_kind_are_carried_through_unchanged(
    origin: Workspace, tmp_path: Path
) -> None:
    clone, lines = _fresh(origin, tmp_path)
    future = '{"kind":"future-thing","payload":{"z":1,"a":[2,3]},"note":"ünïcode"}\n'
    body = [*lines[:-1], future]
    end = json.dumps({"kind": "end", "lines": len(body)}, separators=(",", ":")) + "\n"
    clone.write("future.jsonl", "".join([*body, end]))

    run = clone.moor("import", "future.jsonl", "--format", "json")

    assert run.code == 0, run.err
    assert run.json()["carried"] == 1
    assert clone.moor("export", "--output", "again.jsonl").code == 0
    assert clone.read("again.jsonl") == clone.read("future.jsonl")


def test_bad_files_are_refused_with_their_codes_and_lose_nothing(
    origin: Workspace, tmp_path: Path
) -> None:
    clone, lines = _fresh(origin, tmp_path)
    whole = "".join(lines)
    clone.write("cut.jsonl", whole[: len(whole) // 2])
    _refused(clone, "cut.jsonl", "export_truncated", "the last line is not whole")
    clone.write("no-end.jsonl", "".join(lines[:-1]))
    _refused(clone, "no-end.jsonl", "export_truncated", "no `end` line")
    clone.write_bytes("latin.jsonl", whole.encode().replace(b"Send", b"S\xe9nd", 1))
    _refused(clone, "latin.jsonl", "export_not_utf8", "not UTF-8 (byte 0xe9)")
    os.mkfifo(clone.root / "fifo.jsonl")
    _refused(clone, "fifo.jsonl", "not_a_file", "not a regular file")
    huge = json.dumps({"kind": "future-thing", "x": "y" * (65 << 20)}) + "\n"
    clone.write("huge.jsonl", "".join([lines[0], huge, *lines[1:]]))
    _refused(clone, "huge.jsonl", "export_line_too_long", "huge.jsonl:2: a line of")
    (tmp_path / "outside.jsonl").write_text(whole, encoding="utf-8")
    _refused(clone, "../outside.jsonl", "outside_workspace", "outside")
    # The control: the whole file, after all those, goes in.
    clone.write("whole.jsonl", whole)
    assert clone.moor("import", "whole.jsonl").code == 0
    assert _head(clone) > 0


def test_an_export_into_moors_own_files_is_refused(origin: Workspace) -> None:
    lock = origin.read("moor.lock")
    run = origin.moor("export", "--output", "moor.lock")
    assert (run.code == 2 and "reserved_path" in run.err) or "moor's own" in run.err
    assert origin.read("moor.lock") == lock
    outside = origin.root.parent / "outside.jsonl"
    run = origin.moor("export", "--output", "../outside.jsonl")
    assert run.code == 2 and "outside the workspace" in run.err and not outside.exists()
    assert origin.moor("export", "--output", "notes/history.jsonl").code == 0  # the control
