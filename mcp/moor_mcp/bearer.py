"""The HTTP transport's bearer token: kept in a file only its owner can read, and required on
every request.

The token lives in `.moor/mcp-http-token` (or the `--token-file` given), created 0600 with a
fresh random value the first time and reused after, so a client configured once keeps
working across restarts. A token file that group or others can read is refused, as ssh
refuses a readable key: the token is only as secret as its file.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from moor_engine.workspace import STATE_DIR
from moor_store.inside import open_inside_dir
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_NAME = "mcp-http-token"


class HttpRefusal(Exception):
    """The HTTP transport cannot start as asked; the message says why (exit status 2)."""


_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def default_token_path(root: Path) -> Path:
    return root / STATE_DIR / TOKEN_NAME


def load_or_create(root: Path, token_file: Path | None) -> tuple[str, Path]:
    """The token and the file it is in: read when the file exists, else generated into it."""
    with _folder(root, token_file) as (folder, name, shown):
        try:
            return _read(folder, name, shown), shown
        except FileNotFoundError:
            pass
        token = secrets.token_urlsafe(32)
        try:
            fd = os.open(name, _CREATE_FLAGS, 0o600, dir_fd=folder)
        except FileExistsError:  # another server created it in between: use that one
            return _read(folder, name, shown), shown
        except OSError as error:
            raise HttpRefusal(f"cannot create the token file {shown}: {error.strerror}") from error
        try:
            os.write(fd, (token + "\n").encode())
        finally:
            os.close(fd)
        return token, shown


@contextlib.contextmanager
def _folder(root: Path, token_file: Path | None) -> Iterator[tuple[int, str, Path]]:
    if token_file is None:
        with open_inside_dir(root, STATE_DIR) as folder:
            yield folder, TOKEN_NAME, Path(STATE_DIR) / TOKEN_NAME
        return
    parent = token_file.parent if str(token_file.parent) else Path(".")
    try:
        folder = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise HttpRefusal(f"cannot open the folder of {token_file}: {error.strerror}") from error
    try:
        yield folder, token_file.name, token_file
    finally:
        os.close(folder)


def _read(folder: int, name: str, shown: Path) -> str:
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise HttpRefusal(f"cannot read the token file {shown}: {error.strerror}") from error
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise HttpRefusal(f"the token file {shown} is not a regular file")
        if info.st_mode & 0o077:
            raise HttpRefusal(
                f"the token file {shown} can be read by others "
                f"(mode {stat.S_IMODE(info.st_mode):o}): `chmod 600 {shown}` or delete it"
            )
        token = os.read(fd, 4096).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)
    if len(token) < 16:
        raise HttpRefusal(f"the token in {shown} is shorter than 16 characters")
    return token


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
