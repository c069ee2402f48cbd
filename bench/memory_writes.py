"""Write throughput: memories per second through the one write path (`memory_writes.add`).

A temporary workspace gets one Python file of K small functions. Then, in this process:

* add — N `add` calls through one open session (as a long-lived server would), each a new
  memory about one function: validated, written exclusively, bound, journalled, and
  answered with what is already known about that function (every fifth function has a
  memory already, so that answer is not always empty);
* one bind each — the same N memory files written straight to disk, each followed by
  `bind` of that one memory: today's cheapest one-memory-at-a-time write, with the same
  write lock, intent record and whole-moor.lock rewrite (the baseline of the ratio);
* bulk — the N files written, then one `bind` of them all (how fast memories land at all).

Also a few `moor add` processes through the real CLI, whose cost is mostly start-up.
Each figure is the best of several rounds (noise on a shared machine only adds time).

    python bench/memory_writes.py [--sizes 100,1000] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from moor_engine.grounding.actions import bind
from moor_engine.memory.memory_writes import Draft, add
from moor_engine.session import Session

DEFAULT_SIZES = (100, 500)
ROUNDS = 2
CLI_ADDS = 5


def _workspace(root: Path, functions: int) -> None:
    root.mkdir(parents=True)
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (root / "memories").mkdir()
    code = "".join(
        f"def f{i}(x):\n    total = x * {i} + {i}\n    return [total, x]\n\n"
        for i in range(functions)
    )
    (root / "src").mkdir()
    (root / "src/app.py").write_text(code, encoding="utf-8")


def _memory_text(i: int) -> str:
    return (
        f"---\nabout:\n  - src/app.py#f{i}\nconfidence: inferred\n---\n"
        f"# Memory number {i} about f{i}\n\nf{i} returns its total first.\n\n"
        "## When this changes, ask\n- Does it still?\n"
    )


def _timed_adds(base: Path, n: int) -> float:
    root = base / "adds"
    _workspace(root, n)
    with Session.open(root) as session:
        for i in range(0, n, 5):  # something already known about every fifth function
            (root / f"memories/known{i}.md").write_text(_memory_text(i), encoding="utf-8")
        assert not bind(session, []).refused
        start = time.perf_counter()
        for i in range(n):
            written = add(
                session, Draft(f"f{i} returns its total first", about=[f"src/app.py#f{i}"])
            )
            assert written.ok, written.refused
        seconds = time.perf_counter() - start
    shutil.rmtree(root)
    return seconds


def _timed_baseline(base: Path, n: int, *, each: bool) -> float:
    root = base / "baseline"
    _workspace(root, n)
    with Session.open(root) as session:
        for i in range(0, n, 5):
            (root / f"memories/known{i}.md").write_text(_memory_text(i), encoding="utf-8")
        assert not bind(session, []).refused
        start = time.perf_counter()
        for i in range(n):
            (root / f"memories/m{i}.md").write_text(_memory_text(i), encoding="utf-8")
            if each:
                assert not bind(session, [f"memories/m{i}.md"]).refused
        if not each:
            assert not bind(session, []).refused
        seconds = time.perf_counter() - start
    shutil.rmtree(root)
    return seconds


def _timed_cli(base: Path) -> float:
    root = base / "cli"
    _workspace(root, CLI_ADDS)
    env = {**os.environ, "NO_COLOR": "1"}
    start = time.perf_counter()
    for i in range(CLI_ADDS):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "moor",
                "add",
                f"f{i} returns its total first",
                "--about",
                f"src/app.py#f{i}",
            ],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
        )
    seconds = (time.perf_counter() - start) / CLI_ADDS
    shutil.rmtree(root)
    return seconds


@dataclass(frozen=True)
class Row:
    memories: int
    add_per_s: float
    add_ms_each: float
    bind_each_per_s: float
    bulk_per_s: float
    ratio_to_bind_each: float  # one add's time over one single-memory bind's


@dataclass(frozen=True)
class Measured:
    rows: list[Row]
    cli_ms_each: float  # one `moor add` process, start-up included
    python_ms: float  # `python -c pass`, in the same run: what start-up alone costs


def _python_start() -> float:
    start = time.perf_counter()
    for _ in range(CLI_ADDS):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - start) / CLI_ADDS


def measure(sizes: Sequence[int], rounds: int = ROUNDS) -> Measured:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for n in sizes:
            adds = min(_timed_adds(base, n) for _ in range(rounds))
            each = min(_timed_baseline(base, n, each=True) for _ in range(rounds))
            bulk = min(_timed_baseline(base, n, each=False) for _ in range(rounds))
            rows.append(
                Row(
                    memories=n,
                    add_per_s=round(n / adds, 1),
                    add_ms_each=round(1000 * adds / n, 2),
                    bind_each_per_s=round(n / each, 1),
                    bulk_per_s=round(n / bulk, 1),
                    ratio_to_bind_each=round(adds / each, 2),
                )
            )
        cli = min(_timed_cli(base) for _ in range(rounds))
        python = min(_python_start() for _ in range(rounds))
    return Measured(rows, round(1000 * cli, 1), round(1000 * python, 1))


def print_table(measured: Measured) -> None:
    print(
        f"{'N':>6}  {'add/s':>7}  {'ms/add':>7}  {'bind each/s':>11}  {'bulk/s':>7}  "
        f"{'add÷bind each':>13}"
    )
    for row in measured.rows:
        print(
            f"{row.memories:>6}  {row.add_per_s:>7}  {row.add_ms_each:>7}  "
            f"{row.bind_each_per_s:>11}  {row.bulk_per_s:>7}  {row.ratio_to_bind_each:>13}"
        )
    print(
        f"`moor add` through the CLI (a process each): {measured.cli_ms_each:.0f} ms per memory "
        f"(`python -c pass`: {measured.python_ms:.0f} ms)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    measured = measure([int(s) for s in args.sizes.split(",") if s])
    print_table(measured)
    if args.json is not None:
        args.json.write_text(json.dumps(asdict(measured), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
