"""Observation overhead of a command anchor beyond the command's own run time (issue 25;
goal ≤ 5 ms): the same argv run N times by `subprocess.run` (the baseline) and by moor's
probe (cleared environment, process group, capped reads, facts, address), interleaved so
the machine's load falls alike on both; the overhead is the difference of the medians.
With a rule (`size(obs.lines) < size(state.lines)`), the rule's evaluation over the same
facts is timed too (the CEL library already imported), and the library's import in a
fresh process (what the first rule of a check costs; a check without rules pays none).

    python bench/anchor_overhead.py [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from moor_engine.anchors import facts, probe, rules
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
        rule = {"when": "size(obs.lines) < size(state.lines)", "to": '{"status": "removed"}'}
        ruled = parse_declarations({"roster": {"command": argv, "rule": [rule]}})["roster"]
        obs = rules.as_object(value)
        now = datetime.now(UTC)
        rules.evaluate(ruled, obs, obs, now, now)  # compiled and imported once
        evaluated: list[float] = []
        for _ in range(runs):
            started = time.perf_counter()
            rules.evaluate(ruled, obs, obs, now, now)
            evaluated.append(time.perf_counter() - started)
    return {
        "rule_ms": statistics.median(evaluated) * 1000,
        "cel_import_ms": _import_ms(),
        "command_ms": statistics.median(direct) * 1000,
        "observed_ms": statistics.median(moor) * 1000,
        "overhead_ms": (statistics.median(moor) - statistics.median(direct)) * 1000,
    }


def _import_ms() -> float:
    code = "import time; t = time.perf_counter(); import cel_expr_python.cel; "
    code += "print(time.perf_counter() - t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
        for _ in range(5)
    ]
    return statistics.median(runs) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    result = measure(parser.parse_args().runs)
    print(
        f"command alone {result['command_ms']:.2f} ms, observed by moor "
        f"{result['observed_ms']:.2f} ms: overhead {result['overhead_ms']:.2f} ms (goal ≤ 5 ms)"
    )
    print(
        f"a rule over its 500 lines {result['rule_ms']:.3f} ms; importing the CEL library "
        f"{result['cel_import_ms']:.1f} ms in a fresh process (none without a rule)"
    )


if __name__ == "__main__":
    main()
