"""Token streams from syntax trees (docs/memories.md, *Axes*): comments and whitespace
dropped, structure kept.

A node is written as `(type`, its children, `)`; a leaf as its text; an anonymous token
(keyword, operator) as itself, except punctuation that the nesting already carries. A child
reached through a grammar field is labelled with it (`left:a`), so dropping punctuation never
merges two different shapes (`[a; 3]` and `[a, 3]` in Rust differ by the field `length`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tree_sitter import Language, Node

# (writer, node, field) -> writes the node's tokens itself instead of the generic walk.
Special = Callable[["TokenWriter", Node, "str | None"], None]
# For a node of a docstring-bearing type: the docstring's text, or None when it is code.
DocstringProbe = Callable[[Node, bytes], "str | None"]

PUNCTUATION = frozenset({",", ";", "(", ")", "[", "]", "{", "}"})


@dataclass(frozen=True)
class Dialect:
    """How one language's syntax tree becomes tokens."""

    skip: frozenset[str]
    """Named node types that never carry code: comments, line continuations."""
    elide: frozenset[str] = frozenset()
    """Wrappers written without a marker (redundant parentheses): the nesting keeps order."""
    drop: frozenset[str] = PUNCTUATION
    keep_punctuation_in: frozenset[str] = frozenset()
    """Parents whose punctuation is content (macro token trees)."""
    rename: Mapping[str, str] = field(default_factory=dict)
    """Node types that spell the same construct (`a, b` and `(a, b)` are one tuple)."""
    special: Mapping[str, Special] = field(default_factory=dict)
    leaves: Mapping[str, Callable[[str], str]] = field(default_factory=dict)
    """Canonical text of a named leaf (numeric literal forms)."""
    docstring_types: frozenset[str] = frozenset()
    docstring: DocstringProbe | None = None
    gaps: frozenset[str] = frozenset()
    """Node types whose children leave code text outside every leaf (Python's format
    specifiers). Measured over the stdlib and sample projects in every language: elsewhere
    the only such text is inside string literals, which are written from their own text."""


# What the walk does with a node, by grammar symbol id.
_SKIP, _TOKEN, _PUNCT, _NODE, _ELIDE, _SPECIAL, _DOCSTRING, _GAPPY = range(8)


@dataclass(frozen=True)
class Table:
    """A dialect resolved against one grammar's symbol ids (the walk's hot loop uses ints)."""

    actions: list[int]
    labels: list[str]
    keep_punctuation_in: frozenset[int]
    special: dict[int, Special]
    leaves: dict[int, Callable[[str], str]]


def compile_dialect(dialect: Dialect, language: Language) -> Table:
    actions: list[int] = []
    labels: list[str] = []
    special: dict[int, Special] = {}
    leaves: dict[int, Callable[[str], str]] = {}
    keep: set[int] = set()
    for kind_id in range(language.node_kind_count):
        name = language.node_kind_for_id(kind_id) or ""
        named = language.node_kind_is_named(kind_id)
        labels.append(name if not named else "(" + dialect.rename.get(name, name))
        actions.append(_action(dialect, name, named))
        if name in dialect.special and named:
            special[kind_id] = dialect.special[name]
        if name in dialect.leaves and named:
            leaves[kind_id] = dialect.leaves[name]
        if name in dialect.keep_punctuation_in:
            keep.add(kind_id)
    actions.append(_NODE)  # stands for the ERROR symbol, whose id is past the table
    labels.append("(ERROR")
    return Table(actions, labels, frozenset(keep), special, leaves)


def _action(dialect: Dialect, name: str, named: bool) -> int:
    if not named:
        return _PUNCT if name in dialect.drop else _TOKEN
    if name in dialect.skip:
        return _SKIP
    if name in dialect.special:
        return _SPECIAL
    if name in dialect.gaps:
        return _GAPPY
    if name in dialect.elide:
        return _ELIDE
    if name in dialect.docstring_types and dialect.docstring is not None:
        return _DOCSTRING
    return _NODE


