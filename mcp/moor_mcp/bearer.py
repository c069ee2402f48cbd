"""The HTTP transport's bearer token: kept where the repository cannot put it, in a file only
its owner can read, and required on every request.

A token file in the workspace could have come with the clone, and a token the repository
supplies is one its author knows. So the token lives in the user's state folder
(`$XDG_STATE_HOME`, else `~/.local/state`) under `moor/mcp-http/`, one file per workspace
named by a hash of the workspace's real path: created 0600 with a fresh random value the
first time and reused after, so a client configured once keeps working across restarts.
`.moor/mcp-http-token` in the workspace is never read. `--token-file` names a file of the
user's own: one inside the workspace is refused (it could be the repository's), as is one
that is not a regular file (a FIFO would block the start), not the user's, or readable by
group or others (the token is only as secret as its file, and moor cannot know who read
it: the message says to make a new one, never to chmod it).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from moor_store.refusal import RefusalError
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

STATE_FOLDER = ("moor", "mcp-http")
LEGACY_TOKEN = ".moor/mcp-http-token"  # where the token was kept before; never read now


class HttpRefusal(RefusalError):
    """The HTTP transport cannot start as asked; the message says why (exit status 2)."""

    code = "http_refused"


# O_NONBLOCK: opening a FIFO must not wait for a writer; the fstat then refuses it.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def state_home() -> Path:
    chosen = os.environ.get("XDG_STATE_HOME", "")
    if os.path.isabs(chosen):
        return Path(chosen)
    try:
        return Path.home() / ".local" / "state"
    except RuntimeError as error:
        raise HttpRefusal(
            "no home folder to keep the token in: set XDG_STATE_HOME or pass --token-file"
        ) from error


def default_token_path(root: Path) -> Path:
    """Where the token of the workspace at `root` is kept: outside it, per user."""
    key = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:24]
    return state_home().joinpath(*STATE_FOLDER, f"token-{key}")


def load_or_create(root: Path, token_file: Path | None) -> tuple[str, Path]:
    """The token and the file it is in: read when the file exists, else generated into it."""
    path = default_token_path(root) if token_file is None else token_file.absolute()
    if _inside(path, root):
        raise HttpRefusal(
            f"the token file {path} is inside this workspace, where the repository could have "
            "put it; "
            + (
                "keep it outside (or leave out --token-file: moor keeps one in your state folder)"
                if token_file is not None
                else "set XDG_STATE_HOME to a folder outside it, or pass --token-file"
            )
        )
    made_by_moor = token_file is None
    with _folder(path, private=made_by_moor) as folder:
        try:
            return _read(folder, path, made_by_moor), path
        except FileNotFoundError:
            pass
        token = secrets.token_urlsafe(32)
        try:
            fd = os.open(path.name, _CREATE_FLAGS, 0o600, dir_fd=folder)
        except FileExistsError:  # another server created it in between: use that one
            return _read(folder, path, made_by_moor), path
        except OSError as error:
            raise HttpRefusal(f"cannot create the token file {path}: {error.strerror}") from error
        try:
            os.write(fd, (token + "\n").encode())
        finally:
            os.close(fd)
        return token, path


def _inside(path: Path, root: Path) -> bool:
    """Whether `path` is in the workspace, as written or once its links are followed."""

    def under(candidate: str, base: str) -> bool:
        return os.path.commonpath([candidate, base]) == base

    return under(os.path.realpath(path), os.path.realpath(root)) or under(
        os.path.abspath(path), os.path.abspath(root)
    )


@contextlib.contextmanager
def _folder(path: Path, *, private: bool) -> Iterator[int]:
    """The token file's folder, open; moor's own is made 0700 and must be the user's alone."""
    try:
        if private:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise HttpRefusal(
            f"cannot open the token file's folder {path.parent}: {error.strerror}"
        ) from error
    try:
        info = os.fstat(folder)
        if private and (info.st_uid != os.getuid() or info.st_mode & 0o022):
            raise HttpRefusal(
                f"the token's folder {path.parent} is not yours alone (owner uid "
                f"{info.st_uid}, mode {stat.S_IMODE(info.st_mode):o}): another user could "
                "have put a token there"
            )
        yield folder
    finally:
        os.close(folder)


def _read(folder: int, path: Path, made_by_moor: bool) -> str:
    try:
        fd = os.open(path.name, _READ_FLAGS, dir_fd=folder)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise HttpRefusal(f"cannot read the token file {path}: {error.strerror}") from error
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise HttpRefusal(f"the token file {path} is not a regular file ({_kind(info)})")
        if info.st_uid != os.getuid():
            raise HttpRefusal(
                f"the token file {path} belongs to another user (uid {info.st_uid}), who knows "
                "the token"
            )
        if info.st_mode & 0o077:
            raise HttpRefusal(
                f"the token file {path} can be read by others (mode "
                f"{stat.S_IMODE(info.st_mode):o}), so the token may be known: "
                + (
                    "delete it and moor makes a new one"
                    if made_by_moor
                    else "make a new token in a file only you can read, or leave out "
                    "--token-file and moor keeps one for you"
                )
            )
        token = os.read(fd, 4096).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)
    if len(token) < 16:
        raise HttpRefusal(f"the token in {path} is shorter than 16 characters")
    return token


def _kind(info: os.stat_result) -> str:
    kinds = {
        stat.S_IFIFO: "a FIFO",
        stat.S_IFSOCK: "a socket",
        stat.S_IFCHR: "a character device",
        stat.S_IFBLK: "a block device",
        stat.S_IFDIR: "a folder",
    }
    return kinds.get(stat.S_IFMT(info.st_mode), "not a file")


class RequireBearer:
    """ASGI middleware: an HTTP request without `Authorization: Bearer <token>` is a 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorised(Headers(scope=scope)):
            refused = JSONResponse(
                {"error": "invalid_token", "error_description": "a bearer token is required"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="moor"'},
            )
            await refused(scope, receive, send)
            return
        await self._app(scope, receive, send)

    def _authorised(self, headers: Headers) -> bool:
        scheme, _, value = headers.get("authorization", "").partition(" ")
        # compare_digest: the time taken must not tell how much of a guess was right.
        return scheme.lower() == "bearer" and hmac.compare_digest(
            value.strip().encode(), self._token
        )
