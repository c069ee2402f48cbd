"""What every language shares about definitions: names, spans, and which axis a part feeds.

A language module subclasses `LanguageSpec` and overrides only what its grammar needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import ClassVar

from tree_sitter import Node

from .languages import grammar, new_parser
from .normalise import Dialect, Streams, Table, comment_words, compile_dialect, fields, tokens_of

_LONE_CR = re.compile(rb"\r(?!\n)")


class Part(Enum):
    """Where a child of a definition goes."""

    SIGNATURE = "signature"
    DECORATORS = "decorators"
    BODY = "body"
    DESCEND = "descend"  # split this child's own children (a function bound to a variable)
    SKIP = "skip"


@dataclass
class Parts:
    """A definition's syntax split by axis (doc tokens are already text)."""

    signature: list[tuple[Node, str | None]] = field(default_factory=list)
    decorators: list[tuple[Node, str | None]] = field(default_factory=list)
    body: list[tuple[Node, str | None]] = field(default_factory=list)
    doc: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Span:
    top: Node
    """The outermost node of the definition (decorated_definition, export_statement, …)."""
    first: Node
    """The node the span starts at: `top`, or a preceding attribute that belongs to it."""


@dataclass(frozen=True)
class Variant:
    """What one of several same-named definitions says about itself (`moor_extractors.resolve`)."""

    spelling: str | None = None
    """What goes in `name(…)` to pick it alone: parameter types, a Rust trait; None: nothing."""
    full: str | None = None
    """A longer spelling, for when `spelling` (or its absence) does not tell it apart from
    a namesake: a Rust impl's whole header, `From<&str> for Box<str>`."""
    role: str | None = None
    """A part it plays in one symbol with its namesakes (`property`, `overload`, `cfg`)."""
    secondary: bool = False
    """The bare name means it only where no namesake is other than secondary (a Rust `impl`
    beside the type it is for: `Error` is the struct, `Error(Display)` one impl)."""


