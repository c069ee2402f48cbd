"""Read-only sources in moor.toml: configured, listed with their notes, never edited; a bad
`[[sources]]` table is a configuration error naming file and line."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import Workspace

SERENA = '[[sources]]\nkind = "serena"\n'


def configure(ws: Workspace, tables: str) -> None:
    ws.write("moor.toml", 'memory_roots = ["memories"]\n' + tables)


def test_source_list_shows_each_note_and_whether_it_is_bound(ws: Workspace) -> None:
    configure(ws, SERENA + '[[sources]]\nkind = "claude"\npath = "notes/claude"\n')
    ws.write(".serena/memories/style.md", "Use four spaces.\n")
    ws.write(".serena/memories/retries.md", "Retries are idempotent.\n")
    ws.write(".serena/memories/scratch.txt", "not a note\n")
    ws.write("notes/claude/MEMORY.md", "Run make test.\n")
    ws.write("memories/sources/serena/retries.md", "---\nsource: serena:retries\n---\n# r\n")
    before = ws.read(".serena/memories/style.md")
    run = ws.moor("source", "list", "--json", check=True)
    sources = run.json()["sources"]
    assert [(s["kind"], s["path"]) for s in sources] == [
        ("serena", ".serena/memories"),
        ("claude", "notes/claude"),
    ]
    assert sources[0]["notes"] == [
        {"name": "retries", "bound": True},
        {"name": "style", "bound": False},
    ]
    assert sources[1]["notes"] == [{"name": "MEMORY", "bound": False}]
    text = ws.moor("source", "list", check=True).out
    assert "bound    retries" in text and "unbound  style" in text
    assert ws.read(".serena/memories/style.md") == before  # read, never written


def test_a_missing_source_folder_is_said_not_a_crash(ws: Workspace) -> None:
    configure(ws, SERENA)
    run = ws.moor("source", "list", check=True)
    assert "no such folder" in run.out
    ws.write(".serena/memories/a.md", "A.\n")  # control: once there, it is listed
    assert "unbound  a" in ws.moor("source", "list", check=True).out


def test_a_claude_folder_linked_from_outside_is_refused_and_a_copy_is_listed(
    ws: Workspace, tmp_path: Path
) -> None:
    """What docs/agents.md tells a `claude` source's user: copy the folder in; a link leading
    out of the workspace is refused, a link that stays inside is followed."""
    configure(ws, '[[sources]]\nkind = "claude"\npath = "notes/claude"\n')
    home = tmp_path / "home-memory"
    home.mkdir()
    (home / "MEMORY.md").write_text("Run make test.\n", encoding="utf-8")
    (ws.root / "notes").mkdir()
    (ws.root / "notes/claude").symlink_to(home)
    run = ws.moor("source", "list", check=True)
    assert "notes/claude is a link that leads outside the workspace" in run.out
    assert "MEMORY" not in run.out
    (ws.root / "notes/claude").unlink()
    ws.write("kept/claude/MEMORY.md", "Run make test.\n")
    (ws.root / "notes/claude").symlink_to(ws.root / "kept/claude")
    assert "unbound  MEMORY" in ws.moor("source", "list", check=True).out  # inside: followed
    (ws.root / "notes/claude").unlink()
    ws.write("notes/claude/MEMORY.md", "Run make test.\n")  # the control: a copy is listed
    assert "unbound  MEMORY" in ws.moor("source", "list", check=True).out


def test_a_bad_sources_table_is_a_configuration_error_with_its_line(ws: Workspace) -> None:
    cases = {
        '[[sources]]\nkind = "notion"\n': "kind must be one of",
        '[[sources]]\nkind = "claude"\n': "needs a path inside the workspace",
        '[[sources]]\nkind = "serena"\npath = "../elsewhere"\n': "must be a workspace folder",
        '[[sources]]\nkind = "serena"\npath = "/home/me/.claude"\n': "must be a workspace folder",
        '[[sources]]\nkind = "serena"\nwhere = "x"\n': "unknown key",
    }
    for table, words in cases.items():
        configure(ws, table)
        run = ws.moor("source", "list")
        assert run.code == 2, (table, run.out, run.err)
        assert words in run.err and "moor.toml:" in run.err and "Traceback" not in run.err
    configure(ws, SERENA)  # control: the same file with a good table is read
    assert ws.moor("source", "list").code == 0


# --- moor source bind -----------------------------------------------------------------------

NOTE = ".serena/memories/retries.md"
SIDECAR = "memories/sources/serena/retries.md"
NOTE_TEXT = "# Retries\n\nRetries are idempotent: each carries its request id.\n"
CODE = "def retry(request):\n    return request.send()\n\n\ndef other():\n    return 1\n"


def bound_workspace(ws: Workspace) -> bytes:
    """A committed workspace with a serena note and the code it describes; the note's bytes."""
    configure(ws, SERENA)
    ws.write(NOTE, NOTE_TEXT)
    ws.write("app.py", CODE)
    ws.git("init", "-q")
    ws.git("add", "-A")
    ws.git("commit", "-qm", "start")
    return (ws.root / NOTE).read_bytes()


