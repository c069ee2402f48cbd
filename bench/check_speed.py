"""How long `moor check` takes on N memories, cold and warm, against parsing the same files.

For each N, a temporary workspace gets copies of standard-library files (those with the most
definitions first, as real repositories have many symbols per file) and N memories, each
about one symbol. After an in-process `bind`, the real CLI runs as a subprocess:

* cold — `.moor/` removed (no journal, no parse cache), then `moor check --format json`;
* warm — `moor check` again right after;
* parse — the baseline, in this process: read and tree-sitter-parse exactly the referenced
  files once each.

Each figure is the best (minimum) of several rounds: on a shared machine noise only ever adds
time, so the minimum is the most repeatable estimate. Nothing is asserted: this is a measurement.

    python bench/check_speed.py [--sizes 100,1000,10000] [--json PATH]
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drift_quality import all_qnames, stdlib_files, stdlib_root

DEFAULT_SIZES = (100, 1000, 10000)
ROUNDS = 3
WARM_TARGET_N, WARM_TARGET_S = 1000, 0.5
COLD_TARGET_RATIO = 1.5
_DEFINITION = re.compile(rb"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]", re.MULTILINE)


@dataclass(frozen=True)
class Symbol:
    path: str  # workspace-relative
    qname: str

    @property
    def reference(self) -> str:
        return f"{self.path}#{self.qname}"


@dataclass
class Run:
    n: int
    files: int
    bytes: int
    parse_s: float
    cold_s: float
    warm_s: float
    startup_s: float
    bind_s: float
    states: dict[str, int]
    error: str = ""  # a check that failed: its times are not measurements

    @property
    def mb(self) -> float:
        return self.bytes / 1_000_000

    @property
    def cold_parse_ratio(self) -> float:
        return self.cold_s / self.parse_s if self.parse_s else float("inf")

    def as_json(self) -> dict[str, object]:
        return {
            **asdict(self),
            "mb": round(self.mb, 3),
            "cold_parse_ratio": round(self.cold_parse_ratio, 3),
        }


# --------------------------------------------------------------------------------------------
# Which symbols


def files_by_definitions(root: Path) -> list[Path]:
    """Standard-library files, most definitions first (then by path: deterministic)."""
    counted = []
    for path in stdlib_files(root):
        data = path.read_bytes()
        counted.append((-len(_DEFINITION.findall(data)), path.relative_to(root).as_posix(), path))
    return [path for _count, _rel, path in sorted(counted)]


def nameable_symbols(tree: ast.Module) -> Iterator[str]:
    """Top-level functions and classes and the methods of top-level classes whose qualified
    name is unique in the file, in source order."""
    counts = Counter(all_qnames(tree))
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for node in tree.body:
        if not isinstance(node, definitions):
            continue
        if counts[node.name] == 1:
            yield node.name
        if isinstance(node, ast.ClassDef):
            for child in node.body:
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    qname = f"{node.name}.{child.name}"
                    if counts[qname] == 1:
                        yield qname


def choose_symbols(n: int) -> tuple[list[Symbol], list[Path]]:
    """The first `n` nameable symbols of the files with the most definitions."""
    root = stdlib_root()
    symbols: list[Symbol] = []
    files: list[Path] = []
    for path in files_by_definitions(root):
        if len(symbols) >= n:
            break
        try:
            tree = ast.parse(path.read_bytes().decode("utf-8"))
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        rel = path.relative_to(root).as_posix()
        found = [Symbol(rel, qname) for qname in nameable_symbols(tree)][: n - len(symbols)]
        if found:
            symbols.extend(found)
            files.append(path)
    return symbols, files


# --------------------------------------------------------------------------------------------
# The workspace


def build_workspace(root: Path, symbols: list[Symbol], files: list[Path]) -> None:
    stdlib = stdlib_root()
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    for path in files:
        target = root / path.relative_to(stdlib)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    memories = root / "memories"
    memories.mkdir()
    for index, symbol in enumerate(symbols):
        (memories / f"m{index:05d}.md").write_text(
            f"---\nabout:\n  - {json.dumps(symbol.reference)}\n---\n# Memory {index}\n\n"
            f"A note about {symbol.qname}.\n",
            encoding="utf-8",
        )


def bind_all(root: Path) -> tuple[float, list[str]]:
    from moor_engine.grounding.actions import bind
    from moor_engine.session import Session

    started = time.perf_counter()
    with Session.open(root) as session:
        outcome = bind(session, [])
    return time.perf_counter() - started, [r.message for r in outcome.refused]


# --------------------------------------------------------------------------------------------
# Timing


def moor(root: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    # Measured as a user runs it: with Python's byte-code cache. This machine sets
    # PYTHONDONTWRITEBYTECODE, which would add a re-compile of moor to every start.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-P", "-m", "moor", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return time.perf_counter() - started, result


def check(root: Path) -> tuple[float, dict[str, int]]:
    seconds, result = moor(root, "check", "--format", "json")
    if result.returncode not in (0, 1):
        raise RuntimeError(f"moor check exited {result.returncode}: {result.stderr.strip()}")
    summary = json.loads(result.stdout)["summary"]
    return seconds, {str(k): int(v) for k, v in summary.items()}


def parse_time(paths: list[Path]) -> float:
    """Read and parse each file once with tree-sitter, in this process."""
    import tree_sitter_python
    from tree_sitter import Language, Parser

    parser = Parser(Language(tree_sitter_python.language()))
    started = time.perf_counter()
    for path in paths:
        parser.parse(path.read_bytes())
    return time.perf_counter() - started


def best_of(measure: Callable[[], float], rounds: int = ROUNDS) -> float:
    return min(measure() for _ in range(rounds))


def measure(n: int) -> Run:
    symbols, files = choose_symbols(n)
    with tempfile.TemporaryDirectory(prefix=f"moor-speed-{n}-") as scratch:
        root = Path(scratch)
        build_workspace(root, symbols, files)
        bind_s, refused = bind_all(root)
        if refused:
            print(f"  N={n}: {len(refused)} memories could not be bound, e.g. {refused[0]}")
        startup = best_of(lambda: moor(root, "--version")[0])
        # The parse of one small file lasts milliseconds: more rounds for a stable floor.
        parse = best_of(lambda: parse_time(files), rounds=3 * ROUNDS)
        colds, warms = [], []
        states: dict[str, int] = {}
        error = ""
        try:
            for _ in range(ROUNDS):
                shutil.rmtree(root / ".moor", ignore_errors=True)
                cold, states = check(root)
                warm, _ = check(root)
                colds.append(cold)
                warms.append(warm)
        except RuntimeError as failure:
            error = str(failure)
            print(f"  N={n}: {error}")
    total = sum(path.stat().st_size for path in files)
    return Run(
        n=len(symbols),
        files=len(files),
        bytes=total,
        parse_s=parse,
        cold_s=min(colds) if not error else math.nan,
        warm_s=min(warms) if not error else math.nan,
        startup_s=startup,
        bind_s=bind_s,
        states=states,
        error=error,
    )


# --------------------------------------------------------------------------------------------
# Output


def print_table(runs: list[Run]) -> None:
    header = (
        f"{'N':>6} {'files':>5} {'MB':>6} {'parse s':>8} {'cold s':>7} {'warm s':>7} "
        f"{'cold/parse':>10} {'startup s':>9} {'bind s':>7}  states"
    )
    print(header)
    print("-" * len(header))
    for run in runs:
        states = ", ".join(f"{k} {v}" for k, v in run.states.items())
        print(
            f"{run.n:>6} {run.files:>5} {run.mb:>6.2f} {run.parse_s:>8.3f} {run.cold_s:>7.3f} "
            f"{run.warm_s:>7.3f} {run.cold_parse_ratio:>9.1f}x {run.startup_s:>9.3f} "
            f"{run.bind_s:>7.2f}  {states}"
        )
    print()
    for run in runs:
        if run.n == WARM_TARGET_N:
            verdict = "ok" if run.warm_s <= WARM_TARGET_S else "MISSED"
            print(
                f"target: warm check of {run.n} <= {WARM_TARGET_S} s: {run.warm_s:.3f} s {verdict}"
            )
    for run in runs:
        verdict = "ok" if run.cold_parse_ratio <= COLD_TARGET_RATIO else "MISSED"
        print(
            f"target: cold <= {COLD_TARGET_RATIO}x parse at N={run.n}: "
            f"{run.cold_parse_ratio:.1f}x {verdict}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, DEFAULT_SIZES)),
        help="comma-separated numbers of memories (default: %(default)s)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the numbers here")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",") if size.strip()]
    print(
        f"moor check speed — Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"best of {ROUNDS}; cold = no .moor/ (the OS file cache stays warm)"
    )
    runs = []
    for n in sizes:
        started = time.perf_counter()
        runs.append(measure(n))
        print(f"  N={n}: measured in {time.perf_counter() - started:.1f} s", flush=True)
    print()
    print_table(runs)
    if args.json is not None:
        payload = {"python": platform.python_version(), "runs": [r.as_json() for r in runs]}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
