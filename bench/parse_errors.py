"""What an unclosed bracket elsewhere in a file does to the definitions moor is bound to.

Real code nobody here wrote — the running interpreter's standard library — is parsed; in
each file that parses cleanly, one unclosed bracket (` foo(`, ` [` or ` {`, chosen with a
fixed seed) is appended to a random non-blank line. For every other definition with a
unique qualified name (the edited one, whose span holds the insertion, is left out), its
code is unchanged, so the only right answers are `current` or `unverified`:

* baseline — what moor said before: the definition looked up in the new parse as it is,
  `gone` when error recovery lost it (and `moved`, had a same-named copy existed
  elsewhere), `drifted` when recovery reshaped it;
* moor — `FileObserver.observe` on the mutated file on disk, with the bound address
  expected (what `Checker.observe` passes): `parse_error_near_symbol` where an error region
  may hide or reshape the definition (memory: parse-errors-reach-what-follows).

Prints both, the false gone/drifted of each, and how many definitions moor left
unverified (the price: a real change to them is not reported until the bracket is closed).

    .venv/bin/python bench/parse_errors.py [--files 250] [--seed 2] [--language python]

Other languages read the relocation benchmark's real sources (Go's, the JDK's, Debian's
crates, npm's), where bench/setup.sh installed them.
"""

from __future__ import annotations

import argparse
import random
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path

from moor_engine.grounding.observe import (
    FileObserver,
    FileView,
    Found,
    NotFound,
    derivation_for,
    found_address,
)
from moor_extractors.model import Failure
from moor_extractors.reference import Reference
from moor_extractors.symbols import parse_source
from relocation import EXTENSIONS, SKIPPED_NOTE, find_source
from tree_sitter import Node

OPENERS = (b" foo(", b" [", b" {")
MAX_FILE = 60_000


def stdlib_files(count: int, rng: random.Random) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if 2_000 < p.stat().st_size < MAX_FILE)
    rng.shuffle(files)
    return files[:count]


