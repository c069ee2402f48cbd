"""`moor init`: make a folder a moor workspace. Idempotent: never overwrites.

Every file is written inside the workspace only (moor_store.inside): a planted `moor.toml`
or `.gitignore` link leading outside is refused, never written through.
"""

from __future__ import annotations

import os
from pathlib import Path

from moor_store.inside import open_inside_dir, read_inside, write_inside

from moor_engine.workspace.config import CONFIG_FILE, DEFAULT_CONFIG_TEXT
from moor_engine.workspace.workspace import STATE_DIR

_IGNORE_LINE = f"{STATE_DIR}/"


def init_workspace(root: Path) -> list[str]:
    done: list[str] = []
    if os.path.lexists(root / CONFIG_FILE):
        done.append(f"{CONFIG_FILE} already exists: left as it is")
    else:
        write_inside(root, CONFIG_FILE, DEFAULT_CONFIG_TEXT.encode("utf-8"), exclusive=True)
        done.append(f"created {CONFIG_FILE}")
    if (root / "memories").is_dir():
        done.append("memories/ already exists")
    else:
        with open_inside_dir(root, "memories"):
            done.append("created memories/")
    try:
        existing = read_inside(root, ".gitignore").decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        existing = ""
    if any(
        line.strip() in (_IGNORE_LINE, STATE_DIR, f"/{_IGNORE_LINE}")
        for line in existing.splitlines()
    ):
        done.append(".moor/ is already ignored by .gitignore")
    else:
        prefix = "" if not existing or existing.endswith("\n") else "\n"
        text = existing + prefix + "# moor's local journal and caches\n" + _IGNORE_LINE + "\n"
        write_inside(root, ".gitignore", text.encode("utf-8", "surrogateescape"))
        done.append("added .moor/ to .gitignore")
    done.append("next: write a memory in memories/ with `about:` references, then `moor bind`")
    return done
