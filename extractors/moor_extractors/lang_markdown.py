"""Markdown: a definition is a heading's section, named by its breadcrumb (`Storage > Journal`).

A section's content is compared as words: re-wrapping a paragraph or changing blank lines
does not change what it says.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from .lang_base import LanguageSpec, Span
from .normalise import Dialect, Streams

_CLOSING_HASHES = re.compile(r"(?:^|\s+)#+\s*$")


def _heading(section: Node) -> Node | None:
    first = section.named_children[0] if section.named_child_count else None
    return first if first is not None and first.type == "atx_heading" else None


def heading_text(heading: Node) -> str:
    content = heading.child_by_field_name("heading_content")
    if content is None or content.text is None:
        return ""
    return _CLOSING_HASHES.sub("", content.text.decode("utf-8", "replace")).strip()


class MarkdownSpec(LanguageSpec):
    dialect = Dialect(skip=frozenset())
    separator = " > "

    def accept(self, node: Node) -> bool:
        return _heading(node) is not None

    def name(self, node: Node, name_node: Node | None) -> str | None:
        heading = _heading(node)
        return heading_text(heading) if heading is not None else None

    def kind(self, node: Node, captured: str, container_kind: str | None) -> str:
        return "section"

    def span(self, node: Node) -> Span:
        return Span(node, node)

    def axis_tokens(self, node: Node, span: Span, streams: Streams) -> dict[str, list[str]]:
        heading = _heading(node)
        assert heading is not None  # accept() admitted only headed sections
        level = heading.named_children[0].type  # atx_h2_marker: the heading's level
        content = streams.source[heading.end_byte : node.end_byte].decode("utf-8", "replace")
        return {
            "signature": [level, heading_text(heading)],
            "decorators": [],
            "body": content.split(),
            "doc": [],
        }

    def file_tokens(self, source: bytes, root: Node | None = None) -> list[str]:
        return source.decode("utf-8", "replace").split()

    def loose_matches(self, symbol: str, qnames: list[str]) -> list[int]:
        """A breadcrumb may leave out leading headings (`Storage > Journal` finds
        `Architecture > Storage > Journal`)."""
        suffix = self.separator + symbol
        return [index for index, qname in enumerate(qnames) if qname.endswith(suffix)]


SPEC = MarkdownSpec("markdown")