# A recorded stream: the lists it was written into, and its token and docstring ranges in
# them (sliced only when replayed).
_Recorded = tuple[list[str], int, int, list[str], int, int]
_Key = tuple[int, "str | None"]  # (node id, field it fills)
# What a subtree's stream is a function of, across versions of a file: its parent's
# symbol (a block's docstring depends on what holds the block), its own symbol, its field
# and its bytes (as a digest).
_ContentKey = tuple[int, int, "str | None", bytes]
_Carried = tuple[tuple[str, ...], tuple[str, ...]]  # a stream's tokens and docstrings
# Subtrees smaller than this are written again rather than looked up by content: hashing
# them would cost about as much as walking them.
CONTENT_KEY_MIN_BYTES = 64


class Streams:
    """What the writers of one parsed tree share, so that no subtree is written twice.

    A class's body holds its methods, and a check often asks for both. The stream of every
    subtree written as a root (a definition's parts) or met directly under a definition node
    is recorded where it is first written, and replayed, whichever comes first, when it is
    met again. The stream of a subtree depends only on the subtree and the field it fills
    (docstrings are recognised from the tree, not from where the walk began), so a replay
    is exact. Keys are node ids, which are unique within one tree only. A recording points
    into the list it was written to: token lists handed out are read, never changed.

    Large subtrees are also keyed by content (`_ContentKey`), so that the streams of the
    next version of the file can start from `carried()`: after an edit to one method, a
    class of 200 methods is written again from 199 replays and one walk.
    """

    def __init__(
        self,
        source: bytes,
        definition_kinds: frozenset[int] = frozenset(),
        carried: dict[_ContentKey, _Carried] | None = None,
    ) -> None:
        self.source = source
        self.definition_kinds = definition_kinds
        """Symbol ids of the nodes whose children's streams are recorded."""
        self.recorded: dict[_Key, _Recorded] = {}
        self._earlier = carried or {}  # from the previous version of the file
        self._by_content: dict[_ContentKey, _Key] = {}  # what this version recorded
        self._kept: dict[_ContentKey, _Carried] = {}  # what it replayed from `_earlier`

    def content_key(self, node: Node, parent: int, field_name: str | None) -> _ContentKey | None:
        if node.end_byte - node.start_byte < CONTENT_KEY_MIN_BYTES or node.has_error:
            return None  # small, or parsed by error recovery, which is not bound to its bytes
        digest = hashlib.sha256(self.source[node.start_byte : node.end_byte]).digest()
        return (parent, node.kind_id, field_name, digest)

    def carried(self) -> dict[_ContentKey, _Carried]:
        """The large streams this version wrote or replayed, for the next version."""
        found = dict(self._kept)
        for content, key in self._by_content.items():
            tokens, start, end, docs, doc_start, doc_end = self.recorded[key]
            found[content] = (tuple(tokens[start:end]), tuple(docs[doc_start:doc_end]))
        return found


