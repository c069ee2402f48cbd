"""`moor anchors`, `moor trust`, `moor untrust`: custom anchors and who may run them."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path

from moor.arguments import add_format
from moor.sessions import told_session

EXIT_OK = 0


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    anchors = commands.add_parser(
        "anchors", help="every anchor: kind, bound memories, last observation (runs nothing)"
    )
    add_format(anchors)
    trust = commands.add_parser(
        "trust", help="let this workspace's declared anchor commands run (your list, not its)"
    )
    add_format(trust)
    untrust = commands.add_parser("untrust", help="take this workspace off your trusted list")
    add_format(untrust)
    close = commands.add_parser(
        "close", help="close a custom anchor for good: its memories are retired (irreversible)"
    )
    close.add_argument("anchor", help="anchor:NAME")
    close.add_argument("--why", required=True, help="why it is closed (kept in moor.lock)")
    add_format(close)


def cmd_anchors(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.anchors.listing import list_anchors

    with told_session(start) as session:
        rows = list_anchors(session)
    if args.format == "json":
        print(json.dumps({"anchors": [row.as_json() for row in rows]}, ensure_ascii=False))
        return EXIT_OK
    if not rows:
        print("no anchors: nothing is declared in moor.toml or bound in moor.lock")
    for row in rows:
        said = [row.kind]
        if row.reproducibility:
            said.append(row.reproducibility)
        if row.streak and row.streak > 1:
            said.append(f"streak {row.streak}")
        said.append(f"{len(row.memories)} memor{'y' if len(row.memories) == 1 else 'ies'}")
        print(f"{row.anchor}  ({', '.join(said)})")
        if row.last_state:
            print(
                f"  last: {row.last_state}"
                + (f" at {row.last_observed}" if row.last_observed else "")
            )
        if row.last_attempt:
            print(f"  last attempt: {row.last_attempt['code']}: {row.last_attempt['detail']}")
        if row.closed:
            by = f" by {row.closed['by']}" if row.closed["by"] else ""
            print(f"  closed{by} {row.closed['at']}: {row.closed['reason']}")
        if row.next_due:
            print(f"  next: {row.next_due}")
    return EXIT_OK


def cmd_close(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.anchors.lifecycle import close

    from moor.writes import render_written

    with told_session(start) as session:
        return render_written(close(session, args.anchor, args.why), args.format)


def _trust_command(add: bool) -> Callable[[argparse.Namespace, Path], int]:
    def run(args: argparse.Namespace, start: Path) -> int:
        from moor_engine.anchors.trust import trust_root, untrust_root
        from moor_engine.workspace.roots import find_root

        root = find_root(start.resolve())
        path, changed = (trust_root if add else untrust_root)(root, os.environ)
        if args.format == "json":
            print(json.dumps({"root": str(root), "list": str(path), "changed": changed}))
        elif add:
            print(f"trusted {root}" if changed else f"{root} was already trusted")
            print(f"(your list: {path}; `moor untrust` takes it off)")
        else:
            print(f"untrusted {root}" if changed else f"{root} was not on your list ({path})")
        return EXIT_OK

    return run


COMMANDS: dict[str, Callable[[argparse.Namespace, Path], int]] = {
    "anchors": cmd_anchors,
    "close": cmd_close,
    "trust": _trust_command(True),
    "untrust": _trust_command(False),
}
