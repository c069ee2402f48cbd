"""The README's *Reliability* figures: every published moor row says nothing was lost,
every killed action recovered and left no temporary file, every hostile case refused, no
fuzzed input an internal error — and a live run of the same benchmark (a smaller sample) agrees:
a tiny one in `make test`, the larger one (with the disk cases) in `make bench-check`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
START, END = "<!-- bench:reliability:start -->", "<!-- bench:reliability:end -->"


def _section() -> str:
    text = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    match = re.search(re.escape(START) + r"(.*?)" + re.escape(END), text, re.DOTALL)
    assert match, "README has no reliability section"
    return match.group(1)


def test_every_published_reliability_row_is_all_of_its_cases() -> None:
    section = _section()
    rows = re.findall(r"^\| (?!---)(.+?) \| (\d[\d,]*) of (\d[\d,]*) \|", section, re.MULTILINE)
    assert len(rows) >= 6, rows  # concurrent, three actions, hostile, fuzz kinds
    # Each write killed, then checked for temporary files left behind: one row per write.
    for write in ("add", "edit", "supersede", "forget", "rules --write", "context --write"):
        assert f"`{write}` killed at each of its writes, nothing left behind" in section, write
    assert "`checkpoint save` killed at each of its writes, nothing left behind" in section
    for name, part, whole in rows:
        assert part == whole, f"README publishes {name}: {part} of {whole}"
    assert "updates lost" in section  # the baseline without the lock is published beside


@pytest.mark.bench_check
def test_a_live_fault_run_loses_nothing_and_recovers_every_killed_action() -> None:
    result = _fault_run("--per-action", "6", "--rounds", "2")
    # Mounting a tmpfs needs root, which CI has: the disk cases must have run there.
    disk = result.get("disk")
    assert disk is not None or os.geteuid() != 0, "the full/read-only disk cases did not run"
    if disk is not None:
        assert disk["cases"] >= 31 and disk["held"] == disk["cases"], disk


def test_a_tiny_live_fault_run_loses_nothing_and_recovers_every_killed_action() -> None:
    # The disk cases have their own tests (tests/cli/test_full_disk.py and its neighbours).
    _fault_run("--per-action", "1", "--rounds", "1", "--writers", "3", "--no-disk")


def _fault_run(*options: str) -> dict[str, Any]:
    """bench/faults.py's JSON for `options`, after checking what every run must show: no
    update lost, every killed action recovered and left nothing behind, every hostile case
    refused."""
    if shutil.which("strace") is None:
        pytest.fail("strace is missing: `bash bench/setup.sh --tools` installs it")
    run = subprocess.run(
        [sys.executable, str(REPO / "bench/faults.py"), *options, "--no-baseline", "--json"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    result: dict[str, Any] = json.loads(run.stdout)
    assert result["concurrent"]["rounds_nothing_lost"] == result["concurrent"]["rounds"]
    for action, row in result["killed"].items():
        assert row["killed"] > 0, f"{action}: no run was actually killed"
        assert row["recovered"] == row["trials"], (action, row, run.stderr)
    for action, row in result["leftovers"].items():
        assert row["killed"] > 0, f"{action}: no run was actually killed"
        assert row["clean"] == row["trials"], (action, row, run.stderr)
    assert result["hostile"]["refused"] == result["hostile"]["cases"], result["hostile"]
    assert result["hostile"]["cases"] >= 13, result["hostile"]  # planted modules, FIFO ignore
    return result
