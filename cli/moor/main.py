"""`moor`: the command line. Parses arguments, calls the engine, renders, sets the exit status.

Exit status (docs/memories.md): 0 nothing to look at, 1 a person should look, 2 usage or internal
error. Heavy imports (rich, the LSP stack) stay out of the start-up path.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from moor_engine.usage import UsageError
from moor_engine.workspace.distribution import version

from moor import (
    anchor_commands,
    atlas_commands,
    checkpoint_commands,
    context_commands,
    corpus_commands,
    hook_commands,
    mcp_command,
    recall_commands,
    rules_commands,
    source_commands,
)
from moor.arguments import add_format, add_trust
from moor.guard import run_guarded
from moor.sessions import told_session
from moor.writes import render_written

if TYPE_CHECKING:
    from moor_engine.grounding.trust import Report

EXIT_OK, EXIT_LOOK, EXIT_USAGE = 0, 1, 2


class _VersionAction(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"moor {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="moor",
        description="Keep written knowledge about a codebase honest.",
    )
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="print the version")
    parser.add_argument(
        "-C", dest="directory", default=".", help="run as if started in this folder"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    init = commands.add_parser("init", help="create moor.toml and memories/, ignore .moor/")
    add_format(init)

    check = commands.add_parser(
        "check", help="observe every anchor; exit 1 if a memory needs a look"
    )
    check.add_argument("paths", nargs="*", help="memories, folders, or code files to check")
    add_format(check, ("text", "json", "sarif"))
    check.add_argument("-v", "--verbose", action="store_true", help="list current memories too")
    check.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    add_trust(check)
    check.add_argument(
        "--changed-since",
        metavar="REV",
        help="only memories about files changed since REV's merge base with HEAD "
        "(commits, uncommitted and untracked changes; for pull requests)",
    )

    status = commands.add_parser("status", help="counts per trust state, without journalling")
    status.add_argument("paths", nargs="*")
    add_format(status)
    add_trust(status)

    bind = commands.add_parser("bind", help="record what the code looks like now")
    bind.add_argument("memories", nargs="*", help="memories to bind (default: every memory)")
    add_format(bind)
    add_trust(bind)

    reaffirm = commands.add_parser("reaffirm", help="accept the code as it is now, with a reason")
    reaffirm.add_argument("memory")
    reaffirm.add_argument("--why", required=True, help="why the memory still holds")
    add_format(reaffirm)
    add_trust(reaffirm)

    follow = commands.add_parser(
        "follow", help="re-point moved references (or one, with --to) and re-bind them"
    )
    follow.add_argument("memory")
    follow.add_argument("--to", metavar="REF", help="the new place of a moved or gone reference")
    follow.add_argument(
        "--from", dest="source", metavar="REF", help="which reference --to re-points"
    )
    follow.add_argument("--why", help="why this is the new place (journalled)")
    add_format(follow)

    diff = commands.add_parser("diff", help="what changed in the code since the memory was bound")
    diff.add_argument("memory")
    add_format(diff)
    add_trust(diff)

    log = commands.add_parser("log", help="the journal of a memory's anchors, or of anchor:NAME")
    log.add_argument("memory", help="a memory, or a custom anchor (anchor:NAME)")
    add_format(log)

    symbols = commands.add_parser(
        "symbols", help="every reference that names a definition of a file exactly"
    )
    symbols.add_argument("path", help="a code or Markdown file in the workspace")
    add_format(symbols)

    from moor import memory_commands

    memory_commands.add_parsers(commands)

    context_commands.add_parsers(commands)
    rules_commands.add_parsers(commands)
    recall_commands.add_parsers(commands)
    atlas_commands.add_parsers(commands)
    checkpoint_commands.add_parsers(commands)
    hook_commands.add_parsers(commands)
    source_commands.add_parsers(commands)
    anchor_commands.add_parsers(commands)
    corpus_commands.add_parsers(commands)

    mcp_command.add_parser(commands)
    commands.add_parser(
        "lsp",
        help="run the language server on stdin/stdout (`moor lsp --help` for its options)",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command == "lsp":
        args.server_args = extra  # the server parses its own options (--stdio, --log-level)
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return run_guarded(COMMANDS[args.command], args)


def cmd_init(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.workspace.init import init_workspace
    from moor_engine.written import Written

    return render_written(Written("init", done=init_workspace(start.resolve())), args.format)


def _progress(enabled: bool) -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """A progress bar that appears only when the work takes longer than a moment."""
    if not enabled or not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import Progress

    started = time.monotonic()
    bar = Progress(transient=True, console=Console(stderr=True))
    task = bar.add_task("observing anchors", total=None)
    shown = False

    def update(done: int, total: int) -> None:
        nonlocal shown
        if not shown:
            if time.monotonic() - started < 0.3:
                return
            bar.start()
            shown = True
        bar.update(task, completed=done, total=total)

    def stop() -> None:
        if shown:
            bar.stop()

    return update, stop


def cmd_check(args: argparse.Namespace, start: Path) -> int:
    from moor_engine import kept_check

    from moor import render
    from moor.one_shot import collecting_less

    whole = not args.paths and args.changed_since is None
    with collecting_less():
        # A check of every memory is answered from the last one while nothing it rests on
        # moved (memory: a-warm-check-answers-from-its-kept-report).
        report = kept_check.answer(start) if whole else None
        if report is None:
            report = _check(args, start, keep=whole)
    if args.format == "json":
        render.render_json(report)
    elif args.format == "sarif":
        render.render_sarif(report, version())
    else:
        render.render_text(report, verbose=args.verbose)
    return EXIT_LOOK if report.needs_attention else EXIT_OK


def _check(args: argparse.Namespace, start: Path, *, keep: bool) -> Report:
    with told_session(start, trust=args.trust) as session:
        paths = session.select(args.paths)
        if args.changed_since is not None:
            from moor_engine.grounding.changed_since import changed_files, select_changed

            changed = changed_files(session, args.changed_since)
            every = len(paths)
            paths = select_changed(session, paths, changed)
            print(
                f"moor: {len(paths)} of {every} memories are about the {len(changed.files)} "
                f"file(s) changed since {args.changed_since} (from {changed.base[:12]})",
                file=sys.stderr,
            )
        update, stop = _progress(args.format == "text" and not args.no_progress)
        try:
            return session.check(paths, update, keep=keep)
        finally:
            stop()


def cmd_status(args: argparse.Namespace, start: Path) -> int:
    from moor import render
    from moor.one_shot import collecting_less

    with collecting_less(), told_session(start, trust=args.trust) as session:
        report = session.check(session.select(args.paths), record=False)
    if args.format == "json":
        render.render_json(report)
    else:
        render.render_text(report, verbose=False)
    return EXIT_LOOK if report.needs_attention else EXIT_OK


def cmd_bind(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.grounding.actions import bind

    from moor.one_shot import collecting_less

    with collecting_less(), told_session(start, trust=args.trust) as session:
        written = bind(session, args.memories)
    if args.format == "text" and not written.done and not written.refused:
        print("nothing to bind: every memory's references are in moor.lock")
    return render_written(written, args.format)


def cmd_reaffirm(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.grounding.actions import reaffirm

    with told_session(start, trust=args.trust) as session:
        written = reaffirm(session, args.memory, args.why)
    return render_written(written, args.format)


def cmd_follow(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.grounding.actions import follow

    with told_session(start) as session:
        if args.source is not None and args.to is None:
            raise UsageError("--from needs --to: the new place of that reference")
        written = follow(session, args.memory, args.to, args.source, args.why)
    return render_written(written, args.format)


def cmd_diff(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.memory.history import memory_diff

    with told_session(start, trust=args.trust) as session:
        path, diffs = memory_diff(session, args.memory)
    changed = any(item.changed for item in diffs)
    if args.format == "json":
        rows = [
            {
                "ref": item.ref,
                "bound_address": item.bound_address,
                "address": item.address,
                "changed": item.changed,
                "note": item.note,
                "diff": item.diff,
            }
            for item in diffs
        ]
        print(json.dumps({"memory": path, "changed": changed, "anchors": rows}, ensure_ascii=False))
        return EXIT_LOOK if changed else EXIT_OK
    for item in diffs:
        print(f"== {item.ref}" + (f"  ({item.note})" if item.note else ""))
        if item.diff:
            sys.stdout.write(item.diff if item.diff.endswith("\n") else item.diff + "\n")
    # As `check` decides: a watched axis changed (or the code is gone), not "the text differs".
    return EXIT_LOOK if changed else EXIT_OK


def cmd_log(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.anchors.history import anchor_log
    from moor_engine.memory.history import memory_log

    with told_session(start) as session:
        if args.memory.startswith("anchor:"):  # a custom anchor's own history
            path, entries = anchor_log(session, args.memory)
        else:
            path, entries = memory_log(session, args.memory)
    if args.format == "json":
        rows = [
            {
                "seq": entry.seq,
                "at": entry.at,
                "kind": entry.kind,
                "code": entry.code,
                "anchor": entry.anchor,
                "memory": entry.memory,
                "address": entry.address,
                "previous": entry.previous,
                "reason": entry.reason,
                "detail": entry.detail,
                "data": dict(entry.data) if entry.data is not None else None,
            }
            for entry in entries
        ]
        print(json.dumps({"memory": path, "entries": rows}, ensure_ascii=False))
        return EXIT_OK
    if not entries:
        print(f"{path}: no journal entries in this clone yet")
    for entry in entries:
        parts = [f"#{entry.seq}", entry.at, entry.kind]
        if entry.code:
            parts.append(entry.code)
        parts.append(entry.anchor)
        line = "  ".join(parts)
        if entry.detail:
            line += f"  ({entry.detail})"
        if entry.reason:
            line += f"  — {entry.reason}"
        print(line)
    return EXIT_OK


def cmd_symbols(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.grounding.listing import file_symbols

    from moor import render

    with told_session(start, use_journal=False) as session:
        rel, found = file_symbols(session, args.path)
    if args.format == "json":
        render.render_symbols_json(rel, found)
    else:
        render.render_symbols_text(rel, found)
    return EXIT_OK


def cmd_lsp(args: argparse.Namespace, start: Path) -> int:
    # Imported here: the LSP stack costs ~0.4 s and no other command needs it.
    from moor_lsp.server import main as serve

    return serve(list(args.server_args))


COMMANDS: dict[str, Callable[[argparse.Namespace, Path], int]] = {
    "context": context_commands.cmd_context,
    "rules": rules_commands.cmd_rules,
    "init": cmd_init,
    "check": cmd_check,
    "status": cmd_status,
    "bind": cmd_bind,
    "reaffirm": cmd_reaffirm,
    "follow": cmd_follow,
    "diff": cmd_diff,
    "log": cmd_log,
    "symbols": cmd_symbols,
    "lsp": cmd_lsp,
    "mcp": mcp_command.cmd_mcp,
    "recall": recall_commands.cmd_recall,
    "about": recall_commands.cmd_about,
    "atlas": atlas_commands.cmd_atlas,
    "checkpoint": checkpoint_commands.cmd_checkpoint,
    "hooks": hook_commands.cmd_hooks,
    "source": source_commands.cmd_source,
    **anchor_commands.COMMANDS,
    **corpus_commands.COMMANDS,
}


def _memory_commands() -> None:
    from moor.memory_commands import COMMANDS as MEMORY_COMMANDS

    COMMANDS.update(MEMORY_COMMANDS)


_memory_commands()
