"""A benchmark case as a real workspace: one memory bound to one reference, the files as
they were when it was bound, then the change written as a checkout would write it.

Shared by `drift_quality.py` and `relocation.py`, which differ in how cases are made, not
in how a case becomes a workspace.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

MEMORY_PATH = "memories/case.md"
# Files as they were when the memory was bound: long before the change (no same-second mtime).
BOUND_MTIME_NS = 1_600_000_000 * 1_000_000_000


def write_workspace(
    root: Path, reference: str, title: str, before: Mapping[str, str], note: str
) -> None:
    root.mkdir(parents=True)
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    memory = root / MEMORY_PATH
    memory.parent.mkdir(parents=True)
    memory.write_text(
        f"---\nabout:\n  - {json.dumps(reference)}\n---\n# {title}\n\n{note}\n",
        encoding="utf-8",
    )
    for rel, text in before.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        os.utime(path, ns=(BOUND_MTIME_NS, BOUND_MTIME_NS))


def apply_change(root: Path, before: Mapping[str, str], after: Mapping[str, str | None]) -> None:
    """Write what changed, as a checkout would: untouched files keep their old mtime."""
    for rel, text in after.items():
        path = root / rel
        if text is None:
            path.unlink(missing_ok=True)
        elif before.get(rel) != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))