def test_bind_writes_a_sidecar_that_drifts_when_the_note_or_the_code_changes(
    ws: Workspace,
) -> None:
    note = bound_workspace(ws)
    assert ws.moor("source", "list", "--json").json()["sources"][0]["notes"] == [
        {"name": "retries", "bound": False}
    ]
    run = ws.moor(
        "source", "bind", "serena", "retries", "--about", "app.py#retry", "--why", "its code"
    )
    assert run.code == 0, run.err
    assert f"{SIDECAR}: written and bound to 2 anchor(s)" in run.out
    assert (ws.root / NOTE).read_bytes() == note
    sidecar = ws.read(SIDECAR)
    assert "source: serena:retries" in sidecar
    assert f"- {NOTE}\n- app.py#retry\n" in sidecar
    assert "> Retries are idempotent: each carries its request id." in sidecar
    assert "## When this changes, ask" in sidecar
    assert ws.state(SIDECAR) == "current"  # control: as bound, nothing to look at
    assert ws.moor("check").code == 0
    listed = ws.moor("source", "list", "--json", check=True).json()["sources"][0]["notes"]
    assert listed == [{"name": "retries", "bound": True}]
    assert "bound    retries" in ws.moor("source", "list", check=True).out
    assert (ws.root / NOTE).read_bytes() == note

    ws.write(NOTE, NOTE_TEXT.replace("idempotent", "not idempotent"))  # the note changes
    run = ws.moor("check")
    assert run.code == 1 and f"{SIDECAR}: drifted" in run.out and NOTE in run.out
    anchors = {a["ref"]: a["state"] for a in ws.states()[SIDECAR]["anchors"]}
    assert anchors == {NOTE: "drifted", "app.py#retry": "current"}

    ws.write(NOTE, NOTE_TEXT)  # back as bound: current again, then the code changes
    assert ws.state(SIDECAR) == "current"
    ws.write("app.py", CODE.replace("request.send()", "request.send(twice=True)"))
    anchors = {a["ref"]: a["state"] for a in ws.states()[SIDECAR]["anchors"]}
    assert anchors == {NOTE: "current", "app.py#retry": "drifted"}
    assert ws.moor("check").code == 1
    ws.moor("reaffirm", SIDECAR, "--why", "sends twice, still idempotent", check=True)
    assert ws.state(SIDECAR) == "current"
    assert (ws.root / NOTE).read_bytes() == note


def test_recall_finds_a_bound_note_by_its_words(ws: Workspace) -> None:
    bound_workspace(ws)
    ws.memory("unrelated", "app.py#other", body="Other returns one.")
    query = ("recall", "--json", "idempotent request id")
    assert SIDECAR not in ws.moor(*query).out  # control: not before it is bound
    ws.moor("source", "bind", "serena", "retries", "--about", "app.py#retry", check=True)
    found = ws.moor(*query, check=True).json()
    paths = [item["path"] for item in found["hits"]]
    assert paths[0] == SIDECAR and "memories/unrelated.md" not in paths


