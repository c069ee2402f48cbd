"""moor's own installed source: the one kind of file moor reads outside a workspace.

Caches are keyed by a digest of the code that computed them (the parser, the extractors,
the relocation logic), so changing that code invalidates them without a version to bump.
Those bytes are moor's, not the repository's: every other read goes through `inside.py`,
and a test (tests/store/test_one_reading_api.py) forbids raw reads anywhere else. This
reads only Python modules of moor's own packages, so it cannot be pointed at anything else.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

__all__ = ["NotOwnSource", "read_own_asset", "read_own_sources"]

OWN_PACKAGES: Final = frozenset(
    {"moor", "moor_engine", "moor_extractors", "moor_store", "moor_lsp", "moor_mcp"}
)


class NotOwnSource(ValueError):
    """A path that is not a Python module of one of moor's own packages."""


def read_own_sources(files: Iterable[str | Path | None]) -> bytes:
    """The bytes of each module file in `files`, concatenated in order (None skipped)."""
    chunks = []
    for file in files:
        if file is None:
            continue
        path = Path(file)
        if path.suffix != ".py" or not _in_own_package(path):
            raise NotOwnSource(f"{file} is not a module of moor's own packages")
        chunks.append(path.read_bytes())
    return b"".join(chunks)


def read_own_asset(package: str, name: str) -> str:
    """The text of a data file shipped inside one of moor's own packages (the atlas page's
    CSS, script and body): a plain file name in that package, never a path."""
    from importlib.resources import files

    if package not in OWN_PACKAGES or not name or Path(name).name != name or name.endswith(".py"):
        raise NotOwnSource(f"{package}/{name} is not a data file of moor's own packages")
    return files(package).joinpath(name).read_text(encoding="utf-8")


def _in_own_package(path: Path) -> bool:
    """Whether `path` is in one of moor's packages or in a sub-package of one (a folder
    with its `__init__.py`, as `moor_engine/grounding/` is)."""
    folder = path.parent
    for _ in range(3):
        if folder.name in OWN_PACKAGES:
            return True
        if not (folder / "__init__.py").is_file():
            return False
        folder = folder.parent
    return False
