"""What a `gone` anchor costs a check in a large tree (issue 9.13), against no gone anchor.

A temporary git repository gets FILES small Python files (two functions each) and MEMORIES
memories, each about one function. Then the real CLI runs as a subprocess:

* bind — `moor bind` of the tree: it also builds the definition index (every file of the
  language parsed once, in a worker process per CPU);
* baseline — every anchor current: `moor check` on the intact tree (warm: the second
  check);
* 1 gone, 20 gone — that many bound functions rewritten into different code (no name or
  body left to follow), so each anchor is searched for in every other file. `cold` is the
  first check after the edit (the index built at bind is brought up to date: the files git
  names as changed are parsed), `warm` the checks after it, with nothing changed (the kept
  search is read back);
* 20 gone, after an unrelated edit — before each check another file of the tree is
  rewritten, so the kept searches do not apply: the definition index is brought up to
  date (one file) and every gone anchor is searched for again.

Each warm figure is the best of ROUNDS checks (noise only ever adds time), with the peak
resident memory of that process. The ratio is against the baseline measured in the same
run. Nothing is asserted: this is a measurement (tests/cli/test_relocation_scale.py keeps
the ratio bounded on a smaller tree).

    python bench/relocation_scale.py [--files 50000] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROUNDS = 3
MEMORIES = 20
TARGET_RATIO = 2.0  # one gone anchor costs less than twice a check with none
_PER_FOLDER = 500


@dataclass(frozen=True)
class Timing:
    seconds: float
    rss_mb: float
    cpu: float = 0.0  # the process's CPU seconds, its git commands included: robust to load


@dataclass(frozen=True)
class Result:
    files: int
    bind: Timing
    baseline: Timing
    gone: dict[int, tuple[Timing, Timing]]  # gone anchors -> (cold, warm)
    edited: Timing  # the most gone anchors, each check after an unrelated edit

    def ratio(self, gone: int, which: int = 1) -> float:
        return self.gone[gone][which].seconds / self.baseline.seconds

    def edited_ratio(self) -> float:
        return self.edited.seconds / self.baseline.seconds

    def cpu_ratio(self, gone: int, which: int = 1) -> float:
        return self.gone[gone][which].cpu / self.baseline.cpu


def rel(index: int) -> str:
    return f"pkg/d{index // _PER_FOLDER:03d}/m{index:05d}.py"


def module(index: int) -> str:
    return (
        f"def f{index}_a(x):\n"
        f"    total = x + {index}\n"
        f"    return total * 2\n"
        "\n\n"
        f"def f{index}_b(y):\n"
        f"    return [y] * {index % 7 + 1}\n"
    )


def rewritten(index: int) -> str:
    """The same file with its bound function replaced by unrelated code: gone."""
    return module(index).split("\n\n\n", 1)[1] + (
        f"\n\nclass Other{index}:\n    flag = {index % 3 == 0}\n"
    )


def make_tree(root: Path, files: int, memories: int = MEMORIES) -> None:
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (root / "memories").mkdir()
    for index in range(files):
        path = root / rel(index)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module(index), encoding="utf-8")
    for index in range(memories):
        (root / "memories" / f"m{index}.md").write_text(
            f"---\nabout:\n  - {rel(index)}#f{index}_a\n---\n# About f{index}_a\n\nWhy.\n"
            "\n## When this changes, ask\n- Still?\n",
            encoding="utf-8",
        )
    quiet = {"capture_output": True, "check": True, "cwd": root}
    subprocess.run(["git", "init", "-q"], **quiet)  # type: ignore[call-overload]
    subprocess.run(["git", "add", "-A"], **quiet)  # type: ignore[call-overload]
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "tree"],
        **quiet,  # type: ignore[call-overload]
    )


# Measured as a user runs it: with Python's byte-code cache (an installed package has one;
# the bind before the first measured check writes it). This machine sets
# PYTHONDONTWRITEBYTECODE, which would add a re-compile of moor to every start.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def moor_check(root: Path, command: str = "check") -> Timing:
    """One real `moor check` (or another command): wall time and the process's peak
    resident memory."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-P", "-m", "moor", command, "--format", "json"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    _pid, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise RuntimeError(f"moor {command} exited {code}: {process.stderr.read()!r}")  # type: ignore[union-attr]
    process.stderr.close()  # type: ignore[union-attr]
    return Timing(seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


def best(root: Path, rounds: int) -> Timing:
    runs = [moor_check(root) for _ in range(rounds)]
    fastest = min(runs, key=lambda t: t.seconds)
    return Timing(fastest.seconds, max(t.rss_mb for t in runs), min(t.cpu for t in runs))


def measure(
    files: int, gone_counts: tuple[int, ...] = (1, MEMORIES), rounds: int = ROUNDS
) -> Result:
    with tempfile.TemporaryDirectory(prefix="moor-relocation-scale-") as temp:
        root = Path(temp)
        make_tree(root, files, max(gone_counts))
        bind = moor_check(root, "bind")
        moor_check(root)  # the journal and the anchored files' cache rows exist from here
        baseline = best(root, rounds)
        gone: dict[int, tuple[Timing, Timing]] = {}
        done = 0
        for count in sorted(gone_counts):
            for index in range(done, count):
                (root / rel(index)).write_text(rewritten(index), encoding="utf-8")
            done = count
            cold = moor_check(root)
            gone[count] = (cold, best(root, rounds))
        edits: list[Timing] = []
        unrelated = root / rel(files - 1)
        for round_ in range(rounds):
            unrelated.write_text(module(files - 1) + f"\n\nLIMIT = {round_}\n", encoding="utf-8")
            edits.append(moor_check(root))
        edited = min(edits, key=lambda t: t.seconds)
        most = max(t.rss_mb for t in edits)
        return Result(
            files, bind, baseline, gone, Timing(edited.seconds, most, min(t.cpu for t in edits))
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    result = measure(args.files, rounds=args.rounds)
    print(f"{result.files} files, {platform.python_version()}, {os.cpu_count()} CPUs")
    print(f"bind (builds the index): {result.bind.seconds:.2f} s, {result.bind.rss_mb:.0f} MB")
    base = result.baseline
    print(
        f"no gone anchor (baseline): {base.seconds:.2f} s warm ({base.cpu:.2f} s CPU), "
        f"{base.rss_mb:.0f} MB"
    )
    for count, (cold, warm) in result.gone.items():
        print(
            f"{count:>2} gone: cold {cold.seconds:.2f} s ({cold.rss_mb:.0f} MB) = "
            f"{result.ratio(count, 0):.2f}x (CPU {result.cpu_ratio(count, 0):.2f}x), "
            f"warm {warm.seconds:.2f} s ({warm.rss_mb:.0f} MB) = "
            f"{result.ratio(count):.2f}x the baseline (CPU {result.cpu_ratio(count):.2f}x; "
            f"target < {TARGET_RATIO:g}x)"
        )
    edited = result.edited
    print(
        f"{max(result.gone)} gone, after an unrelated edit: {edited.seconds:.2f} s "
        f"({edited.rss_mb:.0f} MB) = {result.edited_ratio():.2f}x the baseline "
        f"(CPU {edited.cpu / base.cpu:.2f}x)"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(asdict(result), indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