def test_binding_a_bound_note_again_is_refused_naming_edit_and_reaffirm(ws: Workspace) -> None:
    note = bound_workspace(ws)
    ws.moor("source", "bind", "serena", "retries", "--about", "app.py#retry", check=True)
    before = ws.read(SIDECAR), ws.read("moor.lock")
    run = ws.moor("source", "bind", "serena", "retries", "--about", "app.py#other")
    assert run.code == 1 and "already bound" in run.err
    assert f"moor edit {SIDECAR}" in run.err and f"moor reaffirm {SIDECAR}" in run.err
    assert (ws.read(SIDECAR), ws.read("moor.lock")) == before
    refused = ws.moor(
        "source", "bind", "serena", "retries", "--about", "app.py#other", "--format", "json"
    )
    answer = refused.json()
    assert refused.code == 1 and answer["action"] == "source bind" and not answer["ok"]
    assert answer["refused"][0]["code"] == "exists"
    assert answer["refused"][0]["current_hash"]
    assert (ws.root / NOTE).read_bytes() == note


def test_bind_with_a_reference_that_names_nothing_is_refused_with_suggestions(
    ws: Workspace,
) -> None:
    note = bound_workspace(ws)
    run = ws.moor("source", "bind", "serena", "retries", "--about", "app.py#retyr")
    assert run.code == 1 and "did you mean app.py#retry" in run.err
    assert not (ws.root / SIDECAR).exists() and not (ws.root / "moor.lock").exists()
    run = ws.moor(
        "source", "bind", "serena", "retries", "--about", "app.py#retry", "--format", "json"
    )
    assert run.code == 0 and run.json()["ok"] and run.json()["path"] == SIDECAR  # control
    assert (ws.root / NOTE).read_bytes() == note


def test_bind_refuses_an_unknown_kind_or_note_naming_what_there_is(ws: Workspace) -> None:
    note = bound_workspace(ws)
    ws.write(".serena/memories/retry-budget.md", "Three tries at most.\n")
    ws.write(".serena/memories/retries#old.md", "Retries were not idempotent.\n")
    cases = {
        ("serena", "retries#old"): "cannot be written as a whole-file reference",
        ("claude", "retries"): "no source of kind 'claude' in moor.toml (configured: serena)",
        (
            "serena",
            "retrys",
        ): "no serena note 'retrys'; notes nearby: retries, retries#old, retry-budget",
        ("serena", "../retries"): "without '/', '..' or a leading dot",
        ("serena", "sub/retries"): "without '/', '..' or a leading dot",
        ("serena", ".retries"): "without '/', '..' or a leading dot",
    }
    for (kind, name), words in cases.items():
        run = ws.moor("source", "bind", kind, name, "--about", "app.py#retry")
        assert run.code == 2, (kind, name, run.out, run.err)
        assert words in run.err and "Traceback" not in run.err, (kind, name, run.err)
        assert not (ws.root / "memories/sources").exists()
    run = ws.moor("source", "bind", "serena", "retries", "--about", "app.py#retry")
    assert run.code == 0, run.err  # control: the right kind and name bind
    assert (ws.root / NOTE).read_bytes() == note


def test_a_note_that_cannot_be_read_safely_is_refused_never_a_traceback(
    ws: Workspace, tmp_path: Path
) -> None:
    bound_workspace(ws)
    ws.write("moor.toml", 'memory_roots = ["memories"]\nmax_file_size = 4096\n' + SERENA)
    outside = tmp_path / "secret.md"
    outside.write_text("a secret\n", encoding="utf-8")
    folder = ws.root / ".serena/memories"
    os.symlink(outside, folder / "leak.md")
    os.mkfifo(folder / "pipe.md")
    (folder / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (folder / "huge.md").write_text("word " * 2000, encoding="utf-8")
    (folder / "nul.md").write_bytes(b"text\x00more\n")
    (folder / "empty.md").write_bytes(b"\n\n")
    cases = {
        "leak": "leads outside the workspace",
        "pipe": "not a regular file",
        "binary": "not UTF-8 text",
        "nul": "binary (it holds NUL bytes)",
        "empty": "it is empty",
        "huge": "over the 4096-byte cap",
    }
    for name, words in cases.items():
        run = ws.moor("source", "bind", "serena", name, "--about", "app.py#retry")
        assert run.code == 2, (name, run.out, run.err)
        assert f"note .serena/memories/{name}.md refused" in run.err and words in run.err, run.err
        assert "Traceback" not in run.err
        assert not (ws.root / f"memories/sources/serena/{name}.md").exists()
    assert outside.read_text(encoding="utf-8") == "a secret\n"
    run = ws.moor("source", "bind", "serena", "retries", "--about", "app.py#retry")
    assert run.code == 0, run.err  # control: a plain note beside them binds
