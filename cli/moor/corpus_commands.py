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


def cmd_doctor(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.corpus.doctor import before_opening, diagnose, journal_damaged
    from moor_engine.workspace.workspace import Workspace

    early = before_opening(Workspace.open(start))
    # A journal found damaged is not opened: opening sets a damaged one aside.
    with told_session(start, use_journal=not journal_damaged(early)) as session:
        health = diagnose(session, early)
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


COMMANDS = {"doctor": cmd_doctor}