class LanguageSpec:
    """How one language's definitions are named, spanned and split into axes."""

    dialect: Dialect
    separator = "."
    comment_types: frozenset[str] = frozenset({"comment"})
    wrappers: frozenset[str] = frozenset()
    """Ancestors that are part of a definition they hold alone (`export`, decorators)."""
    leading: frozenset[str] = frozenset()
    """Preceding siblings that are part of the definition that follows (Rust attributes)."""
    decorators: frozenset[str] = frozenset()
    """Child node types (named or keywords) that go to the `decorators` axis."""
    body_fields: ClassVar[Mapping[str, str]] = {}
    """Definition node type -> the field holding its body, when it is not `body`."""
    kinds: ClassVar[Mapping[str, str]] = {}
    """Definition node type -> kind, where the query's capture name is too coarse."""
    method_containers: frozenset[str] = frozenset({"class"})
    leading_comments_are_doc = True
    name_fields: ClassVar[Mapping[str, str]] = {}
    """Definition node type -> the field holding its own name, when it is not `name`."""
    conditionals: frozenset[str] = frozenset({"if_statement", "try_statement", "match_statement"})
    """Statements whose branches make same-named definitions variants of one symbol."""
    placeless: frozenset[str] = frozenset()
    """Definition node types that are no one's place (`place` axis): members listed inside a
    definition — fields, properties, enum members and variants — and Rust `impl` blocks.
    They were listed later than the rest; were they places, every definition after one
    would follow something new and its bound `place` digest would move (memory:
    members-are-definitions-without-moving-places)."""
    transparent: frozenset[str] = frozenset()
    """Definition node types whose definitions take their places among its container's, as
    they did before it was a definition (a Rust `impl`: its methods follow the items before
    it, as they always did)."""
    cr_ends_lines = False
    """Whether a lone carriage return ends a line (old Mac line endings), as the language's
    own definition says; the grammars count only LF, so such a file is parsed with each
    lone CR read as LF (`tree_bytes`)."""

    def tree_bytes(self, source: bytes) -> bytes:
        """What the grammar is given for `source`: the same length, so every byte offset
        holds (only the rows differ, and they then count lines as the language does)."""
        if self.cr_ends_lines and b"\r" in source:
            text = _LONE_CR.sub(b"\n", source)
            if text != source:  # (CRLF alone is read as it is)
                return text
        return source

    def __init__(self, language: str) -> None:
        self.language = language

    @cached_property
    def table(self) -> Table:
        return compile_dialect(self.dialect, grammar(self.language))

    evidence_min_leaves = 10
    """A body with no more leaf tokens than this (`pass`, `return 2`, `{}`, a delegating
    one-liner, a declaration without an initialiser) proves no rename: in 800 modules of
    the standard library, 11-100 % of function bodies of up to 10 leaves share their exact
    normalised body with another function, 2-10 % of larger ones (memory:
    stub-bodies-are-no-evidence-of-a-rename)."""

    # -- naming -------------------------------------------------------------------------------

    def accept(self, node: Node) -> bool:
        """False for a match that is not a definition of its own (see JavaScript)."""
        return True

    unlists = False
    """Whether `unlisted` can find anything: a language whose listing shrank."""

    def unlisted(self, container: Node, name: str) -> str | None:
        """What `name` inside `container` is, when it was listed by an older moor and is
        no definition now (a lock may still name it); None when nothing of that name was."""
        return None

    def name(self, node: Node, name_node: Node | None) -> str | None:
        if name_node is None or name_node.text is None:
            return None
        return name_node.text.decode("utf-8", "replace")

    def is_place(self, node: Node) -> bool:
        """Whether a definition is the place of what follows it (`placeless`)."""
        return node.type not in self.placeless

    def qualifier(self, ancestor: Node) -> str | None:
        """The name a non-definition ancestor adds to qualified names (Rust `impl`)."""
        return None

    def own_qualifier(self, node: Node) -> str | None:
        """A qualifier the definition carries itself (a Go method's receiver type)."""
        return None

    def kind(self, node: Node, captured: str, container_kind: str | None) -> str:
        kind = self.kinds.get(node.type, captured)
        if kind == "function" and container_kind in self.method_containers:
            return "method"
        return kind

    # -- same-named definitions ---------------------------------------------------------------

    def variant(self, node: Node, span: Span) -> Variant:
        """How this definition differs from, or belongs with, others of its name."""
        return Variant()

    def together(self, variants: list[Variant]) -> bool:
        """Whether definitions sharing a name are one thing to a reader (the bare name
        means all of them), beyond branches of one conditional."""
        return False

    def replaces(self, definitions: list[tuple[Node, Span]]) -> bool:
        """Whether the last of same-named definitions replaces the others, so the bare name
        means it (Python rebinding a name in one block); else each is picked by its ordinal
        only (`f@2`)."""
        return False

    def pasted(self, symbol: str) -> str | None:
        """The qualified name a spelling copied from a language's own syntax or a tool's
        output means (Rust `Type::method`, a stack trace's `Class/method`), or None.
        Purely lexical: `parse_reference` rewrites every reference with it, so one symbol
        has one lock key however it was written. A level written as a string or computed
        key (JavaScript `A."a/b"`, `A.["c::d"]`) is a name as it stands: left alone."""
        if any(char in symbol for char in "\"'`["):
            return None
        dotted = symbol.replace("::", ".").replace("/", ".")
        return dotted if dotted != symbol else None

    def simple_spelling(self, spelling: str) -> str:
        """A spelling as its loosest equal form (`resolve` tries it when no spelling is
        exactly the one given): Java's `java.lang.String` is the `String` the source says."""
        return spelling

    def anchor_matches(self, symbol: str, count: int, head: Callable[[int], str]) -> list[int]:
        """Sites named by an explicit anchor written in their source (none by default)."""
        return []

    def loose_matches(self, symbol: str, qnames: list[str]) -> list[int]:
        """Indexes of `qnames` a symbol names when none is exactly it."""
        return []

    # -- span ---------------------------------------------------------------------------------

    def span(self, node: Node) -> Span:
        top = node
        while (parent := top.parent) is not None and self.wraps(parent, top):
            top = parent
        first = top
        if self.leading:
            # An attribute belongs to the next item, blank lines and comments between or not.
            sibling = top.prev_sibling
            while sibling is not None and (
                sibling.type in self.leading or sibling.type in self.comment_types
            ):
                if sibling.type in self.leading:
                    first = sibling
                sibling = sibling.prev_sibling
        return Span(top, first)

    def doc_comments(self, span: Span) -> list[Node]:
        """The comment block touching the span from above, and comments between attributes."""
        if not self.leading_comments_are_doc:
            return []
        inside: list[Node] = []
        sibling: Node | None = span.first
        while sibling is not None and sibling != span.top:
            if sibling.type in self.comment_types:
                inside.append(sibling)
            sibling = sibling.next_sibling
        above: list[Node] = []
        below, sibling = span.first, span.first.prev_sibling
        while (
            sibling is not None
            and sibling.type in self.comment_types
            and _adjacent(sibling, below)
            and not _trails_code(sibling)
        ):
            above.append(sibling)
            below, sibling = sibling, sibling.prev_sibling
        return above[::-1] + inside

    def wraps(self, parent: Node, child: Node) -> bool:
        return parent.type in self.wrappers

    # -- axes ---------------------------------------------------------------------------------

    def axis_tokens(self, node: Node, span: Span, streams: Streams) -> dict[str, list[str]]:
        """Token streams of the signature, decorators, body and doc axes."""
        parts = self.parts(node, span)
        dialect, table = self.dialect, self.table
        signature, _ = tokens_of(streams, dialect, table, parts.signature)
        decorators, _ = tokens_of(streams, dialect, table, parts.decorators)
        body, docstrings = tokens_of(streams, dialect, table, parts.body)
        return {
            "signature": signature,
            "decorators": decorators,
            "body": body,
            "doc": parts.doc + docstrings,
        }

    alias_pattern = re.compile(
        r"\A\s*(?:export\s+)?(?:const\s+|let\s+|var\s+)?[\w$]+\s*=\s*([\w$.]+)\s*;?\s*\Z"
    )
    """A definition whose whole text is `Old = New` (a compatibility alias left behind by
    a rename): group 1 is the name it stands for."""

    def alias_of(self, text: str) -> str | None:
        match = self.alias_pattern.match(text)
        return match.group(1) if match else None

    def carries_evidence(self, body: list[str]) -> bool:
        """Whether a body stream is distinctive enough to establish a rename by itself."""
        leaves = sum(1 for token in body if token != ")" and not token.startswith("("))
        return leaves > self.evidence_min_leaves

    def file_tokens(self, source: bytes, root: Node | None = None) -> list[str]:
        """A whole file's content: its code tokens, docstrings included. `root`: the root of
        a parse of `source` made already."""
        if root is None:
            root = new_parser(self.language).parse(self.tree_bytes(source)).root_node
        tokens, _ = tokens_of(
            Streams(source), self.dialect, self.table, [(root, None)], split_docstrings=False
        )
        return tokens

    def parts(self, node: Node, span: Span) -> Parts:
        parts = Parts()
        sibling: Node | None = span.first
        while sibling is not None and sibling != span.top:
            if sibling.type in self.leading:
                parts.decorators.append((sibling, None))
            sibling = sibling.next_sibling
        self._split_path(span.top, node, parts)
        self._split(node, parts, self.name_fields.get(node.type, "name"))
        for comment in self.doc_comments(span):
            parts.doc.extend(comment_words((comment.text or b"").decode("utf-8", "replace")))
        return parts

    def classify(self, parent: Node, child: Node, field_name: str | None) -> Part:
        if child.type in self.decorators:
            return Part.DECORATORS
        if field_name == self.body_fields.get(parent.type, "body"):
            return Part.BODY
        return Part.SIGNATURE

    def _split_path(self, top: Node, node: Node, parts: Parts) -> None:
        """Children of the wrappers between `top` and the definition node itself."""
        ancestor = top
        while ancestor != node:
            inner = ancestor.child_with_descendant(node)
            for child, field_name in fields(ancestor):
                if inner is not None and child == inner:
                    continue
                self._place(ancestor, child, field_name, parts)
            if inner is None:
                return
            ancestor = inner

    def _split(self, node: Node, parts: Parts, own_name: str | None = None) -> None:
        # The definition's own name is left out of its signature: the reference already
        # names it, and a rename must not read as a signature change once the renamed
        # definition is found (relocation compares every other watched axis).
        for child, field_name in fields(node):
            if own_name is not None and field_name == own_name and child.is_named:
                continue
            self._place(node, child, field_name, parts)

    def _place(self, parent: Node, child: Node, field_name: str | None, parts: Parts) -> None:
        if child.type in self.comment_types or child.type in self.dialect.skip:
            return
        if not child.is_named and child.type in self.dialect.drop:
            return
        part = self.classify(parent, child, field_name)
        if part is Part.DESCEND:
            self._split(child, parts)
        elif part is Part.SIGNATURE:
            parts.signature.append((child, field_name))
        elif part is Part.DECORATORS:
            parts.decorators.append((child, field_name))
        elif part is Part.BODY:
            parts.body.append((child, field_name))


def _adjacent(upper: Node, lower: Node) -> bool:
    """No blank line between two siblings: a comment block must touch what it documents."""
    end = upper.end_point
    # A line comment may own its newline and so end at column 0 of the next row.
    last_row = end.row - 1 if end.column == 0 and end.row > upper.start_point.row else end.row
    return lower.start_point.row - last_row <= 1


def _trails_code(comment: Node) -> bool:
    """A comment on the same line as preceding code documents that code, not what follows."""
    before = comment.prev_sibling
    return before is not None and before.end_point.row == comment.start_point.row
