"""A worker of `definition_index`: the rows of the files it is given, as JSON.

Reads one job from stdin (`root`, `max_file_size`, `rels`, `vouched`), writes
{path: [key, definitions]} to stdout. A separate interpreter, started by path of module,
so nothing of the caller's process (its threads, its `__main__`) comes along.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from moor_engine.grounding.definition_index import rows_of


def main() -> int:
    job = json.loads(sys.stdin.buffer.read())
    rows = rows_of(
        Path(job["root"]), int(job["max_file_size"]), list(job["rels"]), dict(job["vouched"])
    )
    sys.stdout.write(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
