"""A warm check — nothing changed since the last one — writes nothing and parses nothing
again: no journal entry, no parse-cache row, no memory file read through YAML, no code file
through tree-sitter. What it does is counted by SQLite's own statement trace on the session's
journal and by the observer's parse count."""

from __future__ import annotations

import os
import time
from pathlib import Path

from moor_engine.session import Session

from tests.conftest import Workspace

_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


def age(root: Path, seconds: float = 60.0) -> None:
    """Every file's mtime put `seconds` back: settled, as files are that nobody is writing
    (a file written this instant is cached again until it settles)."""
    then = time.time() - seconds
    for folder, _dirs, files in os.walk(root):
        for name in files:
            os.utime(Path(folder) / name, (then, then))


def traced_check(root: Path) -> tuple[list[str], int, dict[str, int]]:
    """The statements one `Session.check` ran on the journal, the files it parsed, and the
    report's summary."""
    statements: list[str] = []
    with Session.open(root) as session:
        assert session.journal is not None
        session.journal._db.set_trace_callback(statements.append)
        report = session.check(session.select([]))
        parsed = session.observer.parse_count
    return statements, parsed, report.summary()


def writes(statements: list[str]) -> list[str]:
    return [s for s in statements if s.lstrip().upper().startswith(_WRITES)]


def test_a_warm_check_writes_nothing_and_parses_nothing_again(ws: Workspace) -> None:
    ws.write("src/a.py", "def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    ws.write("src/b.py", "def h():\n    return 3\n")
    ws.memory("about-f", "src/a.py#f")
    ws.memory("about-g", "src/a.py#g")
    ws.memory("about-h", "src/b.py#h")
    age(ws.root)
    ws.moor("bind", check=True)
    ws.moor("check", check=True)  # the caches a warm check reads

    statements, parsed, summary = traced_check(ws.root)
    assert summary == {"current": 3}
    assert statements, "the trace saw no statement: it could not have seen a write"
    assert writes(statements) == []
    assert parsed == 0

    # Control: one memory and one code file changed (and settled) — the same trace sees the
    # memory re-parsed into the cache, the code file parsed, and what moved journalled.
    ws.write("src/b.py", "def h():\n    return 30\n")
    ws.memory("about-f", "src/a.py#f", body="A decision about this code, revised.")
    age(ws.root)
    statements, parsed, summary = traced_check(ws.root)
    assert summary == {"drifted": 1, "rewritten": 1, "current": 1}
    written = writes(statements)
    assert any("INSERT INTO files" in s and "memory:memories/about-f.md" in s for s in written), (
        written
    )
    assert any("INSERT INTO journal" in s for s in written), written
    assert parsed == 1


RICH = """---
about:
  - src/a.py#f
  - ref: src/b.py#h
    watch: [body]
watch: [signature, body]
confidence: verified
supersedes: [memories/old.md]
links:
  see: [memories/other.md]
  none:
pinned: true
created: 2026-01-02
agent: claude
---
# A memory with every field

It says something.

## When this changes, ask
- Is it still true?
"""


def test_a_memory_read_back_from_the_parse_cache_is_the_memory_parsed(ws: Workspace) -> None:
    from moor_engine.grounding.memories import load_memories

    ws.write("src/a.py", "def f():\n    return 1\n")
    ws.write("src/b.py", "def h():\n    return 3\n")
    ws.write("memories/rich.md", RICH)
    ws.write("memories/broken.md", "---\nabout: [\n---\n# Broken\n")
    age(ws.root)
    paths = ["memories/rich.md", "memories/broken.md"]
    with Session.open(ws.root) as session:
        assert session.journal is not None
        parsed = load_memories(session.workspace, paths, session.journal)  # stores the rows
        statements: list[str] = []
        session.journal._db.set_trace_callback(statements.append)
        cached = load_memories(session.workspace, paths, session.journal)
    assert writes(statements) == []  # read back, not parsed and stored again
    rich = parsed["memories/rich.md"]
    assert rich.memory is not None and rich.memory.links and rich.memory.questions
    assert rich.memory.about[1].watch == ("body",) and rich.memory.pinned
    assert parsed["memories/broken.md"].memory is None and parsed["memories/broken.md"].problems
    assert cached == parsed


def test_a_parse_cache_row_of_another_shape_is_parsed_again_not_trusted(ws: Workspace) -> None:
    import sqlite3

    ws.write("src/a.py", "def f():\n    return 1\n")
    ws.memory("about-f", "src/a.py#f")
    age(ws.root)
    ws.moor("bind", check=True)
    ws.moor("check", check=True)
    with sqlite3.connect(ws.root / ".moor" / "journal.sqlite") as db:
        db.execute(  # a row as an older moor wrote it: an object, not this shape's lists
            "UPDATE files SET payload = ? WHERE path = 'memory:memories/about-f.md'",
            ('{"memory": null, "problems": []}',),
        )
    statements, _parsed, summary = traced_check(ws.root)
    assert summary == {"current": 1}
    assert any("INSERT INTO files" in s and "about-f.md" in s for s in writes(statements))
