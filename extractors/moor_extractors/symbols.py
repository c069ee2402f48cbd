"""Definitions in one file, and the facts of each (DESIGN §2, §4).

`ParsedFile.sites()` lists definitions with the grammar's own tags query and names them by
containment; `ParsedFile.facts()` normalises one definition on demand. Nothing is normalised
up front: a check usually needs one or two definitions of a parsed file.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache

from tree_sitter import Node, QueryCursor, Tree

from .digest import digest_bytes, digest_tokens
from .lang_base import LanguageSpec, Span
from .languages import definition_query, new_parser
from .model import AXES, DefinitionSite, Facts
from .normalise import Streams

NORMALISER_VERSION = 1
"""Bump whenever any axis's token stream changes for the same source."""

_SPECS: dict[str, tuple[str, str]] = {
    "python": ("lang_python", "SPEC"),
    "javascript": ("lang_javascript", "SPEC"),
    "typescript": ("lang_typescript", "SPEC"),
    "tsx": ("lang_typescript", "TSX_SPEC"),
    "go": ("lang_go", "SPEC"),
    "rust": ("lang_rust", "SPEC"),
    "java": ("lang_java", "SPEC"),
    "markdown": ("lang_markdown", "SPEC"),
}
_EMPTY = digest_tokens(())
_ROOT_PLACE = "^"


@cache
def _spec(language: str) -> LanguageSpec:
    module_name, attribute = _SPECS[language]
    spec: LanguageSpec = getattr(importlib.import_module(f".{module_name}", __package__), attribute)
    return spec


@dataclass(frozen=True)
class _Definition:
    node: Node
    span: Span
    site: DefinitionSite
    place: str


class ParsedFile:
    """One parsed source file: its definitions, and their facts on demand."""

    def __init__(self, language: str, source: bytes, tree: Tree, spec: LanguageSpec) -> None:
        self.language = language
        self.source = source
        self.tree = tree
        self._spec = spec
        self._definitions: dict[DefinitionSite, _Definition] | None = None
        self._streams: Streams | None = None

    def sites(self) -> tuple[DefinitionSite, ...]:
        """Every definition, in document order (duplicate qualified names included)."""
        return tuple(self._index())

    def facts(self, site: DefinitionSite) -> Facts:
        """The digests of every axis for one definition listed by `sites()`."""
        definition = self._index()[site]
        tokens = self._spec.axis_tokens(definition.node, definition.span, self._shared())
        axes = {axis: digest_tokens(stream) for axis, stream in tokens.items()}
        axes["kind"] = digest_tokens([site.kind])
        axes["place"] = digest_tokens([definition.place])
        axes["text"] = digest_bytes(self.source[site.start_byte : site.end_byte])
        return Facts(kind=site.kind, axes={axis: axes.get(axis, _EMPTY) for axis in AXES})

    def source_text(self, site: DefinitionSite) -> str:
        return self.source[site.start_byte : site.end_byte].decode("utf-8", "replace")

    def _index(self) -> dict[DefinitionSite, _Definition]:
        if self._definitions is None:
            self._definitions = _list_definitions(self._spec, self.language, self.tree)
        return self._definitions

    def _shared(self) -> Streams:
        """The writers' shared state: what one `facts()` wrote, the next need not write."""
        if self._streams is None:
            kinds = frozenset(definition.node.kind_id for definition in self._index().values())
            self._streams = Streams(self.source, kinds)
        return self._streams


def parse_source(language: str, source: bytes) -> ParsedFile:
    """Parse `source`; KeyError for a language moor has no grammar for."""
    spec = _spec(language)
    return ParsedFile(language, source, new_parser(language).parse(source), spec)


def file_facts(language: str | None, source: bytes) -> Facts:
    """A whole file: `body` is its normalised content, `text` its bytes."""
    body = _text_lines(source) if language is None else _spec(language).file_tokens(source)
    axes = {axis: _EMPTY for axis in AXES}
    axes["kind"] = digest_tokens(["file"])
    axes["body"] = digest_tokens(body)
    axes["text"] = digest_bytes(source)
    return Facts(kind="file", axes=axes)


def _text_lines(source: bytes) -> list[str]:
    """A file in no known language: its non-blank lines, trailing spaces and line ends dropped.

    Indentation is kept: in the formats moor cannot parse (YAML, Makefiles) it is meaning.
    """
    text = source.decode("utf-8", "replace")
    return [line.rstrip() for line in text.splitlines() if line.strip()]


@dataclass
class _Found:
    node: Node
    name: str
    captured: str


def _list_definitions(
    spec: LanguageSpec, language: str, tree: Tree
) -> dict[DefinitionSite, _Definition]:
    found = _query_definitions(spec, language, tree.root_node)
    index: dict[int, tuple[str, str]] = {}  # node id -> (qualified name, kind)
    last_in: dict[int, str] = {}  # container node id (0: the file) -> last qualified name
    result: dict[DefinitionSite, _Definition] = {}
    for item in found:
        container, qualifiers = _container(spec, item.node, index)
        prefix = [index[container.id][0]] if container is not None else []
        own = spec.own_qualifier(item.node)
        parts = [*prefix, *qualifiers, *([own] if own else []), item.name]
        qname = spec.separator.join(parts)
        container_kind = index[container.id][1] if container is not None else None
        kind = spec.kind(item.node, item.captured, container_kind)
        index[item.node.id] = (qname, kind)
        span = spec.span(item.node)
        site = _site(qname, kind, span)
        key = container.id if container is not None else 0
        result[site] = _Definition(item.node, span, site, last_in.get(key, _ROOT_PLACE))
        last_in[key] = qname
    return result


def _query_definitions(spec: LanguageSpec, language: str, root: Node) -> list[_Found]:
    seen: set[tuple[int, int]] = set()
    found: list[_Found] = []
    for _, captures in QueryCursor(definition_query(language)).matches(root):
        names = captures.get("name")
        name_node = names[0] if names else None
        for capture, nodes in captures.items():
            if not capture.startswith("definition."):
                continue
            node = nodes[0]
            key = (node.id, name_node.id if name_node is not None else 0)
            if key in seen or not spec.accept(node):
                continue
            seen.add(key)
            name = spec.name(node, name_node)
            if name:
                found.append(_Found(node, name, capture.removeprefix("definition.")))
    found.sort(key=lambda item: (item.node.start_byte, -item.node.end_byte))
    return found


def _container(
    spec: LanguageSpec, node: Node, index: dict[int, tuple[str, str]]
) -> tuple[Node | None, list[str]]:
    """The nearest enclosing definition, and qualifiers met on the way (innermost last)."""
    qualifiers: list[str] = []
    ancestor = node.parent
    while ancestor is not None:
        if ancestor.id in index:
            break
        qualifier = spec.qualifier(ancestor)
        if qualifier:
            qualifiers.append(qualifier)
        ancestor = ancestor.parent
    qualifiers.reverse()
    return ancestor, qualifiers


def _site(qname: str, kind: str, span: Span) -> DefinitionSite:
    start = span.first.start_point
    end = span.top.end_point
    # A node that owns its final newline ends at column 0 of the following row.
    end_row = end.row if end.column > 0 or end.row == start.row else end.row - 1
    return DefinitionSite(
        qname=qname,
        kind=kind,
        line=start.row + 1,
        end_line=end_row + 1,
        start_byte=span.first.start_byte,
        end_byte=span.top.end_byte,
        has_error=span.top.has_error or span.first.has_error,
    )
