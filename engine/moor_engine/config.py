"""Workspace configuration: `moor.toml`, or `[tool.moor]` in `pyproject.toml`.

Every key is validated with a message naming the file and the key, so a typo never
silently falls back to a default.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

CONFIG_FILE = "moor.toml"
DEFAULT_ROOTS: tuple[str, ...] = ("memories",)
DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024
# Never scanned for memories or for moved code: tool state and dependency trees. A folder
# named `venv` may be real code (the stdlib has one): virtualenvs are recognised by their
# pyvenv.cfg instead (workspace.py).
BUILTIN_IGNORES: tuple[str, ...] = (
    ".git",
    ".moor",
    ".venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
)


class ConfigError(Exception):
    """The configuration cannot be used as written."""


@dataclass(frozen=True)
class Config:
    memory_roots: tuple[str, ...] = DEFAULT_ROOTS
    ignore: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    source: str | None = None  # which file the settings came from
    roots_configured: bool = False  # memory_roots written out, not the default
    extra: dict[str, object] = field(default_factory=dict)


_KNOWN_KEYS = {"memory_roots", "ignore", "max_file_size", "anchors", "rules"}


def load_config(root: Path) -> Config:
    path = root / CONFIG_FILE
    if path.is_file():
        table = _read_toml(path)
        return _from_table(table, CONFIG_FILE)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        tool = _read_toml(pyproject).get("tool", {})
        if isinstance(tool, dict) and isinstance(tool.get("moor"), dict):
            return _from_table(tool["moor"], "pyproject.toml [tool.moor]")
    return Config()


def _read_toml(path: Path) -> dict[str, object]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path.name}: not valid TOML: {error}") from error
    except OSError as error:
        raise ConfigError(f"{path.name}: cannot be read: {error.strerror}") from error


def _from_table(table: dict[str, object], source: str) -> Config:
    unknown = sorted(set(table) - _KNOWN_KEYS)
    if unknown:
        known = ", ".join(sorted(_KNOWN_KEYS))
        raise ConfigError(f"{source}: unknown key(s) {', '.join(unknown)}; known: {known}")
    roots = _string_list(table.get("memory_roots", list(DEFAULT_ROOTS)), source, "memory_roots")
    for root in roots:
        if root.startswith("/") or ".." in root.split("/") or not root.strip():
            raise ConfigError(f"{source}: memory_roots entry {root!r} must be a workspace folder")
    ignore = _string_list(table.get("ignore", []), source, "ignore")
    size = table.get("max_file_size", DEFAULT_MAX_FILE_SIZE)
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ConfigError(f"{source}: max_file_size must be a positive number of bytes")
    return Config(
        memory_roots=tuple(r.strip("/") for r in roots),
        ignore=tuple(ignore),
        max_file_size=size,
        source=source,
        roots_configured="memory_roots" in table,
        extra={k: v for k, v in table.items() if k in {"anchors", "rules"}},
    )


def _string_list(value: object, source: str, key: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise ConfigError(f"{source}: {key} must be a string or a list of strings")


DEFAULT_CONFIG_TEXT = """\
# moor configuration. See the README for every key.
# Folders holding memories (Markdown files with an `about:` frontmatter list).
memory_roots = ["memories"]
# Glob patterns (workspace-relative) never searched for memories or moved code.
ignore = []
# Files larger than this are refused (too_large), never parsed.
max_file_size = 2097152
"""
