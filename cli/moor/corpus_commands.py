"""`moor doctor` (and, beside it, `moor export` and `moor import`): render what
`moor_engine.corpus` finds; the engine decides."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from moor.arguments import add_format
from moor.sessions import told_session

EXIT_OK, EXIT_LOOK = 0, 1


def add_parsers(commands: Any) -> None:
    doctor = commands.add_parser(
        "doctor",
        help="the corpus's health; exit 1 when something needs a person, each with its fix",
    )
    add_format(doctor)

    export = commands.add_parser(
        "export",
        help="this clone's journal and sealed snapshots (what git cannot rebuild) as JSON lines",
    )
    export.add_argument(
        "--output", metavar="FILE", help="a file in the workspace (default: standard output)"
    )
    add_format(export)

    imported = commands.add_parser(
        "import", help="restore an export into this clone's empty journal (all or nothing)"
    )
    imported.add_argument("file", help="an export file in the workspace")
    add_format(imported)


def cmd_doctor(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.corpus.doctor import before_opening, diagnose, journal_damaged
    from moor_engine.session import Session
    from moor_engine.workspace.workspace import Workspace

    workspace = Workspace.open(start)
    early = before_opening(workspace)
    # The look changes and runs nothing: a journal found damaged, or none, is not opened
    # (opening sets a damaged one aside, creates a missing one), nothing is tended, and no
    # declared command runs.
    use_journal = workspace.journal_path.is_file() and not journal_damaged(early)
    with Session.open(start, use_journal=use_journal, trust=False, tend=False) as session:
        health = diagnose(session, early)
        for warning in session.told():
            print(f"moor: {warning}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(health.as_json(), ensure_ascii=False))
        return EXIT_LOOK if health.needs_attention else EXIT_OK
    for finding in health.findings:
        mark = "!" if finding.act else "i"
        print(f"{mark} [{finding.code}] {finding.message}")
        print(f"    fix: {finding.fix}")
    acting = sum(finding.act for finding in health.findings)
    told = len(health.findings) - acting
    summary = f"{health.memories} memories; looked at {', '.join(health.looked_at)}: "
    if not health.findings:
        summary += "nothing to do"
    else:
        summary += f"{acting} to act on, {told} to know"
    print(summary, file=sys.stdout)
    return EXIT_LOOK if health.needs_attention else EXIT_OK


def cmd_export(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.corpus.export import export_text, write_export

    with told_session(start) as session:
        if args.output is not None:
            rel = write_export(session, args.output)
            if args.format == "json":
                print(json.dumps({"path": rel}, ensure_ascii=False))
            else:
                print(f"{rel}: exported", file=sys.stderr)
            return EXIT_OK
        text = export_text(session)
    if args.format == "json":
        records = [json.loads(line) for line in text.splitlines()]
        print(json.dumps({"path": None, "records": records}, ensure_ascii=False))
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_import(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.corpus.export import import_file

    with told_session(start) as session:
        done = import_file(session, args.file)
    if args.format == "json":
        print(
            json.dumps(
                {
                    "path": done.path,
                    "entries": done.entries,
                    "snapshots": done.snapshots,
                    "carried": done.carried,
                    "bindings_differ": list(done.bindings_differ),
                },
                ensure_ascii=False,
            )
        )
        return EXIT_OK
    print(
        f"{done.path}: imported {done.entries} journal entries, {done.snapshots} snapshots"
        + (
            f", {done.carried} lines of kinds this moor does not know (kept)"
            if done.carried
            else ""
        )
    )
    if done.bindings_differ:
        print(
            f"moor: moor.lock here differs from the export's for {len(done.bindings_differ)} "
            f"memories (e.g. {done.bindings_differ[0]}): this clone's moor.lock is kept",
            file=sys.stderr,
        )
    return EXIT_OK


COMMANDS = {"doctor": cmd_doctor, "export": cmd_export, "import": cmd_import}
