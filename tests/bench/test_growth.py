"""A check's cost grows linearly with the memories it checks (issue 22).

The small, load-robust form of `bench/growth.py`: the same operation, run in this process
through the real command (`main([...])`), on workspaces of N and 10·N memories bound to real
standard-library code. Linear growth gives a ratio of at most 10 (less: each run has costs
that do not grow); a path quadratic in the memories gives far more at these sizes (the
per-memory sort of the `supersedes` map, undone in `Checker.declared`, gave 19x). The two
sizes are measured in alternation, by the CPU time of this process, and each is its best of
several rounds, so a busy machine slows both alike, and the bound is generous.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from moor.main import main

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import growth  # noqa: E402
from moor_engine.kept_check import FILE as KEPT  # noqa: E402

from tests.cli.test_hook_answers import backdate  # noqa: E402

pytestmark = pytest.mark.slow

SMALL, LARGE = 300, 3000
ROUNDS = 3
BOUND = 13.0  # linear measured 7-9 here; the quadratic this guards against gave 19


def run(root: Path, *args: str) -> float:
    """The CPU time of one command in this process: other processes on a busy machine
    (other tests, other workers) hardly change it, as they change the time on the clock."""
    out = io.StringIO()
    started = time.process_time()
    with contextlib.redirect_stdout(out):
        status = main(["-C", str(root), *args])
    seconds = time.process_time() - started
    assert status == 0, (args, out.getvalue()[-2000:])
    return seconds


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    made = {}
    for n in (SMALL, LARGE):
        root = tmp_path_factory.mktemp(f"growth-{n}")
        growth.make_workspace(root, n)
        made[n] = root
    return made


def growth_of(
    measure: Callable[[Path], float], workspaces: dict[int, Path], rounds: int = ROUNDS
) -> float:
    """t(LARGE) / t(SMALL), each the best of `rounds` runs taken in alternation."""
    times: dict[int, list[float]] = {SMALL: [], LARGE: []}
    for _ in range(rounds):
        for n, root in workspaces.items():
            times[n].append(measure(root))
    return min(times[LARGE]) / min(times[SMALL])


def fresh_bind(root: Path) -> float:
    (root / "moor.lock").unlink(missing_ok=True)
    shutil.rmtree(root / ".moor", ignore_errors=True)
    return run(root, "bind")


def test_binding_ten_times_the_memories_costs_at_most_about_ten_times_as_much(
    workspaces: dict[int, Path],
) -> None:
    factor = growth_of(fresh_bind, workspaces, rounds=2)  # the slowest: fewer rounds
    assert factor <= BOUND, f"bind of {LARGE} took {factor:.1f}x the time of {SMALL}"


def test_a_warm_check_of_ten_times_the_memories_costs_at_most_about_ten_times_as_much(
    workspaces: dict[int, Path],
) -> None:
    for root in workspaces.values():
        if not (root / "moor.lock").exists():
            run(root, "bind")
        run(root, "check")  # the caches a warm check reads
    factor = growth_of(derived_check, workspaces)
    assert factor <= BOUND, f"a warm check of {LARGE} took {factor:.1f}x the time of {SMALL}"


def derived_check(root: Path) -> float:
    """A warm check that derives every state again: its kept report removed first (the
    path the quadratic cost was in; `kept_check` would otherwise answer)."""
    (root / KEPT).unlink(missing_ok=True)
    return run(root, "check", "--format", "json")


def test_a_check_answered_from_its_kept_report_grows_at_most_linearly(
    workspaces: dict[int, Path],
) -> None:
    for root in workspaces.values():
        if not (root / "moor.lock").exists():
            run(root, "bind")
        (root / KEPT).unlink(missing_ok=True)
        backdate(root)  # nothing within the racy window: the report is kept
        run(root, "check")
    kept = {root: (root / KEPT).stat() for root in workspaces.values()}
    factor = growth_of(lambda root: run(root, "check", "--format", "json"), workspaces)
    assert factor <= BOUND, f"a kept check of {LARGE} took {factor:.1f}x the time of {SMALL}"
    for root, before in kept.items():
        after = (root / KEPT).stat()  # control: no run above wrote it again (each answered)
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