class TokenWriter:
    """Collects the tokens of one axis; docstrings met on the way go to `docs` instead."""

    def __init__(
        self,
        streams: Streams,
        dialect: Dialect,
        table: Table,
        *,
        split_docstrings: bool = True,
        placeholders: Mapping[int, str] | None = None,
    ) -> None:
        self.streams = streams
        self.source = streams.source
        self.dialect = dialect
        self.table = table
        self.tokens: list[str] = []
        self.docs: list[str] = []
        self._split_docstrings = split_docstrings and dialect.docstring is not None
        # Recorded streams have their docstrings split out: a writer that keeps them in (a
        # whole file's) neither records nor replays.
        self._recorded_under = streams.definition_kinds if split_docstrings else frozenset()
        self.placeholders = placeholders or {}
        """Leaves (by node id) written as a placeholder instead of their text: a renamed
        bound variable (catch_variables). A writer with placeholders neither records nor
        replays: the same subtree is written differently outside them."""
        if self.placeholders:
            self._recorded_under = frozenset()

    def renaming(self, placeholders: Mapping[int, str]) -> TokenWriter:
        """A writer over the same tree that writes the given leaves as placeholders."""
        return TokenWriter(
            self.streams,
            self.dialect,
            self.table,
            split_docstrings=self._split_docstrings,
            placeholders=placeholders,
        )

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def add(self, token: str, field_name: str | None = None) -> None:
        self.tokens.append(token if field_name is None else f"{field_name}:{token}")

    def open(self, node_type: str, field_name: str | None = None) -> None:
        """Start a node written by hand; close it with `add(")")`."""
        self.tokens.append("(" + (node_type if field_name is None else f"{field_name}:{node_type}"))

    def write(self, root: Node, field_name: str | None = None) -> None:
        """Write `root` and everything under it, or replay it if it was written before."""
        if not self._recorded_under:
            self._walk(root, field_name)
            return
        # A root is recorded whatever its parent (finding a node's parent costs a descent
        # from the tree's root): roots are few, and most are a definition's parts.
        key = (root.id, field_name)
        parent = root.parent
        content = self.streams.content_key(root, parent.kind_id if parent else -1, field_name)
        if not self._replay(key, content):
            start, doc_start = len(self.tokens), len(self.docs)
            self._walk(root, field_name)
            self._record(key, start, doc_start, content)

    def _walk(self, root: Node, field_name: str | None) -> None:
        """The generic walk: iterative (deep expressions are common) and in one loop over
        symbol ids. This loop is the cost of `facts()` beyond the parse, so it keeps to
        locals and tests the commonest actions first."""
        table = self.table
        actions, labels, tokens = table.actions, table.labels, self.tokens
        append = tokens.append
        keep, leaves, special = table.keep_punctuation_in, table.leaves, table.special
        source = self.source
        recorded_under = self._recorded_under
        error = len(actions) - 1  # stands for every id past the table (the ERROR symbol)
        cursor = root.walk()
        # Per node descended into: the token closing it ("" for an elided wrapper), its
        # symbol, and the field its children inherit (an elided wrapper passes its own down).
        stack: list[tuple[str, int, str | None]] = []
        # Recordings under way: depth of the node in `stack`, its key, where its tokens start.
        pending: list[tuple[int, _Key, int, int, _ContentKey | None]] = []
        content_key = self.streams.content_key
        placeholders = self.placeholders
        node, name, parent = root, field_name, -1
        while True:
            kind = node.kind_id
            if kind > error:
                kind = error
            action = actions[kind]
            if action == _NODE or (action == _DOCSTRING and not self._docstring(node)):
                if cursor.goto_first_child():
                    # Directly under a definition: replay the node if it was written before.
                    key = (node.id, name) if parent in recorded_under else None
                    content = None if key is None else content_key(node, parent, name)
                    if key is None or not self._replay(key, content):
                        if key is not None:
                            pending.append((len(stack), key, len(tokens), len(self.docs), content))
                        append(labels[kind] if name is None else f"({name}:{labels[kind][1:]}")
                        stack.append((")", kind, None))
                        parent = kind
                        node = cursor.node  # type: ignore[assignment]
                        name = cursor.field_name
                        continue
                    cursor.goto_parent()
                else:
                    if placeholders and node.id in placeholders:
                        text = placeholders[node.id]
                    else:
                        text = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
                    if kind in leaves:
                        text = leaves[kind](text)
                    append(text if name is None else f"{name}:{text}")
            elif action == _TOKEN or (action == _PUNCT and parent in keep):
                append(labels[kind] if name is None else f"{name}:{labels[kind]}")
            elif action == _ELIDE:
                if cursor.goto_first_child():
                    stack.append(("", kind, name))
                    parent = kind
                    node = cursor.node  # type: ignore[assignment]
                    name = cursor.field_name or name
                    continue
            elif action == _SPECIAL:
                special[kind](self, node, name)
            elif action == _GAPPY:
                self._write_with_gaps(node, name)
            while True:
                if not stack:
                    return
                if cursor.goto_next_sibling():
                    node = cursor.node  # type: ignore[assignment]
                    name = cursor.field_name or stack[-1][2]
                    break
                cursor.goto_parent()
                closing = stack.pop()[0]
                if closing:
                    append(closing)
                if pending and pending[-1][0] == len(stack):
                    _, key, start, doc_start, content = pending.pop()
                    self._record(key, start, doc_start, content)
                parent = stack[-1][1] if stack else -1

    def _replay(self, key: _Key, content: _ContentKey | None = None) -> bool:
        streams = self.streams
        recorded = streams.recorded.get(key)
        if recorded is None and content is not None:
            earlier = streams._earlier.get(content)
            if earlier is not None:
                streams._kept[content] = earlier
                tokens, docs = list(earlier[0]), list(earlier[1])
                recorded = (tokens, 0, len(tokens), docs, 0, len(docs))
                streams.recorded[key] = recorded
        if recorded is None:
            return False
        tokens, start, end, docs, doc_start, doc_end = recorded
        self.tokens.extend(tokens[start:end])
        if doc_end > doc_start:
            self.docs.extend(docs[doc_start:doc_end])
        return True

    def _record(
        self, key: _Key, start: int, doc_start: int, content: _ContentKey | None = None
    ) -> None:
        entry = (self.tokens, start, len(self.tokens), self.docs, doc_start, len(self.docs))
        self.streams.recorded[key] = entry
        if content is not None:
            self.streams._by_content[content] = key

    def _docstring(self, node: Node) -> bool:
        if not self._split_docstrings:
            return False
        assert self.dialect.docstring is not None
        doc = self.dialect.docstring(node, self.source)
        if doc is None:
            return False
        self.docs.append(doc)
        return True

    def _write_with_gaps(self, node: Node, name: str | None) -> None:
        # Text between children is code here (a format spec's literal part).
        self.open(node.type, name)
        last = node.start_byte
        for child, child_field in fields(node):
            self._gap(last, child.start_byte)
            self.write(child, child_field)
            last = child.end_byte
        self._gap(last, node.end_byte)
        self.add(")")

    def _gap(self, start: int, end: int) -> None:
        if end > start:
            self.tokens.extend(self.source[start:end].decode("utf-8", "replace").split())


