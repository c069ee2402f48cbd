"""`moor init`: make a folder a moor workspace. Idempotent: never overwrites."""

from __future__ import annotations

from pathlib import Path

from moor_engine.config import CONFIG_FILE, DEFAULT_CONFIG_TEXT
from moor_engine.workspace import STATE_DIR

_IGNORE_LINE = f"{STATE_DIR}/"


def init_workspace(root: Path) -> list[str]:
    done: list[str] = []
    config = root / CONFIG_FILE
    if config.exists():
        done.append(f"{CONFIG_FILE} already exists: left as it is")
    else:
        config.write_text(DEFAULT_CONFIG_TEXT, encoding="utf-8")
        done.append(f"created {CONFIG_FILE}")
    memories = root / "memories"
    if memories.is_dir():
        done.append("memories/ already exists")
    else:
        memories.mkdir(parents=True)
        done.append("created memories/")
    gitignore = root / ".gitignore"
    existing = gitignore.read_text(encoding="utf-8") if gitignore.exists() else ""
    if any(
        line.strip() in (_IGNORE_LINE, STATE_DIR, f"/{_IGNORE_LINE}")
        for line in existing.splitlines()
    ):
        done.append(".moor/ is already ignored by .gitignore")
    else:
        prefix = "" if not existing or existing.endswith("\n") else "\n"
        gitignore.write_text(
            existing + prefix + "# moor's local journal and caches\n" + _IGNORE_LINE + "\n",
            encoding="utf-8",
        )
        done.append("added .moor/ to .gitignore")
    done.append("next: write a memory in memories/ with `about:` references, then `moor bind`")
    return done
