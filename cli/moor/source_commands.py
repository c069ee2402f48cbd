"""`moor source list`: the read-only sources moor.toml names, their notes and which are
bound (the engine lists them: `moor_engine.sources`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

EXIT_OK = 0


def add_parsers(commands: Any) -> None:
    source = commands.add_parser(
        "source", help="notes other tools keep (moor.toml [[sources]]), read-only"
    )
    actions = source.add_subparsers(dest="source_action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="each source, its notes and which are bound")
    listing.add_argument("--json", action="store_true", help="print JSON")


def cmd_source(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.sources import list_sources

    from moor.main import _session

    with _session(start) as session:
        found = list_sources(session)
    if args.json:
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
