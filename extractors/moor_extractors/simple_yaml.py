"""The frontmatter moor writes, composed without YAML's parser.

Almost every memory's frontmatter is the small shape `moor add` and people write: top-level
`key: value` lines and `key:` followed by `- value` items, each value a plain word-like
scalar or a double-quoted string without escapes. For that shape `compose` builds the very
nodes libyaml composes — the same tags (resolved by YAML's own resolver), values, styles and
marks — so everything after composing reads them as it reads YAML's. Any other line
(a comment, a flow list, an escape, a continuation, a non-ASCII character, a key YAML would
not read as a string, …) makes it answer None, and YAML composes the text: the lock's fast
reader falls back to tomllib the same way (memory: frontmatter-fast-path-falls-back-to-yaml).
"""

from __future__ import annotations

import re

from yaml.error import Mark
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

_RESOLVER = Resolver()
_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: (.+))?")
_ITEM_LINE = re.compile(r"( *)- (.+)")
# A double-quoted string of printable ASCII without `"` or a backslash (no escapes).
_QUOTED = re.compile(r'"[ !#-\[\]-~]*"')
# A plain scalar that is plainly one: it starts with a letter, digit, `_`, `.` or `/`, has
# no flow indicator, no quote and no tab, and no `: `, ` #` or final `:` (each would end it).
_PLAIN = re.compile(r"[A-Za-z0-9_./][!#-+\--Z\\^-z|~]*(?: [!#-+\--Z\\^-z|~]+)*")


def compose(text: str) -> MappingNode | None:
    """The nodes YAML composes from `text` (which ends with a newline), or None when `text`
    is not of the simple shape: then YAML must compose it."""
    if not text.isascii() or not text.endswith("\n"):
        return None
    lines = text[:-1].split("\n")
    pairs: list[tuple[Node, Node]] = []
    starts: list[int] = []  # each line's offset in `text`
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    index = 0
    while index < len(lines):
        line, start = lines[index], starts[index]
        key_match = _KEY_LINE.fullmatch(line)
        if key_match is None:
            return None
        key = _scalar(key_match.group(1), start, index, 0)
        if key is None or key.tag != _STR:
            return None  # a key YAML reads as a boolean, a number, null: its own business
        if key_match.group(2) is not None:
            value = _scalar(
                key_match.group(2), start + key_match.start(2), index, key_match.start(2)
            )
            if value is None:
                return None
            pairs.append((key, value))
            index += 1
            continue
        items: list[Node] = []
        indent: str | None = None
        index += 1
        while index < len(lines):
            item_match = _ITEM_LINE.fullmatch(lines[index])
            if item_match is None:
                break
            if indent is None:
                indent = item_match.group(1)
            elif item_match.group(1) != indent:
                return None
            column = item_match.start(2)
            item = _scalar(item_match.group(2), starts[index] + column, index, column)
            if item is None:
                return None
            items.append(item)
            index += 1
        if not items:
            return None  # `key:` alone (null) or followed by something else
        assert indent is not None
        first = items[0].start_mark
        end = _mark(starts[index] if index < len(lines) else len(text), index, 0)
        sequence_start = _mark(first.index - 2, first.line, len(indent))
        pairs.append((key, SequenceNode(_SEQ, items, sequence_start, end, flow_style=False)))
    if not pairs:
        return None
    return MappingNode(
        _MAP, pairs, _mark(0, 0, 0), _mark(len(text), len(lines), 0), flow_style=False
    )


def _scalar(raw: str, index: int, line: int, column: int) -> ScalarNode | None:
    start, end = _mark(index, line, column), _mark(index + len(raw), line, column + len(raw))
    if _QUOTED.fullmatch(raw):
        return ScalarNode(_STR, raw[1:-1], start, end, style='"')
    if _PLAIN.fullmatch(raw) and not raw.endswith(":") and ": " not in raw and " #" not in raw:
        tag: str = _RESOLVER.resolve(ScalarNode, raw, (True, False))  # type: ignore[no-untyped-call]
        return ScalarNode(tag, raw, start, end, style="")  # libyaml's plain style
    return None


class _Mark(Mark):
    """Where a node starts or ends, as libyaml's marks say it: no buffer (made 8 times per
    frontmatter, so with only the three fields that differ)."""

    name = "<unicode string>"
    buffer = None
    pointer = 0

    def __init__(self, index: int, line: int, column: int) -> None:
        self.index, self.line, self.column = index, line, column


_mark = _Mark
