"""`moor mcp --http`: the same server over the SDK's streamable HTTP transport, for a client
that cannot start a process.

Loopback only: the socket is bound to 127.0.0.1 and any other host is refused before
anything listens, because the tools read and write the workspace. Every request needs the
bearer token (`bearer.py`) unless `--no-auth`, which says loudly what it gives away. The
SDK's DNS-rebinding check is given the exact port, so a Host or Origin header naming
anything but 127.0.0.1/localhost on this port is refused even with the token. The token
file's path is printed on stderr, never the token (and a note when the workspace holds the
old `.moor/mcp-http-token`, which is never read).
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import TextIO

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from moor_store.inside import exists_inside
from starlette.types import ASGIApp

from moor_mcp.bearer import LEGACY_TOKEN, HttpRefusal, RequireBearer, load_or_create

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 7341
PATH = "/mcp"

NO_AUTH_WARNING = (
    "WARNING: --no-auth: any program on this machine (any local user, any process, any "
    "browser page that reaches 127.0.0.1) can read and write this workspace's memories "
    "through this server. Use it only for a test client that cannot send a bearer token."
)

__all__ = ["DEFAULT_PORT", "LOOPBACK", "HttpRefusal", "serve"]


def serve(
    server: MCPServer,
    root: Path,
    *,
    host: str,
    port: int,
    token_file: Path | None,
    no_auth: bool,
    stderr: TextIO,
) -> None:
    """Listen on 127.0.0.1:`port` (0: any free port) until interrupted."""
    if host != LOOPBACK:
        raise HttpRefusal(
            f"refusing to listen on {host}: `moor mcp --http` binds to {LOOPBACK} only "
            "(the tools read and write this workspace)"
        )
    if not 0 <= port <= 65535:
        raise HttpRefusal(f"--port {port} is not a port (0 to 65535; 0 picks a free one)")
    listening = _listen(port)
    port = listening.getsockname()[1]
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=PATH, transport_security=_same_origin(port), host=LOOPBACK
    )
    if no_auth:
        print(NO_AUTH_WARNING, file=stderr)
    else:
        try:
            token, token_path = load_or_create(root, token_file)
        except BaseException:
            listening.close()
            raise
        app = RequireBearer(app, token)
        print(f"moor mcp: bearer token in {token_path}", file=stderr)
        if exists_inside(root, LEGACY_TOKEN):
            print(
                f"moor mcp: {LEGACY_TOKEN} is not read (a token in the workspace could be "
                "the repository's); a client configured with it needs the token above",
                file=stderr,
            )
    print(f"moor mcp: serving http://{LOOPBACK}:{port}{PATH}", file=stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[listening])


def _listen(port: int) -> socket.socket:
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((LOOPBACK, port))
        listening.listen(128)
    except OSError as error:
        listening.close()
        raise HttpRefusal(f"cannot listen on {LOOPBACK}:{port}: {error.strerror}") from error
    return listening


def _same_origin(port: int) -> TransportSecuritySettings:
    names = (f"{LOOPBACK}:{port}", f"localhost:{port}")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(names),
        allowed_origins=[f"http://{name}" for name in names],
    )
