"""`moor atlas`: the engine's atlas data rendered as one offline HTML page (`atlas_page`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from moor.arguments import add_format
from moor.sessions import told_session

EXIT_OK = 0
DEFAULT_OUTPUT = ".moor/atlas.html"  # moor's own state folder: ignored by git, never shared


def add_parsers(commands: Any) -> None:
    atlas = commands.add_parser(
        "atlas", help="write one offline HTML page of every memory, its code, state and links"
    )
    atlas.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help=f"the page's file in the workspace (default {DEFAULT_OUTPUT}); - prints it",
    )
    atlas.add_argument("--open", action="store_true", help="open the page in a browser")
    add_format(atlas)


def cmd_atlas(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.agents.outputs import output_target
    from moor_engine.grounding.atlas import atlas
    from moor_engine.usage import UsageError
    from moor_store.inside import write_inside

    from moor.atlas_page import render_page

    if args.output == "-" and args.format == "json":
        raise UsageError(
            "--output - prints the page itself; --format json describes a page written"
        )
    with told_session(start) as session:
        rel = (
            None
            if args.output == "-"
            else DEFAULT_OUTPUT
            if args.output is None
            else output_target(session, args.output, "atlas page")
        )
        found = atlas(session)
        page = render_page(found.as_json()).encode("utf-8")
        root = session.workspace.root
        if rel is None:
            sys.stdout.write(page.decode("utf-8"))
            return EXIT_OK
        write_inside(root, rel, page, own=rel == DEFAULT_OUTPUT)
    if args.format == "json":
        answer = {
            "path": rel,
            "memories": len(found.memories),
            "bytes": len(page),
            "summary": found.summary_counts(),
        }
        print(json.dumps(answer, indent=2))
    else:
        print(f"{rel}: the atlas of {len(found.memories)} memories ({len(page) // 1024} KiB)")
    if args.open:
        import webbrowser

        if not webbrowser.open((root / rel).as_uri()):
            print(f"moor: no browser could be started; open {root / rel}", file=sys.stderr)
    return EXIT_OK
