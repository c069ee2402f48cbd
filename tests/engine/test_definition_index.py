"""The definition index follows git's change set (issue 22.4): it is built when anchors are
bound, and a later check observes again only the files git names as changed, never every
file of the tree — yet after every kind of change it is the index a build from scratch
gives, and a damaged kept index is rebuilt, never trusted."""

from __future__ import annotations

import os
import sqlite3

import pytest
from moor_engine.grounding import definition_index
from moor_engine.grounding.check import Checker
from moor_engine.grounding.definition_index import DefinitionIndex, Indexes, Rows, Site, _Table
from moor_engine.grounding.observe import FileView
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
        table.offsets,
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


def sized(n: int) -> str:
    """A function as long as BOUND, with other code: compared with it, never a candidate."""
    return (
        f"def fill{n}(items, limit={n}):\n"
        "    kept = sorted(items)[:limit]\n"
        f"    print(kept, '{n:04d}')\n"
        "    return len(kept)\n"
    )


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: no workers")
def test_the_first_check_after_code_goes_reads_compared_code_at_its_span_unparsed(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moor.main import main

    ws.write("pkg/a.py", BOUND)
    ws.write("pkg/near.py", NEAR)
    for n in range(120):
        ws.write(f"pkg/s{n}.py", sized(n))
    ws.memory("send", "pkg/a.py#send")
    ws.git("init", "-q")
    ws.git("add", "-A")
    ws.git("commit", "-qm", "code")
    # As in a large tree: the files are parsed for the index by worker processes, so
    # nothing else of them is kept (no file's cache row).
    monkeypatch.setattr(definition_index, "_PARALLEL_AT", 100)
    monkeypatch.chdir(ws.root)
    assert main(["bind"]) == 0
    ws.write("pkg/a.py", GONE)
    settle(ws, "pkg/a.py")
    with Session.open(ws.root) as session:
        checker = Checker(session.workspace, session.lock, session.journal, session.observer)
        anchor = checker.evaluate(session.select([])).report.memories[0].anchors[0]
        index, parsed = checker.indexes.of("python"), session.observer.parse_count
    assert anchor.state.value == "gone"
    assert [c.ref for c in anchor.candidates] == ["pkg/near.py#deliver"]
    # Only the file that changed was parsed (each compared definition's file was: 122) ...
    assert parsed == 1, parsed
    # ... yet the search compared the bound code with every definition of its size (the
    # candidate and the 120 others), each read from its file's bytes at its span.
    assert index.read_at_span == 121, index.read_at_span


SHAPES = (
    "import functools\n\n\n"
    "class Box:\n"
    "    @functools.cache\n"
    "    def size(self, scale=2):\n"
    "        return len(self.items) * scale\n\n"
    "    def twice(self):\n"
    "        def inner(x):\n"
    "            return x * 2\n\n"
    "        return inner(self.size())\n\n\n"
    "def pick(a):\n    return a\n\n\n"
    "def pick(a, b):  # defined twice: which one a symbol names is the view's to say\n"
    "    return a or b\n"
)


def test_a_definition_read_at_its_span_is_the_code_its_file_shows(ws: Workspace) -> None:
    ws.write("pkg/shapes.py", SHAPES)
    ws.git("init", "-q")
    ws.git("add", "-A")
    ws.git("commit", "-qm", "code")
    with Session.open(ws.root, use_journal=False) as session:
        index = index_of(session)
        definitions = [index._definition(at) for at in range(len(index._refresh().qnames))]
        view = session.observer.view("pkg/shapes.py")
        assert isinstance(view, FileView)
        shown = {site.qname: view.source_text(site) for site in view.sites()}
        read = {d.qname: index.source(d) for d in definitions}
        assert {"Box.size", "Box.twice.inner", "pick"} <= read.keys()
        for qname, found in read.items():
            if qname == "pick":
                assert found is None  # the view tells the two apart, not the index
            else:
                assert found == (qname, shown[qname]), qname
        # Bytes other than the ones indexed are never read as the definition.
        ws.write("pkg/shapes.py", SHAPES.replace("len(self.items)", "sum(self.items)"))
        assert all(index.source(d) is None for d in definitions)


def test_a_damaged_offset_is_rebuilt_never_read(ws: Workspace) -> None:
    committed_tree(ws, 20)
    assert ws.moor("bind").code == 0
    named, _table, index = kept(ws)
    assert (named, index.reindexed) == ({"pkg/a.py"}, 0)  # the control: it was kept
    base = rows(ws)["index:python"]
    columns = base.split("\x1e")
    offsets = columns[11]  # packed: a typecode, then hexadecimal
    assert offsets[:1] in "BHIQ" and len(offsets) > 3
    damaged = offsets[:-1] + ("1" if offsets[-1] != "1" else "2")  # one number moved
    damage(ws, "index:python", "\x1e".join([*columns[:11], damaged, *columns[12:]]))
    named, _table, index = kept(ws)
    assert (named, index.reindexed) == ({"pkg/a.py"}, 21)


def test_a_table_patched_in_place_is_the_one_built_anew() -> None:
    import random

    def site(rel: str, n: int) -> Site:
        return (f"{rel}:f{n}", "function", 10 + n, n % 3 == 0, f"b{n}", 7 * n)

    def table_of(rows: Rows) -> _Table:
        table = _Table()
        for rel in sorted(rows):
            table.add(rel, *rows[rel])
        return table

    chance = random.Random(22)
    for _round in range(30):
        now = {f"m{n:03d}.py": ("k", [site(f"m{n}", i) for i in range(n % 4)]) for n in range(60)}
        table = table_of(now)
        drop = set(chance.sample(sorted(now), 8)) | {"z-not-there.py"}
        rows = {
            rel: ("k2", [site(rel, i) for i in range(chance.randrange(4))])
            for rel in chance.sample([*sorted(now), "a-new.py", "m0155.py", "zz.py"], 10)
        }
        few, many = table_of(now), table_of(now)
        few.patch(rows, drop | rows.keys())
        many._rebuild(rows, sorted(drop | rows.keys()))
        after = {rel: row for rel, row in now.items() if rel not in drop} | rows
        assert columns(few) == columns(table_of(after))
        assert columns(many) == columns(few)
        assert columns(few) != columns(table)  # the control: the change changed the table
