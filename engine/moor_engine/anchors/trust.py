"""Whether this workspace's declared commands may run: trust comes from outside the
repository only (memory: command-probes-run-only-when-trusted-from-outside).

Three sources, any one enough: the command line (`--trust`), the environment
(`MOOR_TRUST=1`), or the user's list of trusted roots (`moor trust` / `moor untrust`),
kept in the user's state folder (`$XDG_STATE_HOME`, else `~/.local/state`) as
`moor/trusted-roots`, one real path a line, like direnv's allow list. Nothing a
repository holds — `moor.toml`, a file under `.moor/`, its settings — is read for it, and
a list that lies inside the workspace is not believed (the repository could have put it
there by an `XDG_STATE_HOME` pointing into it).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from moor_store.inside import read_inside, stat_many_inside

from moor_engine.usage import UsageError

ENVIRONMENT_VARIABLE: Final = "MOOR_TRUST"
# Files by which a repository configures the environment of the tools a person runs in it
# (agents' and editors' MCP servers and settings, direnv, dotenv, dev containers, mise): one
# that names MOOR_TRUST makes the variable not believed (`repository_environment`).
REPOSITORY_ENVIRONMENTS: Final = (
    ".mcp.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".cursor/mcp.json",
    ".gemini/settings.json",
    ".gemini/.env",
    ".vscode/mcp.json",
    ".vscode/settings.json",
    ".envrc",
    ".env",
    ".devcontainer/devcontainer.json",
    ".devcontainer.json",
    "mise.toml",
    ".mise.toml",
)
LIST_PATH: Final = ("moor", "trusted-roots")
_MAX_LIST_BYTES: Final = 1024 * 1024


@dataclass(frozen=True)
class Trust:
    trusted: bool
    how: str  # which source trusted it, or why not


def state_home(environ: Mapping[str, str]) -> Path | None:
    chosen = environ.get("XDG_STATE_HOME", "")
    if os.path.isabs(chosen):
        return Path(chosen)
    home = environ.get("HOME", "")
    return Path(home) / ".local" / "state" if os.path.isabs(home) else None


def list_file(environ: Mapping[str, str]) -> Path | None:
    home = state_home(environ)
    return None if home is None else home.joinpath(*LIST_PATH)


def decide(root: Path, flag: bool | None, environ: Mapping[str, str] | None = None) -> Trust:
    """Whether the workspace at `root` is trusted to run its declared commands. `flag`:
    the person's own word for this run — True (`--trust`, or the editor's workspace
    trust), False (the editor does not trust it: nothing else can), None (not said)."""
    environ = os.environ if environ is None else environ
    if flag:
        return Trust(True, "--trust")
    if flag is False:
        return Trust(False, "the editor does not trust this workspace (its workspace trust)")
    configured = None
    if environ.get(ENVIRONMENT_VARIABLE) == "1":
        configured = repository_environment(root)
        if configured is None:
            return Trust(True, f"{ENVIRONMENT_VARIABLE}=1")
    real = os.path.realpath(root)
    path = list_file(environ)
    if path is not None and not _inside(path, real) and real in _read_list(path):
        return Trust(True, f"`moor trust` ({path})")
    if configured is not None:
        return Trust(
            False,
            f"{ENVIRONMENT_VARIABLE}=1 is set, but this repository's {configured}: an "
            "environment the repository configures cannot trust it, so the variable "
            "is not believed here; run with --trust, or `moor trust` this workspace",
        )
    return Trust(
        False,
        "this workspace is not trusted to run its declared commands: run with --trust or "
        f"{ENVIRONMENT_VARIABLE}=1, or `moor trust` it",
    )


def repository_environment(root: Path) -> str | None:
    """Which of the repository's own environment configurations (`REPOSITORY_ENVIRONMENTS`:
    a project's MCP or agent settings, a direnv `.envrc`, a dotenv file, ...) names
    MOOR_TRUST, or exists and cannot be read, said as a phrase; None when none does. Such a
    file can set the variable for the process moor runs in once a person approves it for
    something else."""
    for rel, info in stat_many_inside(root, REPOSITORY_ENVIRONMENTS).items():
        if isinstance(info, (FileNotFoundError, NotADirectoryError)):
            continue  # none (or a file where its path needs a folder)
        if isinstance(info, os.stat_result) and stat.S_ISDIR(info.st_mode):
            continue  # a folder is no configuration (a virtualenv is often named `.env`)
        try:
            data = read_inside(root, rel, limit=_MAX_LIST_BYTES)
        except FileNotFoundError:
            continue
        except OSError as error:  # a link out, a FIFO, too large: cannot tell
            code = getattr(error, "code", None) or error.strerror or "unreadable"
            return f"{rel} cannot be read ({code}), so whether it sets it cannot be told"
        if ENVIRONMENT_VARIABLE.encode() in data:
            return f"{rel} names it"
    return None


def trust_root(root: Path, environ: Mapping[str, str] | None = None) -> tuple[Path, bool]:
    """Add the workspace to the user's list; the list's path and whether it was added."""
    path, roots = _writable_list(root, environ)
    real = os.path.realpath(root)
    if real in roots:
        return path, False
    _write_list(path, [*roots, real])
    return path, True


def untrust_root(root: Path, environ: Mapping[str, str] | None = None) -> tuple[Path, bool]:
    """Remove the workspace from the user's list; the list's path and whether it was there."""
    path, roots = _writable_list(root, environ)
    real = os.path.realpath(root)
    if real not in roots:
        return path, False
    _write_list(path, [r for r in roots if r != real])
    return path, True


def _writable_list(root: Path, environ: Mapping[str, str] | None) -> tuple[Path, list[str]]:
    environ = os.environ if environ is None else environ
    path = list_file(environ)
    if path is None:
        raise UsageError(
            "no folder to keep the list of trusted workspaces in: set HOME or XDG_STATE_HOME",
            code="no_state_folder",
        )
    if _inside(path, os.path.realpath(root)):
        raise UsageError(
            f"the list of trusted workspaces {path} would be inside this workspace, where the "
            "repository could write it: set XDG_STATE_HOME to a folder outside it",
            code="trust_list_inside",
        )
    return path, _read_list(path)


def _inside(path: Path, real_root: str) -> bool:
    for candidate in (os.path.abspath(path), os.path.realpath(path)):
        if candidate == real_root or candidate.startswith(real_root.rstrip("/") + "/"):
            return True
    return False


def _read_list(path: Path) -> list[str]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []  # a FIFO or a device is no list
        data = os.read(fd, _MAX_LIST_BYTES)
    except OSError:
        return []
    finally:
        os.close(fd)
    text = data.decode("utf-8", "replace")
    return [line for line in text.splitlines() if os.path.isabs(line)]


def _write_list(path: Path, roots: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = "".join(f"{root}\n" for root in roots).encode()
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
