"""What the hostile-input tests share: a bound memory whose drift proves moor still works."""

from __future__ import annotations

import time

from tests.conftest import Run, Workspace

CODE = "def handler(event):\n    return event['id']\n"
CHANGED = "def handler(event):\n    return event['key']\n"


def bound_handler(ws: Workspace) -> None:
    ws.write("app/handler.py", CODE)
    ws.memory("handler", "app/handler.py#handler")
    ws.moor("bind", check=True)


def assert_drift_detectable(ws: Workspace) -> None:
    """Positive control: beside the hostile input, a real change is still reported."""
    ws.write("app/handler.py", CHANGED)
    assert ws.state("memories/handler.md") == "drifted"


def timed(ws: Workspace, *args: str) -> tuple[Run, float]:
    started = time.perf_counter()
    run = ws.moor(*args)
    return run, time.perf_counter() - started


def by_path(run: Run) -> dict[str, dict[str, object]]:
    """The memories of a `moor check --format json` run, keyed by path."""
    memories = run.json()["memories"]
    assert isinstance(memories, list)
    return {str(m["path"]): m for m in memories}
