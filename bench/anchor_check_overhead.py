"""What 20 command anchors add to a warm `moor check` of 1,000 symbol anchors, beyond the
commands' own run time (issue 25; goal: within the published warm-check time plus the
commands' own time).

Two workspaces hold the same 1,000 memories about standard-library symbols
(`check_speed.build_workspace`); the second also declares 20 command anchors
(`/bin/cat` of a 500-line roster each) with one memory about each. After a trusted bind,
the real CLI runs `moor check --trust --format json` in each, interleaved so load falls
alike on both, and the 20 commands run by themselves the same way; each figure is the
best of the rounds (noise only ever adds). The overhead is
with - without - the commands' own time.

    python bench/anchor_check_overhead.py [--rounds 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_speed import build_workspace, choose_symbols, moor

SYMBOLS = 1000
COMMANDS = 20
ARGV = ["/bin/cat"]


def add_command_anchors(root: Path) -> list[list[str]]:
    """Declare COMMANDS anchors, each with a memory; the argv of each."""
    toml = root / "moor.toml"
    lines = [toml.read_text(encoding="utf-8")]
    argvs = []
    for index in range(COMMANDS):
        name = f"roster-{index:02d}"
        (root / f"{name}.txt").write_text("".join(f"test_{i}\n" for i in range(500)))
        argv = [*ARGV, f"{name}.txt"]
        argvs.append(argv)
        lines.append(f"\n[anchors.{name}]\ncommand = {json.dumps(argv)}\n")
        (root / "memories" / f"c{index:02d}.md").write_text(
            f"---\nabout:\n  - anchor:{name}\n---\n# Roster {index}\n\nThe roster.\n",
            encoding="utf-8",
        )
    toml.write_text("".join(lines), encoding="utf-8")
    return argvs


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def warm_check(root: Path) -> tuple[float, float]:
    """Wall and CPU seconds (moor's and its commands')."""
    cpu = children_cpu()
    seconds, result = moor(root, "check", "--trust", "--format", "json")
    if result.returncode not in (0, 1):
        raise RuntimeError(f"moor check exited {result.returncode}: {result.stderr.strip()}")
    return seconds, children_cpu() - cpu


def commands_alone(root: Path, argvs: list[list[str]]) -> tuple[float, float]:
    cpu = children_cpu()
    started = time.perf_counter()
    for argv in argvs:
        subprocess.run(argv, cwd=root, capture_output=True, check=True)
    return time.perf_counter() - started, children_cpu() - cpu


def measure(rounds: int) -> dict[str, float]:
    symbols, files = choose_symbols(SYMBOLS)
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        without, with_ = Path(a), Path(b)
        build_workspace(without, symbols, files)
        build_workspace(with_, symbols, files)
        argvs = add_command_anchors(with_)
        for root in (without, with_):
            _, bound = moor(root, "bind", "--trust")
            if bound.returncode != 0:
                raise RuntimeError(f"moor bind exited {bound.returncode}: {bound.stderr}")
            warm_check(root)  # the first checks after bind write caches: not measured
            warm_check(root)
        plain, anchored, own = [], [], []
        for _ in range(rounds):
            plain.append(warm_check(without))
            anchored.append(warm_check(with_))
            own.append(commands_alone(with_, argvs))
    best: dict[str, float] = {}
    for unit, at in (("s", 0), ("cpu_s", 1)):
        best[f"without_{unit}"] = min(run[at] for run in plain)
        best[f"with_{unit}"] = min(run[at] for run in anchored)
        best[f"commands_{unit}"] = min(run[at] for run in own)
        best[f"overhead_{unit}"] = (
            best[f"with_{unit}"] - best[f"without_{unit}"] - best[f"commands_{unit}"]
        )
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    result = measure(options.rounds)
    for unit, what in (("s", "wall"), ("cpu_s", "CPU")):
        print(
            f"{what}: warm check of {SYMBOLS} symbol anchors {result[f'without_{unit}']:.3f} s;"
            f" with {COMMANDS} command anchors {result[f'with_{unit}']:.3f} s; the commands "
            f"alone {result[f'commands_{unit}']:.3f} s; overhead "
            f"{result[f'overhead_{unit}'] * 1000:.0f} ms "
            f"({result[f'overhead_{unit}'] / COMMANDS * 1000:.1f} ms a command)"
        )
    if options.json:
        options.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