def sources(language: str, count: int, rng: random.Random) -> list[tuple[str, bytes]]:
    """`count` files of real code in `language` (2-60 kB): the standard library for Python,
    the relocation benchmark's sources for the others."""
    if language == "python":
        return [(path.name, path.read_bytes()) for path in stdlib_files(count, rng)]
    source = find_source(language)
    if source is None:
        raise SystemExit(f"no {language} sources: {SKIPPED_NOTE.get(language, '?')}")
    found = [(rel, read()) for rel, read in source.files()]
    found = [(rel, data) for rel, data in found if 2_000 < len(data) < MAX_FILE]
    rng.shuffle(found)
    return found[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=250)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--language", default="python", choices=sorted(EXTENSIONS))
    args = parser.parse_args()
    language = args.language
    rng = random.Random(args.seed)
    baseline: Counter[str] = Counter()
    moor: Counter[str] = Counter()
    trials = 0
    reached = 0  # definitions an error may reach: a real change to them would be unverified
    reached_before = 0  # the same by the rule before issue 23: all that ends after the error
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for index, (_, source) in enumerate(sources(language, args.files, rng)):
            clean = parse_source(language, source)
            if clean.tree.root_node.has_error:
                continue
            sites = clean.sites()
            counts = Counter(site.qname for site in sites)
            rel = f"f{index}{EXTENSIONS[language]}"
            (root / rel).write_bytes(source)
            bound_observer = FileObserver(root, MAX_FILE * 2, None)
            bound = {}
            bound_context: dict[str, int] = {}
            for site in sites:
                if counts[site.qname] == 1:
                    found = bound_observer.observe(Reference(rel, site.qname, None))
                    if isinstance(found, Found):
                        bound[site.qname] = (site, found.address)
                        bound_context[site.qname] = clean.context_start(site)
            lines = source.split(b"\n")
            for _ in range(3):
                line = rng.randrange(len(lines))
                if not lines[line].strip():
                    continue
                trials += 1
                opener = rng.choice(OPENERS)
                mutated = [*lines[:line], lines[line] + opener, *lines[line + 1 :]]
                offset = len(b"\n".join(lines[: line + 1]))
                (root / rel).write_bytes(b"\n".join(mutated))
                observer = FileObserver(root, MAX_FILE * 2, None)
                view = observer.view(rel)
                assert view is not None and not isinstance(view, Failure)
                first = _first_error(view.parsed().tree.root_node)
                for qname, (site, address) in bound.items():
                    if bound_context[qname] <= offset <= site.end_byte:
                        continue  # the edited definition itself, or its doc comment
                    ref = Reference(rel, qname, None)
                    old = _baseline(observer, ref, address, language)
                    baseline[old] += 1
                    seen = observer.observe(ref, {address})
                    moor[_state(seen, address)] += 1
                    if _reachable(view, qname):
                        reached += 1
                    end = site.end_byte + (len(opener) if site.start_byte > offset else 0)
                    if first is not None and first < end:
                        reached_before += 1
            (root / rel).unlink()
    seconds = time.perf_counter() - started
    print(f"{trials} unclosed brackets in {args.files} {language} files ({seconds:.1f} s)")
    for name, counter in (("baseline", baseline), ("moor", moor)):
        total = sum(counter.values())
        parts = ", ".join(f"{state} {counter[state]}" for state in sorted(counter))
        print(f"  {name:8}: {total} unchanged definitions: {parts}")
    false_before = baseline["gone"] + baseline["drifted"]
    false_after = moor["gone"] + moor["drifted"]
    print(f"false gone/drifted: baseline {false_before}, moor {false_after}")
    unverified, total = moor["unverified"], sum(moor.values())
    print(f"left unverified (all of them lost or reshaped): {unverified} of {total}")
    print(
        f"reachable by the error (a real change there would be unverified, not drifted): "
        f"{reached} of {total} ({100 * reached / max(total, 1):.1f} %); by the rule before "
        f"(all that ends after the first error) {reached_before} "
        f"({100 * reached_before / max(total, 1):.1f} %)"
    )
    return 0 if false_after == 0 else 1


def _first_error(root: Node) -> int | None:
    """Where the first ERROR or MISSING node starts (what the rule before issue 23 used)."""
    if not root.has_error:
        return None
    node = root
    while not (node.is_error or node.is_missing):
        child = next((c for c in node.children if c.has_error or c.is_missing), None)
        if child is None:
            break
        node = child
    return node.start_byte


def _reachable(view: FileView, qname: str) -> bool:
    """Whether a real change to the definition would be unverified, not drifted: an error
    region may hide it or reshape it."""
    if not view.error_regions():
        return False
    indexes = view.named(qname)
    if len(indexes) != 1:
        return view.error_hiding(qname.rpartition(".")[2]) is not None
    return view.error_reaching(view.sites()[indexes[0]]) is not None


def _baseline(observer: FileObserver, ref: Reference, address: str, language: str) -> str:
    """What the definition looked like to moor before: the new parse taken as it is."""
    view = observer.view(ref.path or "")
    assert view is not None and not isinstance(view, Failure)
    indexes = view.named(ref.symbol or "")
    if len(indexes) != 1:
        return "gone"
    site = view.sites()[indexes[0]]
    if site.has_error:
        return "unverified"  # parse_error_in_symbol, as before
    facts = view.facts_at(indexes[0])
    derivation = derivation_for(ref, language)
    return "current" if found_address(derivation, facts) == address else "drifted"


def _state(observation: object, address: str) -> str:
    if isinstance(observation, Failure):
        return "unverified"
    if isinstance(observation, NotFound):
        return "gone"
    assert isinstance(observation, Found)
    return "current" if observation.address == address else "drifted"


if __name__ == "__main__":
    sys.exit(main())
