"""Modules a hostile repository plants at its top level, named as what a Python process moor
starts imports first (moor's own packages, the standard library they import; not `runpy`,
which the interpreter has frozen in): each one, if imported, leaves a file named after
itself behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PLANTED = (
    "json",
    "socket",
    "typing",
    "moor",
    "moor_engine",
    "moor_store",
    "moor_extractors",
)
PACKAGES = ("moor", "moor_engine", "moor_store", "moor_extractors")


def plant(root: Path, markers: Path) -> None:
    """Plant every module of PLANTED in `root`, each writing `markers/NAME` when imported
    (and defining nothing: the name is left empty, as a hostile one would leave it)."""
    markers.mkdir(exist_ok=True)
    for name in PLANTED:
        path = root / name / "__init__.py" if name in PACKAGES else root / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"open({str(markers / name)!r}, 'w').close()\n", encoding="utf-8")


def own_modules(root: Path) -> None:
    """Modules a repository merely has, named as ones moor imports (the CPython tree has
    top-level modules of the standard library's names): harmless, but not moor's."""
    for name in ("json", "typing", "socket"):
        (root / f"{name}.py").write_text(f'"""This repository\'s own {name}."""\n\nVALUE = 1\n')


def ran(markers: Path) -> list[str]:
    """The planted modules that were imported."""
    return sorted(path.name for path in markers.iterdir()) if markers.exists() else []


def started_as_before(root: Path, markers: Path, *args: str) -> list[str]:
    """The control: `python -m ARGS` started in `root`, as moor started its children before,
    runs what is planted there; the files it left are removed again, and their names
    returned."""
    subprocess.run(
        [sys.executable, "-m", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        timeout=120,
    )
    found = ran(markers)
    for name in found:
        (markers / name).unlink()
    return found


def moor_command() -> list[str]:
    """The installed `moor` command (a console script puts its own folder on `sys.path`,
    never its working folder), as a user, an editor or Claude Code runs it."""
    return [str(Path(sys.executable).parent / "moor")]
