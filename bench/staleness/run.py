"""Run the staleness benchmark (`harness.py` says what it measures) and print its table.

    python bench/staleness/run.py [--repo GIT_DIR] [--from A] [--to B] [--prefix src/click]
                                  [--subjects N] [--memories M] [--basic-memory off|auto|PATH]
                                  [--json PATH] [--markdown]

The repository is read at run time from a git directory on this machine (by default a
mirror of pallets/click); nothing of it is kept in moor's tree.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from staleness.harness import Result, run

DEFAULT_REPO = Path("/work/.mirror/pallets+click/repo")
DEFAULT_FROM, DEFAULT_TO, DEFAULT_PREFIX = "8.1.8", "8.2.0", "src/click"
DEFAULT_SUBJECTS = 40  # per kind of history
DEFAULT_MEMORIES = 400
SYSTEMS = ("moor", "basic-memory", "timestamp", "grep")
LABELS = {
    "moor": "moor",
    "basic-memory": "basic-memory (keyword)",
    "timestamp": '"file changed since" rule',
    "grep": "Markdown + grep",
}


def markdown(result: Result) -> str:
    """The published table: one row per system."""
    a, b = result.labels
    subjects = sum(result.subjects.values())
    kinds = ", ".join(f"{n} {kind}" for kind, n in result.subjects.items())
    lines = [
        f"{result.source} {a} → {b} ({result.dates[0]} → {result.dates[1]}): "
        f"{result.memories} memories written at {a}, {subjects} questions ({kinds}).",
        "",
        "| system | stale served as current | current missed | answer recall@5 "
        "| tokens / question |",
        "|---|---|---|---|---|",
    ]
    for name in (n for n in SYSTEMS if n in result.scores):
        rates = result.scores[name].rates()
        lines.append(
            f"| {LABELS[name]} | {rates['stale_served_as_current']:.0%} "
            f"| {rates['current_missed']:.0%} | {rates['recall_at_5']:.2f} "
            f"| {rates['tokens_per_question']:.0f} |"
        )
    if result.skipped:
        lines += ["", *(f"{line}." for line in result.skipped)]
    return "\n".join(lines)


def section(result: Result) -> str:
    """What docs/benchmarks.md publishes between its staleness markers."""
    return "\n".join(
        [
            "### Staleness",
            "",
            "`python bench/staleness/run.py` — are agents served stale code memories? Built at "
            "run time from a public repository's history (a git directory on the machine; "
            "nothing of it is kept here): a memory written at the first release about each "
            "function or method with a docstring of six words or more (its first paragraph), "
            "bound by moor; the code advanced to the second release; for every other changed "
            "function a new memory written there too, the old one left in place. Which memories "
            "still hold is said by `ast`, not moor: the definition without its docstring, "
            "compared at both releases. Each subject is asked about by the words of its "
            "qualified name. *Stale served as current*: questions whose top 5 holds a stale "
            "memory not flagged; *current missed*: questions whose current memory is not in "
            "the top 5 or is flagged stale; *answer recall@5*: the current memory, else the "
            "stale one, in the top 5; *tokens*: what the top 5 injects (one per four "
            "characters; moor's as its agent surfaces frame it; basic-memory's search answers "
            "titles and links, an agent reads a note with a further call). All systems read the "
            "same memory files in the same run; basic-memory (installed from the package "
            "registry into its own virtual environment, keyword search through its own MCP "
            "server) reads a copy.",
            "",
            markdown(result),
            "",
            "`tests/bench/test_staleness.py` runs a small version in `make test` (moor serves no "
            "stale memory as current and misses no current one; grep and the timestamp rule "
            "still show the two failures), and under `make bench-check` runs the settings above "
            "and fails unless it measures this table exactly (the run is deterministic).",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="a git directory")
    parser.add_argument("--from", dest="rev_a", default=DEFAULT_FROM)
    parser.add_argument("--to", dest="rev_b", default=DEFAULT_TO)
    parser.add_argument("--prefix", default=DEFAULT_PREFIX, help="the folder of Python files")
    parser.add_argument("--subjects", type=int, default=DEFAULT_SUBJECTS)
    parser.add_argument("--memories", type=int, default=DEFAULT_MEMORIES)
    parser.add_argument(
        "--basic-memory",
        default="auto",
        help="off, auto (install it from the package registry into its own virtual "
        "environment when a Python >= 3.12 is here) or the path of its executable",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    if not args.repo.is_dir():
        print(f"staleness: no git directory at {args.repo}: pass --repo", file=sys.stderr)
        return 2
    result = run(
        args.repo,
        args.rev_a,
        args.rev_b,
        args.prefix,
        args.subjects,
        args.memories,
        basic_memory=args.basic_memory,
    )
    print(section(result) if args.markdown else markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result.as_json(), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
