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


def add_format(parser: argparse.ArgumentParser) -> None:
    """`--format text|json`, as every command that can answer in JSON takes it."""
    parser.add_argument("--format", choices=("text", "json"), default="text")
