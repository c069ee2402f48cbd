"""`moor context`: the managed block of memories for an agent file — print it, write it
into AGENTS.md/CLAUDE.md (`--write`), or fail when the file's block is out of date
(`--check`, for CI). The engine decides the block (`moor_engine.agents.agent_context`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moor.arguments import add_format, at_least
from moor.sessions import told_session

if TYPE_CHECKING:
    from moor_engine.agents.agent_context import ContextBlock

EXIT_OK, EXIT_LOOK, EXIT_USAGE = 0, 1, 2


def add_parsers(commands: Any) -> None:
    context = commands.add_parser(
        "context", help="the memories an agent reads first, as a managed block of AGENTS.md"
    )
    where = context.add_mutually_exclusive_group()
    where.add_argument("--write", metavar="FILE", help="write the block into FILE (AGENTS.md)")
    where.add_argument("--check", metavar="FILE", help="exit 1 if FILE's block is out of date")
    context.add_argument("--budget", type=at_least(100, "tokens"), default=None, metavar="TOKENS")
    context.add_argument(
        "--agent", metavar="NAME", help="for this agent: shared memories and its own"
    )
    add_format(context)


def cmd_context(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.agents.agent_context import DEFAULT_BUDGET, context_block, managed, merged
    from moor_engine.agents.outputs import output_target
    from moor_store.inside import read_inside
    from moor_store.intent import Change

    budget = args.budget or DEFAULT_BUDGET
    with told_session(start) as session:
        if args.write:
            rel: str | None = output_target(session, args.write, "memories block")
        else:
            rel = session.relative_arg(args.check) if args.check else None
        block = context_block(session, budget, args.agent)
        summary = f"{len(block.included)} memories, {block.tokens:,} of {budget:,} tokens" + (
            f" ({len(block.left_out)} left out)" if block.left_out else ""
        )
        if block.pinned_over_budget:
            print(
                f"moor: the pinned memories alone take {block.pinned_tokens:,} tokens, over "
                f"the budget of {budget:,}: every pinned memory is in the block, no other "
                "one is (raise --budget, or pin fewer)",
                file=sys.stderr,
            )
        if rel is None:
            if args.format == "json":
                return _json(block, None, up_to_date=None, written=False)
            print(block.text)
            print(f"moor: {summary}", file=sys.stderr)
            return EXIT_OK
        root = session.workspace.root
        try:
            existing: str | None = read_inside(root, rel).decode("utf-8")
        except FileNotFoundError:
            existing = None
        except UnicodeDecodeError:
            print(f"moor: {rel}: not UTF-8 text; moor writes no block into it", file=sys.stderr)
            return EXIT_USAGE
        if args.check:
            up_to_date = existing is not None and managed(existing) == block.text
            if args.format == "json":
                return _json(block, rel, up_to_date=up_to_date, written=False)
            if up_to_date:
                print(f"{rel}: up to date ({summary})")
                return EXIT_OK
            missing = existing is None or managed(existing) is None
            why = "has no memories block" if missing else "has an out-of-date memories block"
            print(f"{rel} {why}: run `moor context --write {rel}`")
            return EXIT_LOOK
        with session.writing("context"):
            # Through an intent record, as every write: a killed run is finished by the next.
            change = Change("moor context --write")
            before = None if existing is None else existing.encode("utf-8")
            change.write(rel, before, merged(existing, block.text).encode("utf-8"))
            session.commit(change)
        if args.format == "json":
            return _json(block, rel, up_to_date=True, written=True)
        print(f"{rel}: wrote the memories block ({summary})")
    return EXIT_OK


def _json(block: ContextBlock, path: str | None, *, up_to_date: bool | None, written: bool) -> int:
    """The block as one JSON object (docs/cli.md): the file it is for (None: printed), the
    block, which memories are in it and which were left out, its tokens and budget, whether
    the file's block is up to date (`--check`; None when not asked) and was written."""
    answer = {
        "path": path,
        "block": block.text,
        "included": block.included,
        "left_out": block.left_out,
        "tokens": block.tokens,
        "budget": block.budget,
        "pinned_over_budget": block.pinned_over_budget,
        "up_to_date": up_to_date,
        "written": written,
    }
    print(json.dumps(answer, ensure_ascii=False))
    return EXIT_LOOK if up_to_date is False else EXIT_OK
