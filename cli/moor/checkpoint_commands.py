"""`moor checkpoint save | resume | list`: where an agent left its work. Parsing and
rendering only; what a checkpoint is and where it is kept is `moor_engine.memory.checkpoints`.

Exit status: 0 done; 1 `resume` found no checkpoint (a fresh start); 2 usage (a bad agent
name, an empty summary, a file outside the workspace).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moor.arguments import add_format, at_least

if TYPE_CHECKING:
    from moor_engine.memory.checkpoints import Resumed

EXIT_OK, EXIT_LOOK = 0, 1


def add_parsers(commands: Any) -> None:
    checkpoint = commands.add_parser(
        "checkpoint", help="save or resume an agent's place in its work (local, under .moor/)"
    )
    actions = checkpoint.add_subparsers(dest="checkpoint_action", required=True, metavar="ACTION")

    save = actions.add_parser("save", help="save a new checkpoint (never overwrites one)")
    save.add_argument("--agent", required=True, help="the agent's name: a-z 0-9 . _ -")
    save.add_argument("summary", help="what was done and where it stands")
    save.add_argument(
        "--next", action="append", default=[], metavar="STEP", help="a next step (repeat)"
    )
    save.add_argument(
        "--file", action="append", default=[], metavar="PATH", help="a file in play (repeat)"
    )
    add_format(save)

    resume = actions.add_parser("resume", help="the agent's newest checkpoints, newest first")
    resume.add_argument("--agent", required=True)
    resume.add_argument("--limit", type=at_least(1, "checkpoints"), default=1)
    add_format(resume)

    listing = actions.add_parser("list", help="every agent with checkpoints, and how many")
    add_format(listing)


def cmd_checkpoint(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.memory import checkpoints
    from moor_engine.workspace.workspace import find_root

    root = find_root(start)
    if args.checkpoint_action == "save":
        saved = checkpoints.save(root, args.agent, args.summary, args.next, args.file)
        if args.format == "json":
            print(json.dumps(saved.as_json(), ensure_ascii=False))
        else:
            print(f"saved {saved.path}")
        return EXIT_OK
    if args.checkpoint_action == "resume":
        resumed = checkpoints.resume(root, args.agent, args.limit)
        if args.format == "json":
            print(
                json.dumps(
                    {
                        "agent": resumed.agent,
                        "checkpoints": [c.as_json() for c in resumed.checkpoints],
                        "total": resumed.total,
                        "unreadable": resumed.unreadable,
                    },
                    ensure_ascii=False,
                )
            )
        else:
            _print_resumed(resumed)
        return EXIT_OK if resumed.checkpoints else EXIT_LOOK
    listed = checkpoints.listing(root)
    for folder in listed:
        if isinstance(folder, checkpoints.Misnamed):
            print(f"moor: {folder.path}: {folder.why}", file=sys.stderr)
    found = [a for a in listed if isinstance(a, checkpoints.AgentCheckpoints)]
    if args.format == "json":
        print(json.dumps([{"agent": a.agent, "count": a.count, "latest": a.latest} for a in found]))
        return EXIT_OK
    if not found:
        print("no checkpoints in this clone")
    for agent in found:
        print(f"{agent.agent}  {agent.count} checkpoint(s), newest {agent.latest}")
    return EXIT_OK


def _print_resumed(resumed: Resumed) -> None:
    if not resumed.checkpoints:
        print(f"no checkpoints for agent {resumed.agent}: a fresh start")
    for checkpoint in resumed.checkpoints:
        print(f"== {checkpoint.id}  ({checkpoint.path})")
        print(checkpoint.summary)
        for step in checkpoint.next_steps:
            print(f"  next: {step}")
        for path in checkpoint.files:
            print(f"  file: {path}")
    for path in resumed.unreadable:
        print(f"moor: {path}: not a readable checkpoint; left out")
    if resumed.total > len(resumed.checkpoints) + len(resumed.unreadable):
        print(f"({resumed.total} in all: --limit N for more)")
