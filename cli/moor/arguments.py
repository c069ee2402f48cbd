"""Argument types shared by the commands."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def at_least(minimum: int, unit: str = "") -> Callable[[str], int]:
    """An argparse type: a whole number of at least `minimum` (`unit` names what it counts)."""
    counted = f" {unit}" if unit else ""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number{counted}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum}{counted} or more")
        return value

    return parse


def add_format(
    parser: argparse.ArgumentParser, choices: tuple[str, ...] = ("text", "json")
) -> None:
    """`--format text|json`, as every command takes it (docs/cli.md, "JSON output"), and
    `--json`, the older spelling of `--format json`."""
    parser.add_argument(
        "--format", choices=choices, default="text", help="text for a person, json for a program"
    )
    parser.add_argument(
        "--json", dest="format", action="store_const", const="json", help="--format json"
    )


def add_trust(parser: argparse.ArgumentParser) -> None:
    """`--trust`: the person's word that this workspace's declared commands may run (custom
    anchors); `MOOR_TRUST=1` and `moor trust` say it too. Never read from the repository."""
    parser.add_argument(
        "--trust",
        action="store_true",
        help="run the workspace's declared anchor commands (trust it for this run)",
    )
