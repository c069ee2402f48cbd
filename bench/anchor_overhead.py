"""Observation overhead of a command anchor beyond the command's own run time (issue 25;
goal ≤ 5 ms): the same argv run N times by `subprocess.run` (the baseline) and by moor's
probe (cleared environment, process group, capped reads, facts, address), interleaved so
the machine's load falls alike on both; the overhead is the difference of the medians.

    python bench/anchor_overhead.py [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from moor_engine.anchors import facts, probe
from moor_engine.anchors.declarations import parse_declarations


def measure(runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "roster.txt").write_text("".join(f"test_{i}\n" for i in range(500)))
        argv = ["/bin/cat", "roster.txt"]
        declaration = parse_declarations({"roster": {"command": argv}})["roster"]
        direct: list[float] = []
        moor: list[float] = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(argv, cwd=root, capture_output=True, check=True)
            direct.append(time.perf_counter() - started)
            started = time.perf_counter()
            output = probe.run(root, declaration, {})
            assert isinstance(output, probe.Output)
            value = facts.parse(declaration, output.stdout)
            facts.observation(declaration, value)
            moor.append(time.perf_counter() - started)
    return {
        "command_ms": statistics.median(direct) * 1000,
        "observed_ms": statistics.median(moor) * 1000,
        "overhead_ms": (statistics.median(moor) - statistics.median(direct)) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    result = measure(parser.parse_args().runs)
    print(
        f"command alone {result['command_ms']:.2f} ms, observed by moor "
        f"{result['observed_ms']:.2f} ms: overhead {result['overhead_ms']:.2f} ms (goal ≤ 5 ms)"
    )


if __name__ == "__main__":
    main()
