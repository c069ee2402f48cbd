"""An editor, an agent and people writing one workspace at once lose nothing (issue 11).

A real `moor lsp` (reaffirm with a reason, follow: the code actions it offers), a real
`moor mcp` (memory_reaffirm, memory_supersede, memory_write, through the SDK's client) and
seven real `moor` processes (reaffirm, forget, add) all start on one signal, on a real git
workspace. Afterwards every write that reported success is in moor.lock, each is in the
journal exactly once as its own unit, the journal's sequence is gap-free and its database
intact, `moor check` agrees, and no temporary file is left.

The positive control that the schedule could lose an update would need a writer without
the write lock, that is a mock; instead the test fails unless the writes really overlapped:
at some instant an action of every surface was in flight.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import sqlite3
from pathlib import Path

import pytest
from moor_store.lockfile import Lock, parse_lock

from tests.conftest import Workspace, git
from tests.together.surfaces import WAIT_S, Action, Gate, agent, editor, terminals

pytestmark = pytest.mark.asyncio

ROUNDS = 2
SURFACES = ("lsp", "mcp", "cli")
DRIFTED = (0, 1, 2, 4, 5, 7, 8, 9)  # reaffirmed: by the editor 0-2, the agent 4-5, people 7-9
MOVED = 3  # followed by the editor into src/moved.py
RETIRED, BETTER = "memories/m6.md", "memories/m6-better.md"  # the agent supersedes
FORGOTTEN = (10, 11)  # people forget
WRITTEN = {"mcp": (12, 13), "cli": (14, 15)}  # new memories
TEMPORARY = re.compile(r"\..+\.\d+\.[0-9a-f]{8}\.tmp")  # store/moor_store/inside.py's names
JOURNAL_CODE = {
    "reaffirm": "reaffirm",
    "follow": "follow",
    "write": "add",
    "add": "add",
    "forget": "forget",
    "supersede": "retire",
}


def function(i: int, *, drifted: bool = False) -> str:
    last = 3 if drifted else 2
    return (
        f"def f{i}(x):\n    total = x * {i} + {i}\n"
        f"    return [total, total + 1, total + {last}, x]\n"
    )


def code(*, drifted: tuple[int, ...] = (), without: tuple[int, ...] = ()) -> str:
    return "\n\n".join(function(i, drifted=i in drifted) for i in range(16) if i not in without)


def prepare(root: Path) -> Workspace:
    """A committed, bound workspace, then the code changes the writers answer: eight
    functions drifted, one moved to another file."""
    root.mkdir()
    ws = Workspace(root)
    ws.write("moor.toml", 'memory_roots = ["memories"]\n')
    ws.write(".gitignore", ".moor/\n")
    ws.write("src/app.py", code())
    for i in range(12):
        ws.memory(f"m{i}", f"src/app.py#f{i}", body=f"Decision {i}: f{i} returns four values.")
    ws.memory("m6-better", "src/app.py#f6", body="f6 returns its total first, then three more.")
    ws.moor("bind", check=True)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bound")
    ws.write("src/app.py", code(drifted=DRIFTED, without=(MOVED,)))
    ws.write("src/moved.py", function(MOVED))
    return ws


def schedule(round_: int) -> list[Action]:
    def why(surface: str, what: str, i: int) -> str:
        return f"round {round_}: {surface} {what}s m{i}: still four values"

    def reaffirm(surface: str, i: int) -> Action:
        return Action(
            surface,
            "reaffirm",
            f"memories/m{i}.md",
            why(surface, "reaffirm", i),
            about=f"src/app.py#f{i}",
        )

    actions = [reaffirm("lsp", i) for i in (0, 1, 2)]
    actions.append(Action("lsp", "follow", f"memories/m{MOVED}.md"))
    actions += [reaffirm("mcp", i) for i in (4, 5)]
    actions.append(Action("mcp", "supersede", RETIRED, f"round {round_}: said better", by=BETTER))
    actions += [reaffirm("cli", i) for i in (7, 8, 9)]
    actions += [
        Action("cli", "forget", f"memories/m{i}.md", why("cli", "forget", i)) for i in FORGOTTEN
    ]
    for surface, what in (("mcp", "write"), ("cli", "add")):
        actions += [
            Action(
                surface,
                what,
                "",
                f"Round {round_}: f{i} keeps its total first ({surface}).",
                about=f"src/app.py#f{i}",
            )
            for i in WRITTEN[surface]
        ]
    return actions


async def run_together(ws: Workspace, timings: Path, actions: list[Action]) -> str:
    """Every surface ready, then all let go at once; the language server's log."""
    gate = Gate(SURFACES)
    mine = {s: [a for a in actions if a.surface == s] for s in SURFACES}
    # The language server first: its start is the slowest, and a loaded box would keep it
    # from answering `initialize` in time.
    first = asyncio.create_task(editor(ws.root, mine["lsp"], gate))
    ready = asyncio.create_task(gate.ready["lsp"].wait())
    await asyncio.wait([first, ready], timeout=WAIT_S, return_when=asyncio.FIRST_COMPLETED)
    if first.done():
        first.result()
    drivers = [
        first,
        asyncio.create_task(agent(ws.root, mine["mcp"], gate)),
        asyncio.create_task(terminals(ws.root, timings, mine["cli"], gate)),
    ]
    release = asyncio.create_task(gate.release())
    done, _ = await asyncio.wait([release, *drivers], return_when=asyncio.FIRST_COMPLETED)
    if release not in done:  # a driver failed before it was ready: its error, not a hang
        release.cancel()
        for driver in drivers:
            driver.cancel()
        await asyncio.gather(release, *drivers, return_exceptions=True)
        for finished in done:
            finished.result()
    log, _, _ = await asyncio.wait_for(asyncio.gather(*drivers), WAIT_S * 2)
    assert isinstance(log, str)
    return log


