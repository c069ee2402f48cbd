"""Plain text work on an open memory buffer: the reason line, and the smallest whole-line
edit turning one text into another. No protocol types, no server: testable alone.

The reason line is how a person types the reason of an action that needs one (reaffirm,
forget, supersede, restore) in a client with no input box
(memories/lsp-reaffirm-asks-for-its-reason.md): the server inserts one of

    <!-- moor reaffirm because:  -->
    <!-- moor forget because:  -->
    <!-- moor supersede by memories/new.md because:  -->
    <!-- moor restore because:  -->

under the memory's frontmatter in the open buffer (an HTML comment: invisible when the
Markdown is rendered, outside the frontmatter moor parses), the person writes the reason
after `because:`, and the code action offered then runs the action the line names with it
and removes the line. It lives in the buffer only: a memory saved with it is refused (it
would become part of the memory's text and of its content hash).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from moor_lsp.positions import code_units

REASONED = ("reaffirm", "forget", "supersede", "restore")  # the actions a reason line names
# The closing `-->` is optional: a reason typed over it still counts.
_REASON = re.compile(
    r"^<!-- moor (?P<action>reaffirm|forget|restore|supersede by (?P<by>\S(?:.*?\S)?))"
    r" because:(?P<why>.*?)(?:-->)?[ \t]*$"
)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_FRONTMATTER = re.compile(r"---[ \t]*")


def lines_with_ends(text: str) -> list[str]:
    """The text's lines, each with its own line ending (the last may have none)."""
    return _LINE.findall(text)


def _bare(line: str) -> str:
    return line.rstrip("\r\n")


def reason_head(action: str, by: str | None = None) -> str:
    """The reason line up to where the reason goes (`by`: supersede's replacing memory)."""
    assert action in REASONED and (by is None) == (action != "supersede"), (action, by)
    named = f"supersede by {by}" if by is not None else action
    return f"<!-- moor {named} because:"


def reason_template(action: str, by: str | None = None) -> str:
    """The reason line as inserted, the reason not written yet."""
    return reason_head(action, by) + "  -->"


REASON_TEMPLATE = reason_template("reaffirm")


@dataclass(frozen=True)
class ReasonLine:
    line: int  # 0-based
    reason: str  # as written, stripped; "" while not written yet
    action: str = "reaffirm"  # one of REASONED
    by: str | None = None  # supersede's replacing memory, as written

    @property
    def head(self) -> str:
        return reason_head(self.action, self.by)


def find_reason(text: str) -> ReasonLine | None:
    """The first reason line in the text, if any."""
    for number, line in enumerate(lines_with_ends(text)):
        match = _REASON.match(_bare(line).lstrip("\ufeff"))
        if match is not None:
            action = match.group("action").split(" ", 1)[0]
            return ReasonLine(number, match.group("why").strip(), action, match.group("by"))
    return None


def without_line(text: str, line: int) -> str:
    lines = lines_with_ends(text)
    return "".join(lines[:line] + lines[line + 1 :])


def with_reason_line(text: str, template: str = REASON_TEMPLATE) -> tuple[str, int]:
    """The text with an empty reason line (`template`) under its frontmatter (at the end
    when there is none), and that line's 0-based number."""
    lines = lines_with_ends(text)
    at = len(lines)
    if lines and _FRONTMATTER.fullmatch(_bare(lines[0]).lstrip("\ufeff")):
        for number in range(1, len(lines)):
            if _FRONTMATTER.fullmatch(_bare(lines[number])):
                at = number + 1
                break
    ending = "\n"
    if lines and lines[0].endswith("\r\n"):
        ending = "\r\n"
    if at == len(lines) and lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += ending
    lines.insert(at, template + ending)
    return "".join(lines), at


@dataclass(frozen=True)
class LineEdit:
    """Replace from (start_line, 0) to (end_line, end_character) with `text`; positions in
    the client's encoding."""

    start_line: int
    end_line: int
    end_character: int
    text: str


def line_edit(old: str, new: str, encoding: str) -> LineEdit | None:
    """The smallest run of whole lines to replace so that `old` reads `new` (None: equal)."""
    if old == new:
        return None
    before, after = lines_with_ends(old), lines_with_ends(new)
    prefix = 0
    while prefix < min(len(before), len(after)) and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(before), len(after)) - prefix and before[-1 - suffix] == after[-1 - suffix]
        # A kept last line must end the same way in both, so ends are whole lines.
    ):
        suffix += 1
    replaced_end = len(before) - suffix
    if replaced_end < len(before):
        end_line, end_character = replaced_end, 0
    else:  # up to the end of the text, which may not end with a line break
        end_line = sum(1 for line in before if line.endswith(("\n", "\r")))
        last = before[-1] if before and not before[-1].endswith(("\n", "\r")) else ""
        end_character = code_units(last, encoding)
    return LineEdit(prefix, end_line, end_character, "".join(after[prefix : len(after) - suffix]))
