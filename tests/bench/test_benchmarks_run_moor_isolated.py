"""The benchmarks' workspaces hold copies of standard-library files (`typing.py`,
`dataclasses.py`, …): a `python -m moor` started in one would import those copies instead of
Python's, and measure something else. Every benchmark starts moor with `-P`, as moor starts
its own children (`engine/moor_engine/workspace/python_children.py`)."""

from __future__ import annotations

import re
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
_MODULE_RUN = re.compile(r'"-m",\s*"moor"')
_ISOLATED = re.compile(r'"-P",\s*"-m",\s*"moor"')


def unisolated(source: str) -> list[int]:
    """The lines that run `-m moor` without `-P` just before it."""
    return [
        number
        for number, line in enumerate(source.splitlines(), start=1)
        if _MODULE_RUN.search(line) and not _ISOLATED.search(line)
    ]


def test_every_benchmark_starts_moor_without_the_workspace_on_its_path() -> None:
    found = {
        path.name: lines
        for path in sorted(BENCH.glob("*.py"))
        if (lines := unisolated(path.read_text(encoding="utf-8")))
    }
    assert found == {}
    # Control: the scan sees a run without -P.
    assert unisolated('cmd = [sys.executable, "-m", "moor", "check"]\n') == [1]
    assert unisolated('cmd = [sys.executable, "-P", "-m", "moor", "check"]\n') == []
