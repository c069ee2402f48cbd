"""How a write's result (`moor_engine.written.Written`) is shown: one JSON object with
`--format json`, else what was done on stdout and each refusal on stderr; exit 1 when
anything was refused, for both."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from moor_engine.written import Written

EXIT_OK, EXIT_LOOK = 0, 1


def render_written(written: Written, output: str) -> int:
    if output == "json":
        print(json.dumps(written.as_json(), ensure_ascii=False))
        return EXIT_OK if written.ok else EXIT_LOOK
    for line in written.done:
        print(line)
    if written.content_hash:
        print(f"content hash {written.content_hash}")
    live = [known for known in written.known_here if not known.retired_because]
    retired = [known for known in written.known_here if known.retired_because]
    if live:
        print("already known here (live memories bound to the same code):")
        for known in live:
            print(f"  {known.path}: {known.state}  {known.title}  ({', '.join(known.anchors)})")
    if retired:
        print("retired here (bound to the same code, no longer current):")
        for known in retired:
            print(f"  {known.path}: {known.state}  {known.title}  ({', '.join(known.anchors)})")
            print(f"    {known.retired_because}")
    for refusal in written.refused:
        print(f"moor: {refusal.message}", file=sys.stderr)
        if refusal.instead:
            print(f"moor: instead: {refusal.instead}", file=sys.stderr)
    return EXIT_OK if written.ok else EXIT_LOOK
