"""A small live run of bench/recall_quality.py: moor's recall beats its baselines, the current
memory of every verified subject outranks its stale ones, and the grep baseline still shows
stale memories (if it stopped, the comparison would prove nothing). `make test` runs a tiny
sample; `make bench-check` the small one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.bench_check
def test_a_small_recall_run_ranks_current_memories_first_and_beats_grep(tmp_path: Path) -> None:
    assert_ranks_current_first_and_beats_grep(tmp_path, size=1000, queries=40, subjects=10)


@pytest.mark.slow
def test_a_tiny_recall_run_ranks_current_memories_first_and_beats_grep(tmp_path: Path) -> None:
    assert_ranks_current_first_and_beats_grep(tmp_path, size=200, queries=10, subjects=4)


def assert_ranks_current_first_and_beats_grep(
    tmp_path: Path, *, size: int, queries: int, subjects: int
) -> None:
    """What every run must show, at any size: quality and currency, never latency (which is
    the published benchmark's business, `make bench-check`)."""
    out = tmp_path / "recall.json"
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench/recall_quality.py"),
            "--sizes",
            str(size),
            "--queries",
            str(queries),
            "--subjects",
            str(subjects),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    value = json.loads(out.read_text(encoding="utf-8"))
    systems = value["quality"][0]["systems"]
    moor, grep, bm25 = (systems[name]["all"] for name in ("moor", "grep", "bm25"))
    assert moor["queries"] == 2 * queries
    assert moor["recall_at_5"] > grep["recall_at_5"] and moor["mrr"] > grep["mrr"]
    assert moor["recall_at_5"] >= bm25["recall_at_5"] - 0.02
    currency = value["currency"]
    assert currency["verified"] >= 0.8 * currency["subjects"], currency
    assert currency["rates"]["moor"] == 1.0, currency
    # Each history counts (a rate of 1.0 needs at least one verified subject of that kind).
    assert currency["by_change"]["moor"] == dict.fromkeys(
        ("drifted", "gone", "superseded", "forgotten"), 1.0
    ), currency
    # The control still reproduces the problem moor solves.
    assert currency["stale_shown"]["grep"] >= 0.5, currency
    assert currency["rates"]["grep"] < 1.0, currency
    assert currency["by_change"]["grep"]["superseded"] < 1.0, currency
    # A retired memory is never shown by moor, however relevant; grep shows them.
    shown = currency["stale_shown_by_change"]
    assert shown["moor"]["superseded"] == shown["moor"]["forgotten"] == 0.0, currency
    assert shown["grep"]["superseded"] > 0.5 and shown["grep"]["forgotten"] > 0.5, currency
