"""`moor add`, `edit`, `supersede`, `forget`, `restore`, `pin`, `unpin`: the memory layer's
writes.

Parsing and rendering only; what each does is `moor_engine.memory.memory_writes`. Exit status: 0
written, 1 refused (a structured refusal: with `--format json`, on stdout), 2 usage.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from moor.arguments import add_format, add_trust
from moor.sessions import told_session
from moor.writes import render_written

if TYPE_CHECKING:
    pass

EXIT_OK, EXIT_LOOK = 0, 1


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add = commands.add_parser(
        "add", help="write a new memory about some code, and bind it (never overwrites)"
    )
    add.add_argument("text", help="what the memory says")
    add.add_argument(
        "--about", action="append", default=[], metavar="REF", help="code it is about (repeat)"
    )
    add.add_argument("--title", help="its title (default: the text's first line)")
    add.add_argument(
        "--confidence", choices=("verified", "inferred", "unverified"), default="unverified"
    )
    add.add_argument("--author", help="who wrote it (default: git's user.name)")
    add.add_argument("--agent", help="the agent that wrote it")
    add.add_argument(
        "--ask", action="append", default=[], metavar="QUESTION", help="when this changes, ask"
    )
    add.add_argument(
        "--supersedes", action="append", default=[], metavar="MEMORY", help="memories it retires"
    )
    add_format(add)
    add_trust(add)

    edit = commands.add_parser(
        "edit", help="replace one section of a memory, if it is still what you read"
    )
    edit.add_argument("memory")
    edit.add_argument("--section", help="the heading whose text is replaced")
    edit.add_argument("--text", help="the section's new text")
    edit.add_argument(
        "--base-hash", help="the content hash of the memory as you read it (`moor edit MEMORY`)"
    )
    edit.add_argument("--why", help="why (journalled)")
    add_format(edit)

    supersede = commands.add_parser(
        "supersede",
        help="retire a memory: another says it better (a latch); or anchor:NAME by another",
    )
    supersede.add_argument("memory", help="a memory, or a custom anchor (anchor:NAME)")
    supersede.add_argument("--by", required=True, metavar="MEMORY", help="the memory replacing it")
    supersede.add_argument("--why", required=True)
    add_format(supersede)

    forget = commands.add_parser(
        "forget", help="remove a memory and refuse its text from now on (a tombstone)"
    )
    forget.add_argument("memory")
    forget.add_argument("--why", required=True)
    add_format(forget)

    restore = commands.add_parser(
        "restore", help="the only way back: un-retire a memory, or lift a tombstone"
    )
    restore.add_argument("memory")
    restore.add_argument("--why", required=True)
    add_format(restore)

    for name, text in (
        ("pin", "pin a memory: always in `moor context`, ranked up in recall"),
        ("unpin", "unpin a memory"),
    ):
        pinning = commands.add_parser(name, help=text)
        pinning.add_argument("memory")
        pinning.add_argument("--why", required=True)
        add_format(pinning)


def cmd_add(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.memory.memory_writes import Draft, add

    draft = Draft(
        text=args.text,
        about=args.about,
        title=args.title,
        confidence=args.confidence,
        author=args.author,
        agent=args.agent,
        questions=args.ask,
        supersedes=args.supersedes,
    )
    with told_session(start, trust=args.trust) as session:
        return render_written(add(session, draft), args.format)


def cmd_edit(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.memory.memory_writes import edit, sections_of
    from moor_engine.usage import UsageError

    with told_session(start) as session:
        if args.section is None and args.text is None:
            rel, content_hash, names = sections_of(session, args.memory)
            if args.format == "json":
                print(json.dumps({"path": rel, "content_hash": content_hash, "sections": names}))
            else:
                print(f"{rel}  content hash {content_hash}")
                for name in names:
                    print(f"  section: {name}")
            return EXIT_OK
        if args.section is None or args.text is None or args.base_hash is None:
            raise UsageError(
                "edit needs --section, --text and --base-hash (`moor edit MEMORY` shows them)"
            )
        return render_written(
            edit(session, args.memory, args.section, args.text, args.base_hash, args.why),
            args.format,
        )


def cmd_supersede(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.memory.latch_actions import supersede

    with told_session(start) as session:
        if args.memory.startswith("anchor:"):  # a custom anchor, superseded by another
            from moor_engine.anchors.lifecycle import close

            return render_written(close(session, args.memory, args.why, args.by), args.format)
        return render_written(supersede(session, args.memory, args.by, args.why), args.format)


def cmd_forget(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.memory.latch_actions import forget

    with told_session(start) as session:
        return render_written(forget(session, args.memory, args.why), args.format)


def cmd_restore(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.memory.latch_actions import restore

    with told_session(start) as session:
        return render_written(restore(session, args.memory, args.why), args.format)


def cmd_pin(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.memory.pins import pin

    with told_session(start) as session:
        pinned = args.command == "pin"
        return render_written(pin(session, args.memory, pinned, args.why), args.format)


COMMANDS: dict[str, Callable[[argparse.Namespace, Path], int]] = {
    "pin": cmd_pin,
    "unpin": cmd_pin,
    "add": cmd_add,
    "edit": cmd_edit,
    "supersede": cmd_supersede,
    "forget": cmd_forget,
    "restore": cmd_restore,
}
