"""Workspace configuration: `moor.toml`, or `[tool.moor]` in `pyproject.toml`.

Every key is validated with a message naming the file, the line and the key, so a typo
never silently falls back to a default. Whatever the bytes of the file, reading it raises
`ConfigError` and nothing else (bench/fuzz_inputs.py holds it to that).
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from moor_store.inside import NotInside, read_inside
from moor_store.refusal import RefusalError

from moor_engine.anchors.declarations import Declaration, DeclarationError, parse_declarations
from moor_engine.workspace.gitignore import ignore_pattern_compiles
from moor_engine.workspace.roots import PYPROJECT

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


class ConfigError(RefusalError):
    """The configuration cannot be used as written (the message names file, line, problem);
    `path` is the file (workspace-relative) and `line` its 1-based line, when known."""

    code = "config_invalid"  # stable, for a program reading the refusal

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line


@dataclass(frozen=True)
class Config:
    """A workspace's settings, read from moor.toml (or the defaults)."""

    memory_roots: tuple[str, ...] = DEFAULT_ROOTS
    ignore: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    source: str | None = None  # which file the settings came from
    roots_configured: bool = False  # memory_roots written out, not the default
    extra: dict[str, object] = field(default_factory=dict)
    sources: tuple[SourceConfig, ...] = ()  # `[[sources]]`: notes moor reads, never edits
    anchors: dict[str, Declaration] = field(default_factory=dict)  # `[anchors.NAME]`
    doctor: DoctorConfig = field(default_factory=lambda: DoctorConfig())


@dataclass(frozen=True)
class DoctorConfig:
    """`[doctor]`: when `moor doctor` says the corpus needs a person."""

    ungrounded_share: float = 0.25  # more memories without `about:` than this share: a finding
    unreaffirmed_months: int = 6  # unreaffirmed this long while its code changed: a finding


@dataclass(frozen=True)
class SourceConfig:
    """Another tool's notes folder moor reads memories from (`[[sources]]`)."""

    kind: str  # serena | claude
    path: str  # workspace-relative folder of its notes


_KNOWN_KEYS = {
    "memory_roots",
    "ignore",
    "max_file_size",
    "anchors",
    "rules",
    "sources",
    "doctor",
}
MAX_CONFIG_BYTES = 1024 * 1024  # a configuration file is a few lines; more is not one
MAX_FILE_SIZE_LIMIT = 1 << 30  # files are read whole and parsed: 1 GiB is already absurd
_POSITION = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def load_config(root: Path) -> Config:
    for name in (CONFIG_FILE, PYPROJECT):
        if os.path.lexists(root / name):
            return parse_config(_read(root, name), name)
    return Config()


def _read(root: Path, name: str) -> bytes:
    """The file's bytes, read inside the workspace only (a link leading outside is refused
    before anything of it is read: its key names would leak in our messages)."""
    try:
        return read_inside(root, name, limit=MAX_CONFIG_BYTES)
    except NotInside as error:
        if error.code == "too_large":
            raise ConfigError(
                f"{name}: larger than {MAX_CONFIG_BYTES:,} bytes; not a configuration", path=name
            ) from error
        raise ConfigError(f"{name}: not read: {error}", path=name) from error
    except OSError as error:
        raise ConfigError(f"{name}: cannot be read: {error.strerror}", path=name) from error


