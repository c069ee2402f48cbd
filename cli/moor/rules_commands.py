"""`moor rules`: the memories as path-scoped rule files for coding agents — list what would
be written, write it (`--write`), or fail when any is missing, out of date or stale
(`--check`, for CI). The engine decides the files (`moor_engine.agents.agent_rules`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moor.arguments import add_format, at_least
from moor.sessions import told_session

if TYPE_CHECKING:
    from moor_engine.agents.agent_rules import Planned, RulesPlan

EXIT_OK, EXIT_LOOK, EXIT_USAGE = 0, 1, 2
_TARGETS = ("claude", "cursor", "agents")


def _targets(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    for name in names:
        if name not in _TARGETS:
            raise argparse.ArgumentTypeError(
                f"{name!r} is not a target (choose from {', '.join(_TARGETS)})"
            )
    if not names:
        raise argparse.ArgumentTypeError(f"name a target ({', '.join(_TARGETS)})")
    return names


def add_parsers(commands: Any) -> None:
    rules = commands.add_parser(
        "rules",
        help="the memories as path-scoped rule files (.claude/rules, .cursor/rules, AGENTS.md)",
    )
    what = rules.add_mutually_exclusive_group()
    what.add_argument("--write", action="store_true", help="write the rule files")
    what.add_argument(
        "--check", action="store_true", help="exit 1 if a rule file is missing or out of date"
    )
    rules.add_argument(
        "--only",
        type=_targets,
        action="append",
        metavar="TARGET",
        help="claude, cursor or agents (repeat, or a comma list; default: all three)",
    )
    rules.add_argument(
        "--budget", type=at_least(100, "tokens"), default=None, metavar="TOKENS", help="per file"
    )
    rules.add_argument(
        "--agent", metavar="NAME", help="for this agent: shared memories and its own"
    )
    add_format(rules)


def cmd_rules(args: argparse.Namespace, start: Path) -> int:
    from moor_engine.agents.agent_rules import DEFAULT_BUDGET, plan, write_rules

    budget = args.budget or DEFAULT_BUDGET
    targets = [name for names in args.only or [list(_TARGETS)] for name in names]
    with told_session(start) as session:
        if args.write:
            rules = write_rules(session, budget, args.agent, targets)
        else:
            rules = plan(session, budget, args.agent, targets)
    mode = "write" if args.write else "check" if args.check else "show"
    if args.format == "json":
        print(json.dumps(_as_json(rules, mode), indent=2, ensure_ascii=False))
    else:
        _render_text(rules, mode)
    if rules.refused:
        return EXIT_LOOK
    if args.check and rules.changes:
        return EXIT_LOOK
    return EXIT_OK


def _sizes(planned: Planned) -> str:
    rule = planned.rule
    if rule is None:
        return "no memories here any more"
    left = f", {len(rule.left_out)} left out" if rule.left_out else ""
    over = ", its pinned memories alone over the budget" if rule.pinned_over_budget else ""
    return (
        f"{len(rule.included)} memories{left}, {rule.bytes:,} bytes, {rule.tokens:,} tokens" + over
    )


_DONE = {"missing": "wrote", "out of date": "wrote", "stale": "removed"}
_SHOW = {"missing": "would write", "out of date": "would rewrite", "stale": "would remove"}


def _render_text(rules: RulesPlan, mode: str) -> None:
    for planned in rules.refused:
        why = (
            "is not UTF-8 text; moor writes no block into it"
            if planned.target == "agents"
            else "is not a file moor wrote (no `moor:rules` marker line); moor never "
            "replaces it: move it away or rename it"
        )
        print(f"moor: {planned.path} {why}", file=sys.stderr)
    if mode == "write" and rules.refused:
        print("moor: wrote nothing", file=sys.stderr)
        return
    for planned in rules.files:
        status = planned.status.value
        if planned in rules.refused:
            continue
        if status == "up to date":
            verb = "up to date:"
        elif mode == "write":
            verb = _DONE[status] + (
                " (block removed)" if status == "stale" and not planned.remove else ""
            )
        elif mode == "check":
            verb = f"{status}:"
        else:
            verb = _SHOW[status]
        print(f"{verb} {planned.path} ({_sizes(planned)})")
    if mode == "check" and rules.changes:
        print(f"{len(rules.changes)} rule files need `moor rules --write`")
    elif not rules.files:
        print("no memories with code to compile into rule files")


def _as_json(rules: RulesPlan, mode: str) -> dict[str, Any]:
    return {
        "mode": mode,
        "budget": rules.budget,
        "up_to_date": not rules.changes and not rules.refused,
        "written": mode == "write" and not rules.refused,
        "files": [
            {
                "path": planned.path,
                "target": planned.target,
                "status": planned.status.value,
                "folder": planned.rule.folder if planned.rule else None,
                "paths": list(planned.rule.paths) if planned.rule else [],
                "memories": list(planned.rule.included) if planned.rule else [],
                "left_out": list(planned.rule.left_out) if planned.rule else [],
                "pinned_over_budget": bool(planned.rule and planned.rule.pinned_over_budget),
                "bytes": planned.rule.bytes if planned.rule else 0,
                "tokens": planned.rule.tokens if planned.rule else 0,
            }
            for planned in rules.files
        ],
    }
