"""`moor source list`: the read-only sources moor.toml names, their notes and which are
bound; `moor source bind`: write the sidecar memory binding one note to code. The engine
lists and binds (`moor_engine.memory.sources`); bind exits as `moor add` does: 0 written, 1
refused, 2 usage (an unknown kind, a note that is not there or cannot be read)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from moor.arguments import add_format
from moor.sessions import told_session
from moor.writes import render_written

EXIT_OK = 0


def add_parsers(commands: Any) -> None:
    source = commands.add_parser(
        "source", help="notes other tools keep (moor.toml [[sources]]), read-only"
    )
    actions = source.add_subparsers(dest="source_action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="each source, its notes and which are bound")
    add_format(listing)
    bind = actions.add_parser(
        "bind", help="bind a note to code with moor's own sidecar memory (the note is only read)"
    )
    bind.add_argument(
        "kind", metavar="KIND", help="the source's kind in moor.toml (serena, claude)"
    )
    bind.add_argument("name", metavar="NAME", help="the note's name (its file stem)")
    bind.add_argument(
        "--about",
        action="append",
        default=[],
        required=True,
        metavar="REF",
        help="code the note is about (repeat)",
    )
    bind.add_argument("--why", help="why it is bound (journalled)")
    bind.add_argument(
        "--ask", action="append", default=[], metavar="QUESTION", help="when this changes, ask"
    )
    add_format(bind)


def cmd_source(args: argparse.Namespace, start: Path) -> int:
    if args.source_action == "bind":
        return _bind(args, start)
    from moor_engine.memory.sources import list_sources

    with told_session(start) as session:
        found = list_sources(session)
    if args.format == "json":
        print(json.dumps({"sources": [s.as_json() for s in found]}, indent=2))
        return EXIT_OK
    if not found:
        print('no sources: add a [[sources]] table (kind = "serena" or "claude") to moor.toml')
    for item in found:
        print(f"{item.kind}: {item.path}  ({len(item.notes)} notes, {len(item.bound)} bound)")
        if item.problem:
            print(f"  ! {item.problem}")
        for name in item.notes:
            print(f"  {'bound  ' if name in item.bound else 'unbound'}  {name}")
    return EXIT_OK


def _bind(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.memory.sources import bind_source

    with told_session(start) as session:
        written = bind_source(session, args.kind, args.name, args.about, args.why, args.ask)
        return render_written(written, args.format)
