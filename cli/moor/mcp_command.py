"""`moor mcp`: the MCP server on stdin/stdout, or with `--http` on 127.0.0.1 (moor_mcp.http).

Parses the transport's options and sets the exit status; the server and the HTTP rules
live in moor_mcp. The MCP SDK is imported only when this command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_USAGE = 0, 2


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "mcp", help="the MCP server for coding agents, on stdin/stdout (or --http)"
    )
    parser.add_argument(
        "--http", action="store_true", help="serve streamable HTTP on 127.0.0.1 instead"
    )
    parser.add_argument("--port", type=int, help="the port (default 7341; 0 picks a free one)")
    parser.add_argument("--host", help="only 127.0.0.1 is accepted (loopback only)")
    parser.add_argument(
        "--token-file",
        type=Path,
        help="the bearer token's file, outside the workspace (default: one per workspace "
        "in $XDG_STATE_HOME/moor/mcp-http/, else ~/.local/state/moor/mcp-http/)",
    )
    parser.add_argument(
        "--no-auth", action="store_true", help="no bearer token: any local program gets in"
    )


def cmd_mcp(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.workspace.workspace import find_root
    from moor_mcp.http import DEFAULT_PORT, LOOPBACK, HttpRefusal, serve
    from moor_mcp.server import build
    from moor_mcp.stdio import run_stdio

    if not args.http:
        if args.port is not None or args.host or args.token_file or args.no_auth:
            print(
                "moor mcp: --port, --host, --token-file and --no-auth need --http", file=sys.stderr
            )
            return EXIT_USAGE
        run_stdio(build(start))
        return EXIT_OK
    try:
        serve(
            build(start),
            find_root(start),
            host=LOOPBACK if args.host is None else args.host,
            port=DEFAULT_PORT if args.port is None else args.port,
            token_file=args.token_file,
            no_auth=args.no_auth,
            stderr=sys.stderr,
        )
    except HttpRefusal as refusal:
        print(f"moor mcp: {refusal}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK
