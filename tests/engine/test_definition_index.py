"""The definition index follows git's change set (issue 22.4): it is built when anchors are
bound, and a later check observes again only the files git names as changed, never every
file of the tree — yet after every kind of change it is the index a build from scratch
gives, and a damaged kept index is rebuilt, never trusted."""

from __future__ import annotations

import os
import sqlite3

from moor_engine.grounding.check import Checker
from moor_engine.grounding.definition_index import DefinitionIndex, Indexes, _Table
from moor_engine.session import Session

from tests.conftest import Workspace

FILLERS = 300
BOUND = (
    "def send(payload, retries=3):\n"
    "    total = payload * retries\n"
    "    record(total, retries)\n"
    "    return total\n"
)
# Close to BOUND, but another name and body: a candidate, never followed by itself.
NEAR = (
    "def deliver(payload, retries=3):\n"
    "    total = payload * retries\n"
    "    record(total, retries)\n"
    "    return total + 1\n"
)
GONE = "class Unrelated:\n    flag = True\n"
DEFINES = "def send(x):\n    return x\n"
PAST = 1_600_000_000  # a stat this old vouches for a file (not modified "just now")


def filler(n: int) -> str:
    return f"def f{n}(x):\n    return x + {n}\n\n\ndef g{n}(y):\n    return [y] * {n % 5 + 1}\n"


def settle(ws: Workspace, *rels: str) -> None:
    """Put files' mtimes in the past, as if written long ago (else a stat never vouches)."""
    for rel in rels:
        os.utime(ws.root / rel, (PAST, PAST))


def committed_tree(ws: Workspace, fillers: int) -> None:
    ws.write("pkg/a.py", BOUND)
    for n in range(fillers):
        ws.write(f"pkg/m{n}.py", NEAR if n == 7 else filler(n))
    ws.memory("send", "pkg/a.py#send")
    ws.git("init", "-q")
    ws.git("add", "-A")
    ws.git("commit", "-qm", "code")


def index_of(session: Session) -> DefinitionIndex:
    return Indexes(session.workspace, session.observer).of("python")


def check(ws: Workspace) -> tuple[dict[str, object], DefinitionIndex]:
    """One check in the engine: the memory's anchor report, and the index it searched."""
    with Session.open(ws.root) as session:
        checker = Checker(session.workspace, session.lock, session.journal, session.observer)
        evaluation = checker.evaluate(session.select([]))
        session.observer.flush()
        anchor = evaluation.report.memories[0].anchors[0]
        found: dict[str, object] = {
            "state": anchor.state.value,
            "moved_to": anchor.moved_to,
            "candidates": [c.ref for c in anchor.candidates],
        }
        return found, checker.indexes.of("python")


def columns(table: _Table) -> tuple[object, ...]:
    return (
        table.paths,
        table.counts,
        table.qnames,
        table.kinds,
        table.lengths,
        table.errors,
        table.bodies,
    )


def kept(ws: Workspace) -> tuple[set[str], tuple[object, ...], DefinitionIndex]:
    """The files the kept index says define `send`, its columns, and the index."""
    with Session.open(ws.root) as session:
        index = index_of(session)
        named = set(index.files_named("send", ""))
        table = index._refresh()
        session.observer.flush()
        return named, columns(table), index


def from_scratch(ws: Workspace) -> tuple[set[str], tuple[object, ...]]:
    """The same, from an index built now with nothing kept."""
    with Session.open(ws.root, use_journal=False) as session:
        index = index_of(session)
        return set(index.files_named("send", "")), columns(index._refresh())


def test_the_first_check_after_bound_code_goes_observes_only_the_file_that_changed(
    ws: Workspace,
) -> None:
    committed_tree(ws, FILLERS)
    assert ws.moor("bind").code == 0
    ws.write("pkg/a.py", GONE)
    settle(ws, "pkg/a.py")
    report, index = check(ws)
    # The candidate comes from a file this check did not observe again: from the index
    # built when the anchor was bound.
    assert report["state"] == "gone"
    assert report["candidates"] == ["pkg/m7.py#deliver"]
    # Building the index here observed every file (301 before this change).
    assert index.reindexed == 1, index.reindexed
    assert index.examined <= 2, index.examined  # git named one file: no pass over 301
    # An unrelated edit: the searches are made again, from the index, observing one file.
    ws.write("pkg/m100.py", filler(100) + "\nLIMIT = 3\n")
    settle(ws, "pkg/m100.py")
    report, index = check(ws)
    assert report["candidates"] == ["pkg/m7.py#deliver"]
    assert (index.reindexed, index.examined <= 3) == (1, True), (index.reindexed, index.examined)
    # The control: when git's index moves (a file staged), every row is compared with it.
    ws.git("add", "pkg/m100.py")
    ws.write("pkg/m101.py", filler(101) + "\nLIMIT = 4\n")
    settle(ws, "pkg/m101.py")
    report, index = check(ws)
    assert report["candidates"] == ["pkg/m7.py#deliver"]
    assert index.examined >= FILLERS and index.reindexed == 2, (index.examined, index.reindexed)


