"""Read-only sources in moor.toml: configured, listed with their notes, never edited; a bad
`[[sources]]` table is a configuration error naming file and line."""

from __future__ import annotations

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
