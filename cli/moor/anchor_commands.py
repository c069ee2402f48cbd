"""`moor anchors`, `moor trust`, `moor untrust`: custom anchors and who may run them."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path

from moor.arguments import add_format, add_trust
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
    revise = commands.add_parser(
        "revise",
        help="accept a custom anchor's revised probe, rules or terminal states, or set its state",
    )
    revise.add_argument("anchor", help="anchor:NAME")
    for kind, what in (
        ("probe", "its command, facts kind, env or inputs (takes the facts it observes now)"),
        ("rules", "its rules (keeps the bound facts and state)"),
        ("terminal", "its terminal states (keeps the bound facts and state)"),
    ):
        revise.add_argument(f"--{kind}", action="store_true", help=f"revised: {what}")
    revise.add_argument("--state", metavar="JSON", help="set its state (a JSON object)")
    revise.add_argument("--why", required=True, help="why (journalled with the revision)")
    add_trust(revise)
    add_format(revise)


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
        if row.rules:
            said.append(f"{row.rules} rule{'' if row.rules == 1 else 's'}")
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
        if row.state is not None:
            print(f"  state: {json.dumps(row.state, ensure_ascii=False)[:200]}")
        if row.generated_rules:
            source = _rules_source(row.kind, row.watch)
            print(f"  rules (generated from {source}): {_whens(row.generated_rules)} -> drifted")
        for path, rules in (row.generated_rules_by_memory or {}).items():
            print(f"  {path}: rules (generated from its watch): {_whens(rules)} -> drifted")
        if row.revisions:
            print("  revised: " + ", ".join(f"{k} {n}x" for k, n in row.revisions.items()))
        if row.next_due:
            print(f"  next: {row.next_due}")
    return EXIT_OK


def _rules_source(kind: str, watch: list[str] | None) -> str:
    from moor_extractors.model import DEFAULT_WATCH

    if kind == "command":
        return "no declared rule"
    if watch is None or tuple(watch) == DEFAULT_WATCH:
        return "the default watch"
    return f"the watch [{', '.join(watch)}]"


def _whens(rules: list[dict[str, str]]) -> str:
    return ", ".join(rule["when"] for rule in rules)


def cmd_close(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.anchors.lifecycle import close

    from moor.writes import render_written

    with told_session(start) as session:
        return render_written(close(session, args.anchor, args.why), args.format)


def cmd_revise(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.anchors.revise import revise

    from moor.writes import render_written

    kinds = [kind for kind in ("probe", "rules", "terminal") if getattr(args, kind)]
    with told_session(start, trust=args.trust) as session:
        written = revise(session, args.anchor, kinds, args.state, args.why)
        return render_written(written, args.format)


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
    "revise": cmd_revise,
    "trust": _trust_command(True),
    "untrust": _trust_command(False),
}
