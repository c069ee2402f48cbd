"""The distribution moor is installed as, and its version.

The package's version is defined once, as `version` in pyproject.toml's `[project]`; at run
time it is read from the installed distribution's metadata, so the command, the language
server and SARIF output can never print another number. The distribution is named
`moor-memory` (the name `moor` belongs to an unrelated project); the command and the import
packages are still `moor`. `tests/packaging/test_versions.py` ties this name to
pyproject.toml and the VS Code extension's version to the package's.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Final

DISTRIBUTION: Final = "moor-memory"
UNKNOWN_VERSION: Final = "0+unknown"
# The distribution's metadata folder as installers name it (PEP 427: `-` becomes `_`).
_DIST_INFO_PREFIX: Final = DISTRIBUTION.replace("-", "_") + "-"
_NORMALISED: Final = DISTRIBUTION.replace("-", "_") + "_"  # any spelling of a file of it


def version() -> str:
    """The installed distribution's version, or `0+unknown` when moor runs from a source
    tree that was never installed."""
    found = _dist_info_version()
    if found is not None:
        return found
    from importlib import metadata  # costs ~30 ms, as much as the interpreter's start-up

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN_VERSION


def _dist_info_version() -> str | None:
    """The version in the METADATA of the first `moor_memory-*.dist-info` on `sys.path`, as
    `importlib.metadata` finds it, without importing it (that import was most of `moor
    --version`). None when the first folder holding anything of the distribution holds other
    than one such folder (an egg, two installs side by side): `importlib.metadata` decides."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        ours = [n for n in names if n.lower().replace("-", "_").startswith(_NORMALISED)]
        if not ours:
            continue
        if len(ours) != 1 or not ours[0].startswith(_DIST_INFO_PREFIX):
            return None
        if not ours[0].endswith(".dist-info"):
            return None
        try:
            # Where Python imports moor from, not the workspace; still never a FIFO's wait
            # or a link's target: the same refusals `inside.py` makes for workspace files.
            fd = os.open(
                os.path.join(entry or ".", ours[0], "METADATA"),
                os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
            )
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                return None
            with os.fdopen(fd, encoding="utf-8") as file:
                for line in file:
                    if line.startswith("Version:"):
                        return line.removeprefix("Version:").strip() or None
                    if not line.strip():
                        return None  # the headers ended without one
        except OSError:
            return None
        return None
    return None
