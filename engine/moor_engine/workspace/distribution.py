"""The distribution moor is installed as, and its version.

The package's version is defined once, as `version` in pyproject.toml's `[project]`; at run
time it is read from the installed distribution's metadata, so the command, the language
server and SARIF output can never print another number. The distribution is named
`moor-memory` (the name `moor` belongs to an unrelated project); the command and the import
packages are still `moor`. `tests/packaging/test_versions.py` ties this name to
pyproject.toml and the VS Code extension's version to the package's.
"""

from __future__ import annotations

from typing import Final

DISTRIBUTION: Final = "moor-memory"
UNKNOWN_VERSION: Final = "0+unknown"


def version() -> str:
    """The installed distribution's version, or `0+unknown` when moor runs from a source
    tree that was never installed."""
    from importlib import metadata  # costs ~45 ms: only when a version is asked for

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN_VERSION