def overlap(actions: list[Action]) -> float:
    """How long an action of every surface was in flight at once (0: never)."""
    points = sorted({a.start for a in actions} | {a.end for a in actions})
    together = 0.0
    for start, end in itertools.pairwise(points):
        middle = (start + end) / 2
        if all(
            any(a.start <= middle <= a.end for a in actions if a.surface == s) for s in SURFACES
        ):
            together += end - start
    return together


def assert_in_the_lock(ws: Workspace, actions: list[Action], before: Lock) -> None:
    lock = parse_lock(ws.read("moor.lock"))
    for action in actions:
        memory = action.written or action.memory
        if action.what == "reaffirm":
            assert action.about is not None
            then = before.memories[memory].anchors[action.about]
            now = lock.memories[memory].anchors[action.about]
            assert now.address != then.address, (memory, "its reaffirmation was lost")
        elif action.what == "follow":
            assert set(lock.memories[memory].anchors) == {f"src/moved.py#f{MOVED}"}, memory
            assert f"src/moved.py#f{MOVED}" in ws.read(memory)
        elif action.what in ("write", "add"):
            assert set(lock.memories[memory].anchors) == {action.about}, memory
            assert (ws.root / memory).is_file()
        elif action.what == "forget":
            assert memory not in lock.memories and not (ws.root / memory).exists()
            assert [t.reason for t in lock.tombstones if t.path == memory] == [action.reason]
        else:
            assert action.what == "supersede"
            retired = lock.retired[memory]
            assert (retired.by, retired.reason) == (action.by, action.reason)


def assert_journalled_once(ws: Workspace, actions: list[Action]) -> None:
    with sqlite3.connect(ws.root / ".moor/journal.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        seqs = [row[0] for row in db.execute("SELECT seq FROM journal ORDER BY seq")]
        rows = db.execute("SELECT memory, code, reason, data FROM journal").fetchall()
    db.close()
    assert seqs == list(range(1, len(seqs) + 1)), "the journal's sequence has a gap"
    units: set[str] = set()
    for action in actions:
        memory, code_ = action.written or action.memory, JOURNAL_CODE[action.what]
        mine = [r for r in rows if r[0] == memory and r[1] == code_]
        assert len(mine) == 1, (action.surface, action.what, memory, mine)
        if action.what not in ("write", "add", "follow"):
            assert mine[0][2] == action.reason
        units.add(json.loads(mine[0][3])["intent"])
    assert len(units) == len(actions)  # each action its own unit


def assert_no_stray_files(ws: Workspace) -> None:
    strays = [
        p.relative_to(ws.root)
        for p in ws.root.rglob("*")
        if ".git" not in p.relative_to(ws.root).parts
        and (TEMPORARY.fullmatch(p.name) or p.name == "intent.json")
    ]
    assert strays == []


async def test_an_editor_an_agent_and_people_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    for round_ in range(ROUNDS):
        ws = prepare(tmp_path / f"round-{round_}")
        before = parse_lock(ws.read("moor.lock"))
        checked = ws.moor("check", "--format", "json")
        states = {m["path"]: m["state"] for m in checked.json()["memories"]}
        # control: each write has something to do (drifted, moved, current, bound)
        assert [states[f"memories/m{i}.md"] for i in DRIFTED] == ["drifted"] * 8
        assert states[f"memories/m{MOVED}.md"] == "moved"
        assert checked.code == 1
        timings = tmp_path / f"timings-{round_}"
        timings.mkdir()
        actions = schedule(round_)

        log = await run_together(ws, timings, actions)

        failed = [(a.surface, a.what, a.memory, a.answer) for a in actions if not a.ok]
        assert failed == []
        together = overlap(actions)
        assert together > 0, "the surfaces never wrote at the same time: nothing was tested"
        print(f"round {round_}: all three surfaces in flight together for {together:.2f} s")
        assert_in_the_lock(ws, actions, before)
        assert_journalled_once(ws, actions)
        checked = ws.moor("check", "--format", "json")
        assert checked.code == 0, checked.out
        states = {m["path"]: m["state"] for m in checked.json()["memories"]}
        assert states[RETIRED] == "retired"
        assert {p for p, state in states.items() if state != "current"} == {RETIRED}
        assert_no_stray_files(ws)
        assert "Traceback" not in log + "".join(a.answer for a in actions)
