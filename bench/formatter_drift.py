"""Which axes a real formatter moves (issue 8 F): a formatter's change must move only `text`.

Copies real code nobody here wrote into a scratch folder, runs a real formatter over the
copy, and compares every definition's axes before and after, matched by qualified name
(and occurrence, for same-named variants). Every axis but `text` that differs is a
candidate false drift; the first differing tokens of each are printed, to classify.

    python bench/formatter_drift.py --language python --ext py \\
        --formatter "ruff format --no-cache" [--limit N] [--show N] PATH...

The formatter is an argv (split on spaces) run once with the scratch folder appended. It
is not a dependency of moor: install it wherever you like (e.g. /tmp/fmt-venv).
"""

from __future__ import annotations

import argparse
import difflib
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from moor_extractors.model import AXES
from moor_extractors.symbols import ParsedFile, parse_source

COMPARED = tuple(axis for axis in AXES if axis != "text")


def _tokens(parsed: ParsedFile) -> dict[tuple[str, int], dict[str, list[str]]]:
    """Each definition's token streams, by (qualified name, occurrence)."""
    seen: Counter[str] = Counter()
    found: dict[tuple[str, int], dict[str, list[str]]] = {}
    for site in parsed.sites():
        definition = parsed._located(site)
        assert definition.node is not None and definition.span is not None
        streams = parsed._spec.axis_tokens(definition.node, definition.span, parsed._shared())
        streams["place"] = [definition.place]
        streams["kind"] = [site.kind]
        found[(site.qname, seen[site.qname])] = streams
        seen[site.qname] += 1
    return found


def _first_difference(old: list[str], new: list[str]) -> str:
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            return f"{tag}: {old[max(i1 - 2, 0) : i2 + 1]} -> {new[max(j1 - 2, 0) : j2 + 1]}"
    return "(same tokens)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--language", required=True)
    parser.add_argument("--ext", required=True, help="file name ending, e.g. py or ts")
    parser.add_argument("--formatter", required=True)
    parser.add_argument("--limit", type=int, default=0, help="at most N files (random, seed 8)")
    parser.add_argument("--show", type=int, default=40, help="print N differences")
    args = parser.parse_args()
    files = sorted(
        file
        for path in args.paths
        for file in ([path] if path.is_file() else path.rglob(f"*.{args.ext}"))
        if file.is_file() and "test" not in file.name.lower()
    )
    if args.limit:
        files = random.Random(8).sample(files, min(args.limit, len(files)))
    with tempfile.TemporaryDirectory() as scratch:
        copies = {}
        for index, file in enumerate(files):
            copy = Path(scratch) / f"f{index}.{args.ext}"
            shutil.copyfile(file, copy)
            copies[file] = copy
        subprocess.run([*args.formatter.split(), scratch], capture_output=True, check=False)
        definitions = changed_files = unmatched = 0
        differing: Counter[str] = Counter()
        axes_moved: Counter[str] = Counter()
        shown = 0
        for file, copy in copies.items():
            before, after = file.read_bytes(), copy.read_bytes()
            if before == after:
                continue
            changed_files += 1
            old = _tokens(parse_source(args.language, before))
            new = _tokens(parse_source(args.language, after))
            for key, old_streams in old.items():
                new_streams = new.get(key)
                if new_streams is None:
                    unmatched += 1
                    continue
                definitions += 1
                moved = [axis for axis in COMPARED if old_streams[axis] != new_streams[axis]]
                if moved:
                    differing["any"] += 1
                    axes_moved.update(moved)
                for axis in moved:
                    if shown < args.show:
                        shown += 1
                        difference = _first_difference(old_streams[axis], new_streams[axis])
                        print(f"{file}#{key[0]} [{axis}] {difference}")
    print(
        f"{args.language} / {args.formatter.split()[0]}: {len(files)} files, {changed_files}"
        f" changed by the formatter, {definitions} definitions compared in them,"
        f" {differing['any']} with a moved axis {dict(axes_moved)}, {unmatched} unmatched"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
