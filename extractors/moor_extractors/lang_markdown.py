"""Markdown: a definition is a heading's section, named by its breadcrumb (`Storage > Journal`).

A section's content is compared as words: re-wrapping a paragraph or changing blank lines
does not change what it says.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tree_sitter import Node

from .lang_base import LanguageSpec, Span
from .normalise import Dialect, Streams

_CLOSING_HASHES = re.compile(r"(?:^|\s+)#+\s*$")
# What a reader does not see of a heading: HTML tags (`<a id="oom"></a>`), code and
# emphasis markers, and the targets of links and images.
_TAG = re.compile(r"<[^>\n]*>")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKERS = re.compile(r"`+|(?<!\w)[*_]{1,3}|[*_]{1,3}(?!\w)")
_WHITESPACE = re.compile(r"\s+")
# GitHub's heading anchors keep letters, digits, `-`, `_` and spaces (then hyphens).
_NOT_SLUG = re.compile(r"[^\w\- ]")


def _heading(section: Node) -> Node | None:
    first = section.named_children[0] if section.named_child_count else None
    return first if first is not None and first.type == "atx_heading" else None


def heading_text(heading: Node) -> str:
    content = heading.child_by_field_name("heading_content")
    if content is None or content.text is None:
        return ""
    return _CLOSING_HASHES.sub("", content.text.decode("utf-8", "replace")).strip()


def visible_text(text: str) -> str:
    """A heading as a reader sees it rendered: `## <a id="x"></a> Use `moor` *now*` is
    `Use moor now`."""
    text = _LINK.sub(r"\1", _TAG.sub("", text))
    return _WHITESPACE.sub(" ", _MARKERS.sub("", text)).strip()


def slug(text: str) -> str:
    """GitHub's anchor for a heading's visible text (`OutOfMemoryError when Foo …` is
    `outofmemoryerror-when-foo-`)."""
    return _NOT_SLUG.sub("", text.lower()).replace(" ", "-")


class MarkdownSpec(LanguageSpec):
    cr_ends_lines = True  # CommonMark: a line ending is LF, CR or CRLF
    dialect = Dialect(skip=frozenset())
    separator = " > "

    def accept(self, node: Node) -> bool:
        return _heading(node) is not None

    def name(self, node: Node, name_node: Node | None) -> str | None:
        heading = _heading(node)
        return visible_text(heading_text(heading)) if heading is not None else None

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
            "signature": [level],  # its text is its name, which the reference holds
            "decorators": [],
            "body": content.split(),
            "doc": [],
        }

    def file_tokens(self, source: bytes, root: Node | None = None) -> list[str]:
        return source.decode("utf-8", "replace").split()

    def loose_matches(self, symbol: str, qnames: list[str]) -> list[int]:
        """A breadcrumb may leave out leading headings (`Storage > Journal` finds
        `Architecture > Storage > Journal`), be written with the headings' markup, or be
        one heading's GitHub anchor (`#outofmemoryerror-when-foo`)."""
        seen = self.separator.join(visible_text(level) for level in symbol.split(self.separator))
        exact = [index for index, qname in enumerate(qnames) if qname == seen]
        if exact:
            return exact
        suffix = self.separator + seen
        found = [index for index, qname in enumerate(qnames) if qname.endswith(suffix)]
        if found or self.separator in symbol:
            return found
        anchor = symbol.lower().removeprefix("#")
        return [
            index
            for index, qname in enumerate(qnames)
            if slug(qname.rsplit(self.separator, 1)[-1]) in (anchor, anchor + "-")
        ]

    def anchor_matches(self, symbol: str, count: int, head: Callable[[int], str]) -> list[int]:
        """A heading's explicit HTML anchor (`## <a id="oom"></a> OutOfMemoryError …`),
        written as `#oom` or `oom`: the id a link to it uses."""
        if self.separator in symbol:
            return []
        wanted = symbol.removeprefix("#")
        return [index for index in range(count) if wanted in _EXPLICIT_ANCHOR.findall(head(index))]


# `<a id="x">`, `<a name='x'>`, `<span id=x>`: the ids a heading's HTML gives it.
_EXPLICIT_ANCHOR = re.compile(r"<[A-Za-z][\w-]*\s[^>]*?\b(?:id|name)\s*=\s*[\"']?([^\"'\s>]+)")

SPEC = MarkdownSpec("markdown")
