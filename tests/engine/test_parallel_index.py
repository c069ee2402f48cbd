"""A fresh clone's first search parses its files in worker processes (one per CPU): the
rows they give are exactly the rows this process would compute (issue 9.13)."""

from __future__ import annotations

import os

import pytest
from moor_engine.grounding import definition_index
from moor_engine.workspace.workspace import Workspace as MoorWorkspace

from tests.conftest import Workspace

pytestmark = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: no workers")


def test_rows_from_worker_processes_equal_the_rows_computed_here(ws: Workspace) -> None:
    files = definition_index._PARALLEL_AT
    rels = [f"pkg/m{n}.py" for n in range(files)]
    for n, rel in enumerate(rels):
        ws.write(
            rel,
            f"def f{n}(x):\n    return x + {n}\n\n\nclass C{n}:\n    def m(self):\n        pass\n",
        )
    ws.write("pkg/broken.py", "def half(:\n")
    ws.write("pkg/big.py", "x = 1\n" * 2000)
    rels += ["pkg/broken.py", "pkg/big.py", "pkg/missing.py"]
    past = 1_600_000_000  # stats old enough to vouch for a file: both sides key it by stat
    for path in (ws.root / "pkg").iterdir():
        os.utime(path, (past, past))
    cap = MoorWorkspace.open(ws.root).config.max_file_size
    here = definition_index.rows_of(ws.root, 4000, rels, {})
    there = definition_index._in_parallel(ws.root, 4000, rels, {})
    assert there == here
    # The control: the workers did the work (and saw what this process sees).
    assert len(there) == files + 1  # the over-capped file and the missing one give no row
    assert there["pkg/broken.py"][1][0][3] is True  # `half` does not parse
    assert cap > 4000  # the cap above is the test's own, not the default


def test_too_few_files_are_not_worth_a_worker(ws: Workspace) -> None:
    rels = [f"m{n}.py" for n in range(10)]
    for rel in rels:
        ws.write(rel, "def f():\n    return 1\n")
    assert definition_index._in_parallel(ws.root, 10**6, rels, {}) == {}
    assert len(definition_index.rows_of(ws.root, 10**6, rels, {})) == 10  # the control
