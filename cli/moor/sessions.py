"""The session every command opens: its waits and warnings told on stderr. A module of its
own, so the command modules and `main` (which imports them) share it without importing
each other."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from moor_engine.session import Session


@contextlib.contextmanager
def told_session(
    start: Path, *, use_journal: bool = True, trust: bool = False
) -> Iterator[Session]:
    """A session whose waits and warnings are told on stderr."""
    with Session.open(start, use_journal=use_journal, trust=True if trust else None) as session:
        session.on_wait = lambda message: print(f"moor: {message}…", file=sys.stderr)
        try:
            yield session
        finally:
            for warning in session.told():
                print(f"moor: {warning}", file=sys.stderr)