def test_the_index_after_each_change_is_the_one_built_from_scratch(ws: Workspace) -> None:
    committed_tree(ws, 20)
    assert ws.moor("bind").code == 0
    seen: list[set[str]] = []

    def step(expected: set[str]) -> None:
        named, table, _index = kept(ws)
        assert named == expected
        assert (named, table) == from_scratch(ws)
        seen.append(named)

    step({"pkg/a.py"})
    ws.write("pkg/new.py", DEFINES)  # added, untracked
    step({"pkg/a.py", "pkg/new.py"})
    ws.write("pkg/m3.py", filler(3) + "\n\n" + DEFINES)  # a tracked file changed
    step({"pkg/a.py", "pkg/new.py", "pkg/m3.py"})
    (ws.root / "pkg/new.py").unlink()  # an untracked file removed
    (ws.root / "pkg/m4.py").unlink()  # a tracked one removed
    step({"pkg/a.py", "pkg/m3.py"})
    ws.git("mv", "pkg/a.py", "pkg/moved.py")  # renamed, staged: git's index moved
    step({"pkg/moved.py", "pkg/m3.py"})
    os.rename(ws.root / "pkg/m3.py", ws.root / "pkg/m3b.py")  # renamed behind git's back
    step({"pkg/moved.py", "pkg/m3b.py"})
    ws.git("add", "-A")
    ws.git("commit", "-qm", "moves")
    step({"pkg/moved.py", "pkg/m3b.py"})
    ws.write("pkg/m3b.py", filler(3))  # changed back, then checked out again
    settle(ws, "pkg/m3b.py")
    step({"pkg/moved.py"})
    ws.git("checkout", "--", "pkg/m3b.py")
    step({"pkg/moved.py", "pkg/m3b.py"})
    # The control: the steps did change what the index answers.
    assert len({frozenset(s) for s in seen}) >= 5


def rows(ws: Workspace) -> dict[str, str]:
    with sqlite3.connect(ws.root / ".moor" / "journal.sqlite") as db:
        found = db.execute("SELECT path, payload FROM files WHERE path LIKE 'index%'").fetchall()
    return {str(path): str(payload) for path, payload in found}


def damage(ws: Workspace, path: str, payload: str) -> None:
    with sqlite3.connect(ws.root / ".moor" / "journal.sqlite") as db:
        db.execute("UPDATE files SET payload = ? WHERE path = ?", (payload, path))


def test_a_damaged_kept_index_is_rebuilt_never_trusted(ws: Workspace) -> None:
    committed_tree(ws, 20)
    assert ws.moor("bind").code == 0
    files = 21
    named, _table, index = kept(ws)
    assert (named, index.reindexed) == ({"pkg/a.py"}, 0)  # the control: it was kept
    base = rows(ws)["index:python"]
    # Garbage: rebuilt.
    damage(ws, "index:python", "not an index")
    named, _table, index = kept(ws)
    assert (named, index.reindexed) == ({"pkg/a.py"}, files)
    # Well-formed columns naming its files out of order: rebuilt.
    columns = base.split("\x1e")
    paths = columns[0].split("\x1f")
    paths[0], paths[1] = paths[1], paths[0]
    damage(ws, "index:python", "\x1e".join(["\x1f".join(paths), *columns[1:]]))
    named, _table, index = kept(ws)
    assert (named, index.reindexed) == ({"pkg/a.py"}, files)
    # A damaged row of changes is left aside: the base row and git's view still answer.
    ws.write("pkg/new.py", DEFINES)
    named, _table, index = kept(ws)
    assert named == {"pkg/a.py", "pkg/new.py"}
    assert rows(ws)["index-changes:python"].startswith("pkg/new.py")  # kept beside the base
    damage(ws, "index-changes:python", "\x1e" * 10 + "x")
    named, _table, index = kept(ws)
    assert named == {"pkg/a.py", "pkg/new.py"}
    assert index.reindexed >= 1 and index.reindexed < files
