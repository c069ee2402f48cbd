"""Start-up: `moor --version` is answered before the command line and the engine are
imported, and reads its version without `importlib.metadata` (issue 22.6). Counted as the
modules a real process imports (`python -X importtime`), not timed: robust to a busy machine."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from moor_engine.workspace.distribution import DISTRIBUTION

# Of the engine, `moor --version` may import what reads the version, and its packages.
_VERSION_MODULES = {"moor_engine", "moor_engine.workspace", "moor_engine.workspace.distribution"}
# Too slow to import for a version (each ~10-30 ms): the command line's, the store's, metadata.
_HEAVY = {"argparse", "sqlite3", "importlib.metadata", "yaml", "moor.main"}


def _imported(tmp_path: Path, *args: str) -> tuple[str, set[str]]:
    """What `python -m moor ARGS` prints, and every module it imported."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOOR_")}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "moor", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    modules = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return done.stdout, modules


def test_moor_version_imports_no_engine_module_beyond_the_distributions(tmp_path: Path) -> None:
    expected = f"moor {metadata.version(DISTRIBUTION)}\n"
    out, modules = _imported(tmp_path, "--version")
    assert out == expected
    engine = {m for m in modules if m.startswith(("moor_", "moor."))} - {"moor.launch"}
    assert engine <= _VERSION_MODULES, sorted(engine - _VERSION_MODULES)
    assert not modules & _HEAVY, sorted(modules & _HEAVY)
    # The control: the same answer through the full command line imports all of it.
    out, modules = _imported(tmp_path, "-C", ".", "--version")
    assert out == expected
    assert {"moor_engine.session", "moor.main", "argparse"} <= modules
