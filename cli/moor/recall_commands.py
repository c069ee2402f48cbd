"""`moor recall` and `moor about`: parse, ask the engine, render (text or JSON)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from moor.arguments import add_format, add_trust, at_least
from moor.sessions import told_session

EXIT_OK, EXIT_LOOK, EXIT_USAGE = 0, 1, 2


def add_parsers(commands: Any) -> None:
    recall = commands.add_parser(
        "recall", help="memories that answer a query, best first; stale ones flagged"
    )
    _recall_arguments(recall)

    about = commands.add_parser(
        "about", help="memories about a symbol, a line or a file (PATH#SYMBOL, PATH:LINE, PATH)"
    )
    about.add_argument("target", help="PATH#SYMBOL, PATH:LINE, PATH or anchor:NAME")
    add_format(about)
    add_trust(about)
    about.add_argument(
        "--agent", metavar="NAME", help="read as this agent: shared memories and its own"
    )


def _recall_arguments(recall: argparse.ArgumentParser) -> None:
    recall.add_argument("query", nargs="+", help="words, names or paths")
    add_format(recall)
    recall.add_argument(
        "--explain", action="store_true", help="show each signal's part in each score"
    )
    recall.add_argument("--limit", type=at_least(1), default=10, metavar="N")
    recall.add_argument(
        "--agent", metavar="NAME", help="read as this agent: shared memories and its own"
    )


class _NotPlain(Exception):
    """The command line needs the full parser: help, a mistake, or anything unusual."""


class _RecallOnly(argparse.ArgumentParser):
    """`moor recall`'s own arguments, parsed as its subcommand parses them; it says nothing
    itself: whatever it would print (help, a usage error) the full parser prints instead."""

    def error(self, message: str) -> NoReturn:
        raise _NotPlain(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _NotPlain(message or "")

    def print_help(self, file: object = None) -> None:
        raise _NotPlain("help")

    def print_usage(self, file: object = None) -> None:
        raise _NotPlain("usage")


def plain_recall(argv: Sequence[str]) -> argparse.Namespace | None:
    """The arguments of `moor recall ARGV` as the full command line would parse them, without
    building it (each of its ~40 commands' parsers: ~10 ms of a one-shot recall); None
    when only the full parser may answer (help, an error, an unknown option)."""
    parser = _RecallOnly(prog="moor recall")
    _recall_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except _NotPlain:
        return None
    # The full command line's own defaults (`moor.main.build_parser`): no `-C`, no --version.
    args.command, args.directory, args.version = "recall", ".", None
    return args


def cmd_recall(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.memory.recall_index import session_recall
    from moor_engine.memory.retired_here import retired_beside

    query = " ".join(args.query)
    with told_session(start) as session:
        result, status = session_recall(session, query, limit=args.limit, agent=args.agent)
        for warning in status.warnings:
            print(f"moor: {warning}", file=sys.stderr)
        beside = retired_beside(session, [hit.report for hit in result.hits], args.agent)
    if args.format == "json":
        value = result.as_json(explain=args.explain)
        value["hits"] = [
            {
                **hit.as_json(explain=args.explain),
                "retired_here": [k.as_json() for k in beside[hit.path]],
            }
            for hit in result.hits
        ]
        value["index"] = status.as_json()
        print(json.dumps(value, indent=2))
        return EXIT_OK if result.hits else EXIT_LOOK
    if args.explain:
        print(
            f"terms: {', '.join(result.terms) or '(none)'}; index: {status.memories} memories, "
            f"{status.reindexed} re-indexed, {status.removed} removed"
            + (" (rebuilt)" if status.rebuilt else "")
            + (" (in memory)" if status.in_memory else "")
        )
    for rank, hit in enumerate(result.hits, 1):
        state = f"  [{hit.state.value}]" if hit.flagged else ""
        print(f"{rank}. {hit.path}{state}  {hit.title}  ({hit.score:.3f})")
        if hit.refs:
            print(f"   about: {', '.join(hit.refs)}")
        for reason in hit.why:
            print(f"   ! {reason} — verify before relying on it")
        for question in hit.questions[:3]:
            print(f"   ask: {question}")
        for known in beside[hit.path]:
            print(f"   retired here: {known.path}  {known.title} — {known.retired_because}")
        if args.explain:
            parts = [f"bm25 {hit.signals[0].factor:.3f}"]
            parts += [
                f"{s.name} x{s.factor:.3f} ({s.contribution:+.3f}: {s.why})"
                for s in hit.signals[1:]
            ]
            print("   score: " + " -> ".join(parts))
            print(f"   matched: {', '.join(hit.matched) or '(none)'}")
    if result.retired:
        print(f"({result.retired} retired memories left out)")
    if result.cut:
        print(f"({result.cut} weaker matches below {result.threshold:.3f} left out)")
    if not result.hits:
        print(f"no memory matches {query!r}")
    if result.weak:
        for item in result.feedback:
            near = ", ".join(f"{w} ({n})" for w, n in item.nearby)
            used = f"{item.documents} memories use it" if item.documents else "no memory uses it"
            print(f"weak match: {item.term!r}: {used}" + (f"; nearby: {near}" if near else ""))
    return EXIT_OK if result.hits else EXIT_LOOK


def cmd_about(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.grounding.about import about

    with told_session(start, trust=args.trust) as session:
        result = about(session, args.target, args.agent)
    if args.format == "json":
        print(json.dumps(result.as_json(), indent=2))
        return EXIT_LOOK if result.needs_attention else EXIT_OK
    print(f"about {result.target.describe()}")
    if result.target.note:
        print(f"  note: {result.target.note}")
    if not result.items:
        print("  no memories")
    for item in result.items:
        print(f"  {item.relation:<9}  {item.path}  [{item.state.value}]  {item.title}")
        line = f"             via {item.ref}"
        if item.anchor_state != item.state or item.detail:
            line += f" ({item.anchor_state.value}" + (f": {item.detail}" if item.detail else "")
            line += ")"
        print(line)
        for reason in item.why:
            print(f"             ! {reason}")
        for question in item.questions:
            print(f"             ask: {question}")
        for link in item.related.links:
            arrow = "->" if link.direction == "to" else "<-"
            missing = "" if link.exists else "  (no such memory)"
            print(f"             {arrow} {link.relation} {link.path}{missing}")
        if item.related.cobound:
            print(f"             cobound: {', '.join(item.related.cobound)}")
    if result.retired:
        print(f"  ({result.retired} retired memories left out)")
    return EXIT_LOOK if result.needs_attention else EXIT_OK
