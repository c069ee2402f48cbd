"""Fuzzed frontmatter, references, moor.lock text and moor.toml configs: no internal errors.

Each kind's cases are seeded random mutations of real inputs — moor's own `memories/` and
`moor.lock`, the references those memories hold, and moor.toml / pyproject.toml texts —
fed in process to the real parsing function:

* frontmatter — `parse_memory(path, bytes)`: never raises; `internal_error` is a bug;
* references — `parse_reference(text)`: a `Reference` or a `Failure`, never an exception;
* lock — `parse_lock(text)`: a `Lock` or a `LockError`, nothing else;
* config — `parse_config(bytes, name)`: a `Config` or a `ConfigError`, nothing else; an
  accepted config must also be usable (its `ignore` patterns compile and match).

Anything else is an internal error, counted and shown. The exit status is 1 if any was
found. Prints `kind: N cases, 0 internal errors` lines, and a summary JSON with `--json`.

    python bench/fuzz_inputs.py [--cases 10000] [--seed 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for package in ("extractors", "store", "engine"):
    sys.path.insert(0, str(ROOT / package))

from moor_engine.workspace.config import (  # noqa: E402
    DEFAULT_CONFIG_TEXT,
    Config,
    ConfigError,
    parse_config,
)
from moor_engine.workspace.workspace import Workspace  # noqa: E402
from moor_extractors.memory import parse_memory  # noqa: E402
from moor_extractors.model import Failure  # noqa: E402
from moor_extractors.reference import parse_reference  # noqa: E402
from moor_store.lockfile import LockError, parse_lock  # noqa: E402

KINDS = ("frontmatter", "references", "lock", "config")

# Pieces each kind's syntax is made of: mutations insert them, so cases stay near-valid.
_TOKENS: dict[str, list[str]] = {
    "frontmatter": [
        "---",
        "\n",
        "\r",
        ":",
        " ",
        "  - ",
        "[",
        "]",
        "{",
        "}",
        ",",
        "&a",
        "*a",
        "<<: ",
        "!!str ",
        "!!map ",
        "!tag ",
        "? ",
        "|",
        ">",
        "'",
        '"',
        "#",
        "about:",
        "watch:",
        "ref:",
        "links:",
        "supersedes:",
        "confidence:",
        "title:",
        "null",
        "~",
        "1e9",
        "\t",
        "\ufeff",
        "\x00",
        "\x85",
        "\u2028",
        "é",
        "#L1",
        ".py#",
        "...",
    ],
    "references": [
        "#",
        "/",
        ".",
        "..",
        "::",
        ">",
        " > ",
        "(",
        ")",
        "[",
        "]",
        "<",
        ">",
        ",",
        "@",
        "~",
        "\\",
        "\x00",
        "\n",
        " ",
        "anchor:",
        "L1",
        "L0",
        "-",
        "L2-L1",
        "*",
        "é",
        "\u200b",
        "..#",
        "a.py",
        "#L",
        "?",
        "%",
        "$",
    ],
    "lock": [
        "[",
        "]",
        "[[",
        "]]",
        "=",
        '"',
        "'",
        "\n",
        "\\",
        "\\u0000",
        "\\U0010ffff",
        "{",
        "}",
        ",",
        "version = ",
        "[memories.",
        "[[memories.",
        "anchors",
        "sha256:",
        "norm/1",
        "<<<<<<< HEAD\n",
        "=======\n",
        ">>>>>>> x\n",
        "# ",
        "1",
        "-1",
        "true",
        "1979-05-27",
        "\ufeff",
        "\r\n",
        "é",
        "\x7f",
    ],
    "config": [
        "[",
        "]",
        "[[",
        "]]",
        "=",
        '"',
        "'",
        "\n",
        "\\",
        "{",
        "}",
        ",",
        "memory_roots",
        "ignore",
        "max_file_size",
        "anchors",
        "rules",
        "[tool.moor]",
        "[tool]",
        "moor = ",
        "0",
        "-1",
        "1e9",
        "99999999999999999999",
        "true",
        "[]",
        '[""]',
        '"/"',
        '".."',
        '"[z-a]"',
        '"[abc"',
        '"\\\\"',
        '"\\u0000"',
        "\ufeff",
        "\r\n",
        "é",
        "#",
    ],
}
_RAW_BYTES = [b"\xff", b"\xfe", b"\xc3", b"\xe2\x80", b"\x00", b"\xed\xa0\x80"]


def _seeds() -> dict[str, list[str]]:
    memories = sorted((ROOT / "memories").glob("*.md"))
    texts = [path.read_text(encoding="utf-8") for path in memories]
    references: list[str] = []
    for text in texts:
        parsed = parse_memory("memories/seed.md", text.encode())
        if parsed.memory is not None:
            references.extend(entry.raw for entry in parsed.memory.about)
    references += ["anchor:release-checklist", "docs/a.md#Storage > Journal", "a.py#L3-L9"]
    lock = (ROOT / "moor.lock").read_text(encoding="utf-8")
    # Small locks too: a mutation near the top of a large one is rarely different.
    lock_lines = lock.split("\n")
    locks = [lock, "\n".join(lock_lines[:40]) + "\n", "\n".join(lock_lines[:12]) + "\n"]
    configs = [
        DEFAULT_CONFIG_TEXT,
        'memory_roots = ["memories", "docs/decisions"]\nignore = ["build/", "!keep"]\n',
        "max_file_size = 4096\n",
        '[tool.moor]\nmemory_roots = ["memories"]\nignore = ["*.gen.py"]\n',
        '[project]\nname = "x"\n[tool.ruff]\nline-length = 99\n[tool.moor]\nmax_file_size = 10\n',
    ]
    return {"frontmatter": texts, "references": references, "lock": locks, "config": configs}


def _mutate(rng: random.Random, text: str, kind: str, pool: list[str]) -> bytes:
    """One to four edits of `text`, as bytes (some cases are not UTF-8 at all)."""
    tokens = _TOKENS[kind]
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(text))
        span = rng.randint(0, 12)
        choice = rng.randrange(8)
        if choice <= 1:
            text = text[:at] + rng.choice(tokens) + text[at:]
        elif choice == 2:
            text = text[:at] + rng.choice(tokens) + text[at + span :]
        elif choice == 3:
            text = text[:at] + text[at + span :]
        elif choice == 4:
            text = text[:at] + text[at : at + span] * rng.randint(2, 40) + text[at:]
        elif choice == 5:
            lines = rng.choice(pool).split("\n")
            start = rng.randrange(len(lines))
            text = text[:at] + "\n".join(lines[start : start + rng.randint(1, 4)]) + text[at:]
        elif choice == 6:
            text = text[: rng.randint(0, len(text))]
        else:
            text = (
                text[:at]
                + chr(rng.choice([rng.randrange(32), rng.randrange(0x10FFFF)]))
                + text[at:]
            )
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.05:
        at = rng.randint(0, len(data))
        data = data[:at] + rng.choice(_RAW_BYTES) + data[at:]
    return data


@dataclass
class Tally:
    cases: int = 0
    accepted: int = 0  # parsed into a value
    refused: int = 0  # the documented error or problem
    internal: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _frontmatter(data: bytes) -> bool:
    parsed = parse_memory("memories/fuzz.md", data)
    if any(problem.code == "internal_error" for problem in parsed.problems):
        raise AssertionError(parsed.problems)
    return parsed.memory is not None


def _reference(data: bytes) -> bool:
    parsed = parse_reference(data.decode("utf-8", "replace"))
    return not isinstance(parsed, Failure)


def _lock(data: bytes) -> bool:
    try:
        parse_lock(data.decode("utf-8", "replace"))
    except LockError:
        return False
    return True


def _config(data: bytes, name: str, scratch: Path) -> bool:
    try:
        config = parse_config(data, name)
    except ConfigError as error:
        if not str(error).startswith(name):
            raise AssertionError(f"the message does not name the file: {error}") from error
        return False
    Workspace(scratch, config).is_ignored("src/app/main.py")  # an accepted config is usable
    return isinstance(config, Config)


def run(cases: int, seed: int, scratch: Path) -> dict[str, Tally]:
    seeds = _seeds()
    checks: dict[str, Callable[[bytes, random.Random], bool]] = {
        "frontmatter": lambda data, rng: _frontmatter(data),
        "references": lambda data, rng: _reference(data),
        "lock": lambda data, rng: _lock(data),
        "config": lambda data, rng: _config(
            data, "pyproject.toml" if b"[tool" in data else "moor.toml", scratch
        ),
    }
    tallies: dict[str, Tally] = {}
    for offset, kind in enumerate(KINDS):
        rng = random.Random(seed * 1000 + offset)
        pool = seeds[kind]
        tally = tallies[kind] = Tally()
        started = time.perf_counter()
        for _ in range(cases):
            data = _mutate(rng, rng.choice(pool), kind, pool)
            tally.cases += 1
            try:
                ok = checks[kind](data, rng)
            except Exception as error:  # exactly what is being counted
                shown = "".join(traceback.format_exception_only(error)).strip()
                tally.internal.append(f"{data[:300]!r}: {shown[:300]}")
                continue
            if ok:
                tally.accepted += 1
            else:
                tally.refused += 1
        tally.seconds = time.perf_counter() - started
    return tallies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=10_000, help="cases per kind")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="also print a summary JSON")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        tallies = run(args.cases, args.seed, Path(scratch))
    for kind, tally in tallies.items():
        print(
            f"{kind}: {tally.cases} cases, {len(tally.internal)} internal errors "
            f"({tally.accepted} accepted, {tally.refused} refused, {tally.seconds:.1f} s)"
        )
        for example in tally.internal[:5]:
            print(f"  {example}")
    if args.json:
        summary = {
            kind: {
                "cases": t.cases,
                "internal_errors": len(t.internal),
                "accepted": t.accepted,
                "refused": t.refused,
                "seconds": round(t.seconds, 2),
            }
            for kind, t in tallies.items()
        }
        print(json.dumps({"seed": args.seed, "kinds": summary}, indent=2))
    return 1 if any(t.internal for t in tallies.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
