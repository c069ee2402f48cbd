"""How moor's cost grows with the number of memories: the same operation at N and 10·N.

A check, a bind or a recall whose time grows faster than the memories it handles is a
quadratic path waiting for a large repository (issue 22: a per-memory sort of the whole
`supersedes` map made a warm check of 10,000 memories 28x the 1,000 one). This times each
operation at every size and prints, for each size with one a tenth of it measured too, the
ratio t(10·N) / t(N): linear growth gives at most 10 (less, as start-up is paid once), and
the run fails (exit 1) when a ratio exceeds 12 — or, where the code the memories are about
grew more than tenfold too, 12 times a tenth of that growth (`allowed`).

Workspaces are made as `check_speed.py` makes them: standard-library files copied in (the
files with the most definitions first) and N memories, each about one symbol; past the
~18,000 nameable symbols of the standard library, memories are about the same symbols again
(as several memories of a real repository are about one function). Each operation is the
real CLI as a subprocess, start-up included:

* bind — `moor bind` of every memory in a workspace with no moor.lock and no `.moor/`;
* cold — `moor check` with `.moor/` removed (no journal, no parse caches);
* warm — `moor check` again right after;
* recall — `moor recall` of one query after the index was built (a warm one-shot recall).

Beside them in the same run, the baselines each ratio to the machine's state is read
against: `python -c pass` and the tree-sitter parse of the referenced files (in this
process). Checks and recalls are the best of several rounds (noise only adds time); bind, the
slowest, runs once per size. The load average (`uptime`) is printed with the numbers. The
ratios compare CPU seconds (the process's and its children's, from `getrusage`): on a shared
machine other processes stretch the clock several times over, the CPU time hardly (a bind
of 30,000 took 25x the clock time of 3,000 at load 18, and 6.9x its CPU time).

    python bench/growth.py [--sizes 1000,10000,30000] [--rounds 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_speed import Symbol, build_workspace, choose_symbols, parse_time

DEFAULT_SIZES = (1000, 10000, 30000)
ROUNDS = 3
LIMIT = 12.0  # t(10·N) / t(N): linear with headroom
OPERATIONS = ("bind", "cold", "warm", "recall")
QUERY = "parse header"


@dataclass
class Row:
    n: int
    files: int
    python_s: float  # `python -c pass`, this run
    parse_s: float  # tree-sitter parse of the referenced files, this run
    load: float  # 1-minute load average when the row was measured
    times: dict[str, float] = field(default_factory=dict)  # operation -> seconds
    error: str = ""
    code_bytes: int = 0  # the referenced files' size: the code the operations read
    # operation -> CPU seconds of the process (and its children): what the ratios compare,
    # as other processes on a busy machine stretch the clock far more than the CPU time
    cpu: dict[str, float] = field(default_factory=dict)


def symbols_for(n: int) -> tuple[list[Symbol], list[Path]]:
    """`n` symbols of the standard library, cycled when it has fewer nameable ones."""
    symbols, files = choose_symbols(n)
    if not symbols:
        raise RuntimeError("no standard-library symbols found")
    cycled = [symbols[i % len(symbols)] for i in range(n)]
    return cycled, files


def make_workspace(root: Path, n: int) -> list[Path]:
    """A workspace of `n` unbound memories; the standard-library files they are about."""
    symbols, files = symbols_for(n)
    build_workspace(root, symbols, files)
    return files


def best(measure: Callable[[], float], rounds: int) -> float:
    return min(measure() for _ in range(rounds))


def best_pair(measure: Callable[[], tuple[float, float]], rounds: int) -> tuple[float, float]:
    """The best clock time and the best CPU time of `rounds` runs."""
    runs = [measure() for _ in range(rounds)]
    return min(wall for wall, _ in runs), min(cpu for _, cpu in runs)


def python_pass() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def timed(root: Path, *args: str) -> tuple[float, float]:
    """`moor ARGS` as a user runs it (with Python's byte-code cache): its clock and CPU
    seconds."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-P", "-m", "moor", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1):
        raise RuntimeError(f"moor {' '.join(args)} exited {result.returncode}: {result.stderr}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def cold_check(root: Path) -> tuple[float, float]:
    shutil.rmtree(root / ".moor", ignore_errors=True)
    return timed(root, "check", "--format", "json")


def measure(n: int, rounds: int) -> Row:
    with tempfile.TemporaryDirectory(prefix=f"moor-growth-{n}-") as scratch:
        root = Path(scratch)
        files = make_workspace(root, n)
        row = Row(
            n=n,
            files=len(files),
            code_bytes=sum(path.stat().st_size for path in files),
            python_s=best(python_pass, rounds),
            parse_s=best(lambda: parse_time(files), rounds),
            load=os.getloadavg()[0],
        )
        try:
            row.times["bind"], row.cpu["bind"] = timed(root, "bind")
            row.times["cold"], row.cpu["cold"] = best_pair(lambda: cold_check(root), rounds)
            timed(root, "check")  # the last cold check's caches, whole
            row.times["warm"], row.cpu["warm"] = best_pair(
                lambda: timed(root, "check", "--format", "json"), rounds
            )
            timed(root, "recall", QUERY)  # builds the index
            row.times["recall"], row.cpu["recall"] = best_pair(
                lambda: timed(root, "recall", QUERY), rounds
            )
        except RuntimeError as failure:
            row.error = str(failure)
        return row


def ratios(rows: list[Row]) -> dict[int, dict[str, float]]:
    """For each size with one a tenth of it measured: operation -> t(10·N) / t(N), in CPU
    seconds."""
    by_n = {row.n: row for row in rows}
    found: dict[int, dict[str, float]] = {}
    for row in rows:
        smaller = by_n.get(row.n // 10)
        if smaller is None or row.n % 10 or row.error or smaller.error:
            continue
        # CPU seconds where the run has them (a run before they were kept: the clock's)
        mine, theirs = (
            (row.cpu, smaller.cpu) if row.cpu and smaller.cpu else (row.times, smaller.times)
        )
        found[row.n] = {
            op: mine[op] / theirs[op] for op in OPERATIONS if op in mine and theirs.get(op)
        }
    return found


def allowed(rows: list[Row]) -> dict[int, float]:
    """For each size with one a tenth of it measured: the largest ratio linear growth
    explains. The operations read the code the memories are about as well as the memories,
    and the files with the most definitions come first, so the code grows faster than the
    memories (3 files at 1,000, 89 at 10,000): the limit grows with it."""
    by_n = {row.n: row for row in rows}
    found: dict[int, float] = {}
    for row in rows:
        smaller = by_n.get(row.n // 10)
        if smaller is None or row.n % 10 or not smaller.code_bytes:
            continue
        found[row.n] = LIMIT * max(1.0, row.code_bytes / smaller.code_bytes / 10)
    return found


def sizes_to_measure(sizes: list[int]) -> list[int]:
    """The sizes asked for and a tenth of each (the N its ratio is taken against)."""
    wanted = set(sizes) | {size // 10 for size in sizes if size >= 100 and size % 10 == 0}
    return sorted(wanted)


def print_table(rows: list[Row]) -> None:
    found = ratios(rows)
    limits = allowed(rows)
    header = (
        f"{'N':>7} {'files':>5} {'MB':>6} {'load':>5} {'py s':>6} {'parse s':>7} "
        + " ".join(f"{op + ' s':>9}" for op in OPERATIONS)
        + "  "
        + " ".join(f"{op + ' x':>9}" for op in OPERATIONS)
        + f" {'limit':>6}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        times = " ".join(f"{row.times.get(op, float('nan')):>9.3f}" for op in OPERATIONS)
        grown = found.get(row.n, {})
        factors = " ".join(
            f"{grown[op]:>8.1f}x" if op in grown else f"{'':>9}" for op in OPERATIONS
        )
        limit = f"{limits[row.n]:>5.1f}x" if row.n in limits else f"{'':>6}"
        print(
            f"{row.n:>7} {row.files:>5} {row.code_bytes / 1e6:>6.2f} {row.load:>5.1f} "
            f"{row.python_s:>6.3f} {row.parse_s:>7.3f} {times}  {factors} {limit}"
            + (f"  ERROR {row.error}" if row.error else "")
        )


def over_limit(rows: list[Row]) -> list[str]:
    limits = allowed(rows)
    return [
        f"{op} at N={n}: {factor:.1f}x the time at N={n // 10} (limit {limits.get(n, LIMIT):.1f}x)"
        for n, grown in ratios(rows).items()
        for op, factor in grown.items()
        if factor > limits.get(n, LIMIT)
    ]


def load_rows(path: Path) -> tuple[list[Row], str]:
    """The rows a `--json` run wrote, and the Python version it ran on."""
    payload = json.loads(path.read_text(encoding="utf-8"))
    rows = [Row(**row) for row in payload["rows"]]
    for row in rows:
        if not row.code_bytes:  # a run before the field: the same files, chosen again
            row.code_bytes = sum(path.stat().st_size for path in symbols_for(row.n)[1])
    return rows, str(payload["python"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--json", type=Path, default=None, help="write the numbers here")
    args = parser.parse_args(argv)
    sizes = sizes_to_measure([int(s) for s in args.sizes.split(",") if s.strip()])
    print(
        f"moor growth — Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"best of {args.rounds} (bind: once); load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    rows = []
    for n in sizes:
        started = time.perf_counter()
        rows.append(measure(n, args.rounds))
        print(f"  N={n}: measured in {time.perf_counter() - started:.1f} s", flush=True)
    print()
    print_table(rows)
    if args.json is not None:
        payload = {"python": platform.python_version(), "rows": [asdict(r) for r in rows]}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    failed = over_limit(rows) + [f"N={r.n}: {r.error}" for r in rows if r.error]
    for line in failed:
        print(f"FAILED: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