def write_children(writer: TokenWriter, node: Node, field_name: str | None, label: str) -> None:
    """`node` as the generic walk writes it, under `label`: for a special writer that
    finds nothing to simplify in this instance."""
    writer.open(label, field_name)
    for child, name in fields(node):
        writer.write(child, name)
    writer.add(")")


def write_as_written(writer: TokenWriter, node: Node, field_name: str | None) -> None:
    """A literal as one token of its own text: escapes and all (no leaf holds all of it)."""
    writer.add(writer.text(node), field_name)


def fields(node: Node) -> list[tuple[Node, str | None]]:
    """The node's children, each with the grammar field it fills."""
    result: list[tuple[Node, str | None]] = []
    cursor = node.walk()
    if cursor.goto_first_child():
        while True:
            child = cursor.node
            assert child is not None
            result.append((child, cursor.field_name))
            if not cursor.goto_next_sibling():
                break
    return result


def tokens_of(
    streams: Streams,
    dialect: Dialect,
    table: Table,
    nodes: list[tuple[Node, str | None]],
    *,
    split_docstrings: bool = True,
) -> tuple[list[str], list[str]]:
    """The code tokens of `nodes` (each with its field) in order, and the docstrings taken
    out of them."""
    writer = TokenWriter(streams, dialect, table, split_docstrings=split_docstrings)
    for node, field_name in nodes:
        writer.write(node, field_name)
    return writer.tokens, writer.docs


_COMMENT_MARKERS = re.compile(r"^\s*(?:/\*+!?|//[/!]?|\*+(?!/)|#+)|\*+/\s*$", re.MULTILINE)


def comment_words(text: str) -> list[str]:
    """A comment's words: markers (`//`, `///`, `/**`, ` * `, `*/`) stripped, spacing collapsed."""
    return _COMMENT_MARKERS.sub(" ", text).split()


def words(text: str) -> list[str]:
    return text.split()