def parse_config(data: bytes, name: str) -> Config:
    """The settings in the bytes of `moor.toml`, or of `pyproject.toml` (its `[tool.moor]`).

    Raises only `ConfigError`, whose message starts with the file and, when known, the line
    (`moor.toml:3:`)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ConfigError(
            f"{name}:{line}: not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})",
            path=name,
            line=line,
        ) from error
    try:
        table: dict[str, object] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        found = _POSITION.search(message)
        at_line: int | None = None
        if found is None:
            where = name
        elif found.group(1) is None:
            at_line = text.count(chr(10)) + 1  # at the end of the document
            where = f"{name}:{at_line}"
        else:
            at_line = int(found.group(1))
            where = f"{name}:{found.group(1)}:{found.group(2)}"
        problem = message[: found.start()] if found else message
        raise ConfigError(f"{where}: not valid TOML: {problem}", path=name, line=at_line) from error
    if name != PYPROJECT:
        return _from_table(table, _Source(name, text, name))
    tool = table.get("tool")
    if not isinstance(tool, dict) or "moor" not in tool:
        return Config()
    moor = tool["moor"]
    if not isinstance(moor, dict):
        raise _Source(PYPROJECT, text, PYPROJECT).at("moor", "tool.moor must be a table")
    return _from_table(moor, _Source(f"{PYPROJECT} [tool.moor]", text, PYPROJECT))


@dataclass(frozen=True)
class _Source:
    """Where settings came from, to say which line a problem is on."""

    name: str  # as a message names it: `pyproject.toml [tool.moor]`
    text: str
    file: str  # the file itself

    def at(self, key: str, problem: str) -> ConfigError:
        """The problem with `key`, at the line that sets it (when one does)."""
        assignment = re.compile(rf"^[ \t]*(?:{re.escape(key)}|\"{re.escape(key)}\")[ \t]*=", re.M)
        found = assignment.search(self.text)
        if found is None:
            return ConfigError(f"{self.name}: {problem}", path=self.file)
        line = self.text.count("\n", 0, found.start()) + 1
        return ConfigError(f"{self.name}:{line}: {problem}", path=self.file, line=line)


def _from_table(table: dict[str, object], source: _Source) -> Config:
    unknown = sorted(set(table) - _KNOWN_KEYS)
    if unknown:
        known = ", ".join(sorted(_KNOWN_KEYS))
        raise source.at(unknown[0], f"unknown key(s) {', '.join(unknown)}; known: {known}")
    roots = _string_list(table.get("memory_roots", list(DEFAULT_ROOTS)), source, "memory_roots")
    if not roots:
        raise source.at("memory_roots", "memory_roots must name at least one folder")
    for root in roots:
        if (
            root.startswith("/")
            or ".." in root.split("/")
            or not root.strip()
            or _CONTROL.search(root)
        ):
            raise source.at(
                "memory_roots", f"memory_roots entry {root!r} must be a workspace folder"
            )
    ignore = _string_list(table.get("ignore", []), source, "ignore")
    for pattern in ignore:
        if "\n" in pattern or "\r" in pattern or not ignore_pattern_compiles(pattern):
            raise source.at("ignore", f"ignore pattern {pattern!r} cannot be used")
    size = table.get("max_file_size", DEFAULT_MAX_FILE_SIZE)
    if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= MAX_FILE_SIZE_LIMIT:
        raise source.at(
            "max_file_size",
            f"max_file_size must be a number of bytes from 1 to {MAX_FILE_SIZE_LIMIT}",
        )
    try:
        anchors = parse_declarations(table.get("anchors"))
    except DeclarationError as error:
        raise source.at(error.key, str(error)) from error
    return Config(
        memory_roots=tuple(r.strip("/") for r in roots),
        ignore=tuple(ignore),
        max_file_size=size,
        source=source.name,
        roots_configured="memory_roots" in table,
        extra={k: v for k, v in table.items() if k in {"anchors", "rules"}},
        sources=_sources(table.get("sources", []), source),
        anchors=anchors,
        doctor=_doctor(table.get("doctor", {}), source),
    )


def _doctor(value: object, source: _Source) -> DoctorConfig:
    if not isinstance(value, dict):
        raise source.at("doctor", "doctor must be a table: [doctor]")
    unknown = sorted(set(value) - {"ungrounded_share", "unreaffirmed_months"})
    if unknown:
        raise source.at(
            unknown[0],
            f"[doctor] unknown key(s) {', '.join(unknown)}; known: "
            "ungrounded_share, unreaffirmed_months",
        )
    default = DoctorConfig()
    share = value.get("ungrounded_share", default.ungrounded_share)
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
        raise source.at(
            "ungrounded_share",
            f"[doctor] ungrounded_share must be a number from 0 to 1 (a share of the "
            f"memories, 0.25 for a quarter), not {share!r}",
        )
    months = value.get("unreaffirmed_months", default.unreaffirmed_months)
    if isinstance(months, bool) or not isinstance(months, int) or not 1 <= months <= 1200:
        raise source.at(
            "unreaffirmed_months",
            f"[doctor] unreaffirmed_months must be a whole number of months from 1 to 1200, "
            f"not {months!r}",
        )
    return DoctorConfig(float(share), months)


def _string_list(value: object, source: _Source, key: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise source.at(key, f"{key} must be a string or a list of strings")


# Where each kind keeps its notes when `path` is not given; Claude Code's auto-memory lives
# outside the workspace (under the home folder), so it is read only from a `path` inside.
SOURCE_KINDS: dict[str, str | None] = {"serena": ".serena/memories", "claude": None}


def _sources(value: object, source: _Source) -> tuple[SourceConfig, ...]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise source.at("sources", "sources must be [[sources]] tables")
    found: list[SourceConfig] = []
    for item in value:
        kind = item.get("kind")
        if kind not in SOURCE_KINDS:
            kinds = ", ".join(sorted(SOURCE_KINDS))
            raise source.at("kind", f"[[sources]] kind must be one of: {kinds}")
        unknown = sorted(set(item) - {"kind", "path"})
        if unknown:
            raise source.at(unknown[0], f"[[sources]] unknown key(s) {', '.join(unknown)}")
        path = item.get("path", SOURCE_KINDS[kind])
        if path is None:
            raise source.at(
                "kind", f"[[sources]] kind = {kind!r} needs a path inside the workspace"
            )
        if (
            not isinstance(path, str)
            or path.startswith("/")
            or ".." in path.split("/")
            or not path.strip("/ ")
            or _CONTROL.search(path)
        ):
            raise source.at("path", f"[[sources]] path {path!r} must be a workspace folder")
        found.append(SourceConfig(str(kind), path.strip("/")))
    return tuple(found)


DEFAULT_CONFIG_TEXT = """\
# moor configuration. moor's docs/files.md describes every key.
# Folders holding memories (Markdown files with an `about:` frontmatter list).
memory_roots = ["memories"]
# Glob patterns (workspace-relative) never searched for memories or moved code.
ignore = []
# Files larger than this are refused (too_large), never parsed.
max_file_size = 2097152
"""
