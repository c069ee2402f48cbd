"""A long-lived observer (the editor's) flushes its parse cache after every check: a file it
stored once is stored again only when it learns something new about it."""

from __future__ import annotations

import sqlite3

from moor_engine.grounding.check import Checker
from moor_engine.session import Session

from tests.conftest import Workspace


def cached_paths(ws: Workspace) -> set[str]:
    """The code files in the parse cache (memory files have rows of their own, kept by
    load_memories, not by the observer)."""
    with sqlite3.connect(ws.root / ".moor" / "journal.sqlite") as db:
        rows = db.execute("SELECT path FROM files WHERE path NOT LIKE 'memory:%'")
        return {row[0] for row in rows}


def forget_cache(ws: Workspace) -> None:
    with sqlite3.connect(ws.root / ".moor" / "journal.sqlite") as db:
        db.execute("DELETE FROM files")


def test_a_second_flush_stores_only_what_the_observer_learnt_since(ws: Workspace) -> None:
    ws.write("src/a.py", "def f():\n    return 1\n")
    ws.write("src/b.py", "def g():\n    return 2\n")
    ws.memory("about-f", "src/a.py#f")
    ws.memory("about-g", "src/b.py#g")
    ws.moor("bind", check=True)
    with Session.open(ws.root) as session:
        # Files written this instant are racily fresh: their rows are written again until
        # they settle (the next test). Here every file counts as settled.
        session.observer.racy_window_ns = 0
        checker = Checker(session.workspace, session.lock, session.journal, session.observer)
        checker.evaluate(session.select([]))
        session.observer.flush()
        assert {"src/a.py", "src/b.py"} <= cached_paths(ws)  # the first flush stores both

        forget_cache(ws)
        checker.evaluate(session.select([]))
        session.observer.flush()
        assert cached_paths(ws) == set()  # nothing learnt: nothing stored again

        ws.write("src/a.py", "def f():\n    return 10\n")
        session.observer.forget(["src/a.py"])
        checker.evaluate(session.select([]))
        session.observer.flush()
        assert "src/a.py" in cached_paths(ws)  # control: what it learnt is stored
        assert "src/b.py" not in cached_paths(ws)


def test_a_racily_fresh_file_is_stored_again_once_it_has_settled(ws: Workspace) -> None:
    ws.write("src/a.py", "def f():\n    return 1\n")
    ws.memory("about-f", "src/a.py#f")
    ws.moor("bind", check=True)
    with Session.open(ws.root) as session:
        checker = Checker(session.workspace, session.lock, session.journal, session.observer)
        checker.evaluate(session.select([]))
        session.observer.flush()  # src/a.py was written just now: a row that never vouches
        forget_cache(ws)
        session.observer.flush()
        assert "src/a.py" in cached_paths(ws)  # still to be stored with its settled stat

        session.observer.racy_window_ns = 0  # it has settled
        session.observer.flush()
        forget_cache(ws)
        session.observer.flush()
        assert cached_paths(ws) == set()  # stored once settled, then not again
