"""Definitions in one file, and the facts of each (docs/memories.md, *References* and *Axes*).

`ParsedFile.sites()` lists definitions with the grammar's own tags query and names them by
containment; `ParsedFile.facts()` normalises one definition on demand. Nothing is normalised
up front: a check usually needs one or two definitions of a parsed file.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache, lru_cache

from tree_sitter import Node, QueryCursor, Tree

from .digest import digest_bytes, digest_tokens
from .lang_base import LanguageSpec, Span
from .languages import definition_query, new_parser
from .model import AXES, DefinitionSite, Facts
from .normalise import Streams

NORMALISER_VERSION = 5
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
def spec_for(language: str) -> LanguageSpec:
    """The language module's spec; KeyError for a language moor has no grammar for."""
    module_name, attribute = _SPECS[language]
    spec: LanguageSpec = getattr(importlib.import_module(f".{module_name}", __package__), attribute)
    return spec


class _Definition:
    """One listed definition. A definition carried over from an earlier parse (unchanged by
    the edit) finds its node in the new tree only when its facts are wanted, and keeps its
    facts key when the bytes that key reads did not move relative to it."""

    __slots__ = (
        "context",
        "counts",
        "facts",
        "key",
        "kind_id",
        "node",
        "node_end",
        "node_start",
        "node_type",
        "place",
        "site",
        "span",
        "top",
    )

    def __init__(
        self,
        site: DefinitionSite,
        place: str,
        top: bool,  # its place is among the file's own (held by no definition but transparent ones)
        kind_id: int,
        node_type: str,
        node_start: int,
        node_end: int,
        node: Node | None = None,
        span: Span | None = None,
        key: str | None = None,
        context: int = -1,
        counts: bool = True,  # it is the place of what follows it (`LanguageSpec.placeless`)
    ) -> None:
        self.site = site
        self.place = place
        self.top = top
        self.counts = counts
        self.kind_id = kind_id
        self.node_type = node_type  # with its bytes: how to find the node in a new tree
        self.node_start = node_start
        self.node_end = node_end
        self.node = node
        self.span = span
        self.key = key  # `ParsedFile.facts_key`, once computed (or carried)
        self.facts: Facts | None = None  # `ParsedFile.facts`, once computed
        self.context = context  # where the bytes the key reads start (with `key`)


@dataclass(frozen=True)
class _Edit:
    """How this parse's source differs from an earlier parse's: one replaced byte range."""

    earlier: ParsedFile
    start: int
    old_end: int
    new_end: int


class ParsedFile:
    """One parsed source file: its definitions, and their facts on demand."""

    def __init__(
        self,
        language: str,
        source: bytes,
        tree: Tree,
        spec: LanguageSpec,
        edit: _Edit | None = None,
    ) -> None:
        self.language = language
        self.source = source
        self.tree = tree
        self._spec = spec
        self._edit = edit  # set by an incremental re-parse: the listing can be one too
        # The earlier version's token streams, to replay what did not change.
        # (A version that normalised nothing passes on what its own predecessor had.)
        self._streams_before: Streams | None = None
        if edit is not None:
            self._streams_before = edit.earlier._streams or edit.earlier._streams_before
        self.relisted = False  # definitions re-listed from the earlier parse's
        self._definitions: dict[DefinitionSite, _Definition] | None = None
        self._streams: Streams | None = None
        self._error_regions: tuple[ErrorRegion, ...] | None = None

    def sites(self) -> tuple[DefinitionSite, ...]:
        """Every definition, in document order (duplicate qualified names included)."""
        return tuple(self._index())

    def unlisted(self, qname: str) -> tuple[str, str] | None:
        """(container, what it is) when `qname` names a member an older moor listed and
        this one does not (`LanguageSpec.unlisted`), so that a lock holding it is told why."""
        container, dot, name = qname.rpartition(".")
        if not dot:
            return None
        for site in self.sites():
            if site.qname != container:
                continue
            node = self.tree.root_node.descendant_for_byte_range(site.start_byte, site.end_byte)
            what = None if node is None else self._spec.unlisted(node, name)
            if what is not None:
                return container, what
        return None

    def error_regions(self) -> tuple[ErrorRegion, ...]:
        """What error recovery may have reshaped, in document order (`_error_regions`);
        empty when the file parses (memory: parse-errors-reach-what-follows)."""
        if self._error_regions is None:
            text = self._spec.tree_bytes(self.source)
            self._error_regions = _error_regions(self.language, text, self.tree)
        return self._error_regions

    def context_start(self, site: DefinitionSite) -> int:
        """Where the bytes a site's facts read start: the end of the code before it (the
        comments between, which may be its doc, are the site's)."""
        definition = self._located(site)
        assert definition.span is not None
        return _context_start(definition.span.first, self._spec.comment_types)

    def error_reaching(self, site: DefinitionSite) -> ErrorRegion | None:
        """The first error region that can change a listed site's facts: one that overlaps
        the bytes they read (it holds the site, or ends in the comments before it), or — at
        the top level — one after the definition before the site, which names its place."""
        regions = self.error_regions()
        if not regions:
            return None
        if site.end_byte <= min(region.error for region in regions):
            # Recovery never reshaped what the parser had finished before the first error:
            # wrapping earlier code moves the error's start back (bench/parse_errors.py).
            return None
        definition = self._located(site)
        context = self.context_start(site)
        for region in regions:
            if region.start < site.end_byte and region.end > context:
                return region
        if not definition.top:
            return None  # its place is a sibling in a container no region touches
        before = [
            other.site
            for other in self._index().values()
            if other.top and other.site.end_byte <= site.start_byte
        ]
        place = max(before, key=lambda other: other.end_byte, default=None)
        edge = place.end_byte if place is not None else 0
        between = next((r for r in regions if edge <= r.start < site.start_byte), None)
        if between is not None or place is None:
            return between
        holder = next((r for r in regions if r.start <= place.start_byte < r.end), None)
        if holder is None:
            return None
        # A region that is one whole top-level definition, named on a line before its first
        # error and closed by its own brace, names the place of what follows as the code
        # does. (Without the brace — Python — recovery can end it early or late, and what
        # it lost or swallowed would have named the place: measured, bench/parse_errors.py.)
        alone = [other for other in before if holder.start <= other.start_byte < holder.end]
        whole = (place.start_byte, place.end_byte) == (holder.start, holder.end)
        statement = self.tree.root_node.descendant_for_byte_range(holder.start, holder.end)
        closed = _closing_brace(statement) and _braces_intact(statement)
        if whole and closed and alone == [place] and place.line < holder.line:
            return None
        return holder

    def facts(self, site: DefinitionSite) -> Facts:
        """The digests of every axis for one definition listed by `sites()` (computed once)."""
        definition = self._index()[site]
        if definition.facts is None:
            definition = self._located(site)
            assert definition.node is not None and definition.span is not None
            tokens = self._spec.axis_tokens(definition.node, definition.span, self._shared())
            axes = {axis: digest_tokens(stream) for axis, stream in tokens.items()}
            axes["kind"] = digest_tokens([site.kind])
            axes["place"] = digest_tokens([definition.place])
            axes["text"] = digest_bytes(self.source[site.start_byte : site.end_byte])
            definition.facts = Facts(
                kind=site.kind, axes={axis: axes.get(axis, _EMPTY) for axis in AXES}
            )
        return definition.facts

    def tokens(self, site: DefinitionSite) -> dict[str, list[str]]:
        """The token streams of a definition's signature, decorators, body and doc axes
        (what `facts` digests; written again from the shared streams, so cheap after it)."""
        definition = self._located(site)
        assert definition.node is not None and definition.span is not None
        return self._spec.axis_tokens(definition.node, definition.span, self._shared())

    def carries_evidence(self, site: DefinitionSite) -> bool:
        """Whether the definition's body alone can establish that it is a renamed one."""
        return self._spec.carries_evidence(self.tokens(site)["body"])

    def facts_key(self, site: DefinitionSite) -> str:
        """A digest of everything `facts(site)` reads: the language, the site's name, kind and
        place, and the bytes from the end of the code before it (so the comments above it,
        which may be its doc, are included) to its end. Two sites with equal keys — in two
        versions of one file, say — have equal facts, so an edit elsewhere in a file need not
        normalise its other definitions again."""
        definition = self._index()[site]
        if definition.key is None:
            definition = self._located(site)
            assert definition.span is not None
            start = _context_start(definition.span.first, self._spec.comment_types)
            head = "\0".join(
                (self.language, site.qname, site.kind, definition.place, str(site.has_error))
            )
            definition.key = digest_bytes(
                head.encode() + b"\0" + self.source[start : site.end_byte]
            )
            definition.context = start
        return definition.key

    @property
    def spec(self) -> LanguageSpec:
        return self._spec

    def definition(self, site: DefinitionSite) -> tuple[Node, Span]:
        """The definition node of a site listed by `sites()`, and its span."""
        definition = self._located(site)
        assert definition.node is not None and definition.span is not None
        return definition.node, definition.span

    def source_text(self, site: DefinitionSite) -> str:
        return self.source[site.start_byte : site.end_byte].decode("utf-8", "replace")

    def _index(self) -> dict[DefinitionSite, _Definition]:
        if self._definitions is None:
            edit, self._edit = self._edit, None
            if edit is not None:
                self._definitions = _relist_definitions(self, edit)
                self.relisted = self._definitions is not None
            if self._definitions is None:
                self._definitions = _list_definitions(self._spec, self.language, self.tree)
        return self._definitions

    def _located(self, site: DefinitionSite) -> _Definition:
        """The site's definition with its node and span in this tree (found now for a
        carried one)."""
        definition = self._index()[site]
        if definition.node is None or definition.span is None:
            found = _find_node(self.tree, definition)
            span = self._spec.span(found) if found is not None else None
            if span is None or (span.first.start_byte, span.top.end_byte) != (
                site.start_byte,
                site.end_byte,
            ):
                # Never seen: the outline check in `_relist_definitions` rules it out. Were
                # it to happen, a listing from scratch is right where the carried one is not.
                fresh = _list_definitions(self._spec, self.language, self.tree)
                if site not in fresh:
                    raise LookupError(f"{site.qname}: not where the re-listing put it")
                self._definitions, self.relisted = fresh, False
                definition = fresh[site]
            else:
                definition.node, definition.span = found, span
        return definition

    def _shared(self) -> Streams:
        """The writers' shared state: what one `facts()` wrote, the next need not write."""
        if self._streams is None:
            kinds = frozenset(definition.kind_id for definition in self._index().values())
            before, self._streams_before = self._streams_before, None
            carried = before.carried() if before is not None else None
            self._streams = Streams(self.source, kinds, carried)
        return self._streams


def parse_source(language: str, source: bytes, earlier: ParsedFile | None = None) -> ParsedFile:
    """Parse `source`; KeyError for a language moor has no grammar for.

    `earlier`, a parse of an earlier version of the same file, makes this an incremental
    re-parse (tree-sitter reuses the unchanged subtrees: a one-line edit of a 172 kB file
    re-parses in ~2 ms instead of ~20 ms — inside a class of 200 methods it can take as long
    as a fresh parse, never much longer, measured) and lets the definitions be listed again
    only where the file changed (`_relist_definitions`). The tree is the same either way
    (a tree with a syntax error is parsed afresh: error recovery is not)."""
    spec = spec_for(language)
    parser = new_parser(language)
    text = spec.tree_bytes(source)
    if earlier is None or earlier.language != language or text is not source:
        # (A file whose lone CRs are read as LF is parsed whole: the edit's points and the
        # re-listing count LF in the file's own bytes.)
        return ParsedFile(language, source, parser.parse(text), spec)
    old = earlier.source
    start, old_end, new_end = _edit(old, source)
    tree = earlier.tree.copy()
    tree.edit(
        start_byte=start,
        old_end_byte=old_end,
        new_end_byte=new_end,
        start_point=_point(old, start),
        old_end_point=_point(old, old_end),
        new_end_point=_point(source, new_end),
    )
    new_tree = parser.parse(source, tree)
    if new_tree.root_node.has_error:
        # Error recovery can end differently when it starts from an earlier tree (seen in
        # Java and TypeScript), and a check must see what a fresh parse sees.
        new_tree = parser.parse(source)
    return ParsedFile(language, source, new_tree, spec, _Edit(earlier, start, old_end, new_end))


@dataclass(frozen=True)
class ErrorRegion:
    """Bytes error recovery may have parsed differently, and where the first error in them
    starts (its byte and line)."""

    start: int
    end: int
    line: int
    error: int


def _error_regions(language: str, text: bytes, tree: Tree) -> tuple[ErrorRegion, ...]:
    """Each error's top-level statement, when the file without them parses cleanly and
    every other statement of the file is parsed exactly as it is there (what recovery did
    stayed inside them); otherwise one region from the first error to the end of the file:
    recovery can close or open a scope early (an unclosed bracket in a Python method ends
    its class and makes the next methods top-level functions) and so reshape all that
    follows, and the code before it that it wrapped."""
    root = tree.root_node
    if not root.has_error:
        return ()
    errors: list[Node] = []
    pending = [root]
    while pending:  # every ERROR (not looked into) and MISSING node, in document order
        node = pending.pop()
        if node.is_error or node.is_missing:
            errors.append(node)
        else:
            pending.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    # A MISSING token is made up where recovery gave up (a `}` at the end of the file);
    # what lacks it starts where its node does (the unclosed `{`).
    starts = [e.parent if e.is_missing and e.parent is not None else e for e in errors]
    first = min(starts, key=lambda node: node.start_byte, default=root)
    open_ended = (
        ErrorRegion(first.start_byte, len(text), first.start_point.row + 1, first.start_byte),
    )
    regions: dict[tuple[int, int], ErrorRegion] = {}
    for error, start in zip(errors, starts, strict=True):
        statement = error
        while statement.parent is not None and statement.parent.parent is not None:
            statement = statement.parent
        if statement.parent is None:  # the file itself is the error
            return open_ended
        span = (statement.start_byte, statement.end_byte)
        if span not in regions or start.start_byte < regions[span].error:
            regions[span] = ErrorRegion(
                span[0], span[1], start.start_point.row + 1, start.start_byte
            )
    blanked = bytearray(text)
    for region in regions.values():
        blanked[region.start : region.end] = re.sub(
            rb"[^\r\n]", b" ", text[region.start : region.end]
        )
    without = new_parser(language).parse(bytes(blanked)).root_node
    outside = _outside(root, regions)
    # Statements that start at another column than the file's own are a scope recovery
    # closed early (the grammars accept them at the top level).
    columns = {column for _, column, _, _ in outside if column >= 0}
    if without.has_error or len(columns) > 1 or outside != _outside(without, regions):
        return open_ended
    return tuple(regions.values())


def _closing_brace(node: Node | None) -> bool:
    """Whether a node's last token is a `}` that is in the code (not one recovery made up)."""
    while node is not None and node.child_count:
        node = node.children[-1]
    return node is not None and node.type == "}" and not node.is_missing


def _braces_intact(node: Node | None) -> bool:
    """Whether every brace in a node is one the code has, matched as the code matches it: no
    error holds a brace and none is made up. (An unclosed `{` borrows the next function's
    `}`, and its own function then swallows that one: errors with braces in them.)"""
    pending = [node] if node is not None else []
    while pending:
        node = pending.pop()
        if node.is_missing and node.type in ("{", "}"):
            return False
        if node.is_error:
            inside = [node]
            while inside:
                leaf = inside.pop()
                if leaf.type in ("{", "}"):
                    return False
                inside.extend(leaf.children)
            continue
        pending.extend(c for c in node.children if c.has_error or c.is_missing)
    return True


def _outside(
    root: Node, regions: dict[tuple[int, int], ErrorRegion]
) -> list[tuple[int, int, int, str]]:
    """The top-level statements and comments outside every region: where they are, the
    column a statement starts at (-1 for a comment), and their shape."""
    return [
        (
            child.start_byte,
            -1 if child.is_extra else child.start_point.column,
            child.end_byte,
            str(child),
        )
        for child in root.children
        if not any(
            r.start <= child.start_byte and child.end_byte <= r.end for r in regions.values()
        )
    ]


def _edit(old: bytes, new: bytes) -> tuple[int, int, int]:
    """The one edit that turns `old` into `new`: (start, old end, new end) in bytes."""
    limit = min(len(old), len(new))
    start = 0
    step = 4096
    while start < limit:  # common prefix, coarse then fine
        end = min(start + step, limit)
        if old[start:end] == new[start:end]:
            start = end
        elif step > 1:
            step //= 8
        else:
            break
    suffix = 0
    step = 4096
    room = limit - start
    while suffix < room:
        size = min(step, room - suffix)
        if (
            old[len(old) - suffix - size : len(old) - suffix]
            == new[len(new) - suffix - size : len(new) - suffix]
        ):
            suffix += size
        elif step > 1:
            step //= 8
        else:
            break
    return start, len(old) - suffix, len(new) - suffix


def _point(source: bytes, offset: int) -> tuple[int, int]:
    row = source.count(b"\n", 0, offset)
    return row, offset - (source.rfind(b"\n", 0, offset) + 1)


def file_facts(language: str | None, source: bytes, parsed: ParsedFile | None = None) -> Facts:
    """A whole file: `body` is its normalised content, `text` its bytes. `parsed`: a parse
    of `source` made already (else the file is parsed here)."""
    if language is None:
        body = _text_lines(source)
    else:
        root = parsed.tree.root_node if parsed is not None and parsed.source == source else None
        body = spec_for(language).file_tokens(source, root)
    axes = {axis: _EMPTY for axis in AXES}
    axes["kind"] = digest_tokens(["file"])
    axes["body"] = digest_tokens(body)
    axes["text"] = digest_bytes(source)
    return Facts(kind="file", axes=axes)


def alias_of(language: str, text: str) -> str | None:
    """The name a definition's text merely re-binds (`Old = New`), if that is all it is."""
    return spec_for(language).alias_of(text)


def split_qualified(language: str, qname: str) -> tuple[str | None, str]:
    """A qualified name's container (None at the top) and its own name."""
    container, separator, own = qname.rpartition(spec_for(language).separator)
    return (container if separator else None), own


@lru_cache(maxsize=2048)
def _snippet_tokens(language: str, text: str) -> tuple[str, ...]:
    return tuple(spec_for(language).file_tokens(text.encode("utf-8")))


def snippet_tokens(language: str, text: str) -> list[str]:
    """The normalised tokens of a piece of code parsed on its own (a definition's source cut
    out of its file, as sealed in the journal): what similarity between a vanished
    definition and its possible new places is measured on. Both sides of a comparison go
    through this, so a snippet that does not parse alone (a Java method outside its class)
    yields the same error-recovered stream on both. Remembered: an editor asks again on
    every change while some code is gone."""
    return list(_snippet_tokens(language, text))


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
    spec: LanguageSpec,
    language: str,
    tree: Tree,
    within: tuple[int, int] | None = None,
    place: str = _ROOT_PLACE,
) -> dict[DefinitionSite, _Definition]:
    """Every definition — or those whose node lies `within` a byte range made of whole
    top-level nodes, the last definition before it being `place`."""
    found = _query_definitions(spec, language, tree.root_node, within)
    index: dict[int, tuple[str, str]] = {}  # node id -> (qualified name, kind)
    # node id -> the definition whose children its children are, for place (None: the file)
    holders: dict[int, Node | None] = {}
    last_in: dict[int, str] = {0: place}  # container node id (0: the file) -> last qname
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
        holder = container
        if holder is not None and holder.type in spec.transparent:
            holder = holders[holder.id]
        holders[item.node.id] = holder
        key = holder.id if holder is not None else 0
        place = last_in.get(key, _ROOT_PLACE)
        node = item.node
        counts = spec.is_place(node)
        result[site] = _Definition(
            site,
            place,
            holder is None,
            node.kind_id,
            node.type,
            node.start_byte,
            node.end_byte,
            node,
            span,
            counts=counts,
        )
        if counts:
            last_in[key] = qname
    return result


def _relist_definitions(
    parsed: ParsedFile, edit: _Edit
) -> dict[DefinitionSite, _Definition] | None:
    """The definitions after an edit, from those before it: only the top-level nodes the
    edit (or the re-parse) touched, with one neighbour each side, are queried again; the
    definitions before them are kept and those after them shifted, each found again in the
    new tree. None when that cannot be done safely (then everything is listed again)."""
    if edit.earlier._definitions is None:
        return None  # nothing listed before: listing it now would cost twice
    earlier = edit.earlier._definitions
    root = parsed.tree.root_node
    children = root.children
    if not children:
        return None
    low, high = edit.start, edit.new_end
    first = max((i for i, c in enumerate(children) if c.start_byte <= low), default=0)
    last = min((i for i, c in enumerate(children) if c.end_byte >= high), default=len(children))
    first, last = max(first - 1, 0), min(last + 1, len(children) - 1)
    start, end = children[first].start_byte, children[last].end_byte
    if first == 0:
        start = 0
    if last == len(children) - 1:
        end = len(parsed.source)
    shift = edit.new_end - edit.old_end
    old_end = end - shift  # the region's end in the earlier source
    # Outside the region the tree must be the earlier one, top-level node for top-level
    # node (shifted after it): then each holds the same definitions as before. (An edit
    # can change the parse far from itself: an unclosed string swallows the rest.)
    if _outline(edit.earlier.tree.root_node, start, old_end, 0) != _outline(
        root, start, end, shift
    ):
        return None
    lines = parsed.source.count(b"\n", edit.start, edit.new_end) - edit.earlier.source.count(
        b"\n", edit.start, edit.old_end
    )
    before = [d for d in earlier.values() if d.site.end_byte <= start]
    after = [d for d in earlier.values() if d.site.start_byte >= old_end]
    if len(before) + len(after) < len(earlier) and any(
        d.site.start_byte < start < d.site.end_byte or d.site.start_byte < old_end < d.site.end_byte
        for d in earlier.values()
    ):
        return None  # a definition straddles the region's edge (a leading attribute)
    place = next((d.site.qname for d in reversed(before) if d.top and d.counts), _ROOT_PLACE)
    middle = _list_definitions(parsed._spec, parsed.language, parsed.tree, (start, end), place)
    result: dict[DefinitionSite, _Definition] = {}
    for definition in before:
        result[definition.site] = _carried(definition, 0, 0, definition.place, -1)
    result.update(middle)
    tops = [d.site.qname for d in (*before, *middle.values()) if d.top and d.counts]
    last_top = tops[-1] if tops else _ROOT_PLACE
    for definition in after:
        place = definition.place
        if definition.top:
            place = last_top
            if definition.counts:
                last_top = definition.site.qname
        moved = _carried(definition, shift, lines, place, old_end)
        result[moved.site] = moved
    return result


def _outline(root: Node, start: int, end: int, shift: int) -> list[tuple[str, int, int, str]]:
    """The top-level nodes outside [start, end): type, start and end (those after the range
    moved back by `shift`), and the whole shape of those that hold a syntax error (error
    recovery can reshape the inside of a node far from the edit while its extent stays:
    a TypeScript field `privte` appears or not)."""
    outline = []
    for child in root.children:
        shape = str(child) if child.has_error else ""
        if child.end_byte <= start:
            outline.append((child.type, child.start_byte, child.end_byte, shape))
        elif child.start_byte >= end:
            moved = (child.start_byte - shift, child.end_byte - shift)
            outline.append((child.type, *moved, shape))
    return outline


def _carried(old: _Definition, shift: int, lines: int, place: str, edge: int) -> _Definition:
    """A definition the edit did not touch, `shift` bytes and `lines` lines further on. Its
    node is found in the new tree when wanted (`ParsedFile._located`); its facts key stays
    when its place did not change and the bytes the key reads start past `edge`: the end of
    the re-listed region in the earlier source (-1 before it). (Starting right at the edge,
    they start where a node of the region ends, which may not end there any more.)"""
    site = old.site
    if shift or lines:
        site = DefinitionSite(
            site.qname,
            site.kind,
            site.line + lines,
            site.end_line + lines,
            site.start_byte + shift,
            site.end_byte + shift,
            site.has_error,
        )
    key = old.key if place == old.place and old.context > edge else None
    return _Definition(
        site,
        place,
        old.top,
        old.kind_id,
        old.node_type,
        old.node_start + shift,
        old.node_end + shift,
        key=key,
        context=old.context + shift if key is not None else -1,
        counts=old.counts,
    )


def _find_node(tree: Tree, definition: _Definition) -> Node | None:
    """The node of this type and byte range in `tree`, if there is one."""
    start, end = definition.node_start, definition.node_end
    node: Node | None = tree.root_node.descendant_for_byte_range(start, end)
    while node is not None and not (
        node.type == definition.node_type and node.start_byte == start and node.end_byte == end
    ):
        if node.start_byte < start or node.end_byte > end:
            return None
        node = node.parent
    return node


def _query_definitions(
    spec: LanguageSpec, language: str, root: Node, within: tuple[int, int] | None = None
) -> list[_Found]:
    seen: set[tuple[int, int]] = set()
    found: list[_Found] = []
    cursor = QueryCursor(definition_query(language))
    if within is not None:
        cursor.set_byte_range(*within)
    for _, captures in cursor.matches(root):
        names = captures.get("name")
        name_node = names[0] if names else None
        for capture, nodes in captures.items():
            if not capture.startswith("definition."):
                continue
            node = nodes[0]
            if within is not None and not (within[0] <= node.start_byte < within[1]):
                continue  # met because it overlaps the range, but it is not inside it
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


def _context_start(first: Node, comment_types: frozenset[str]) -> int:
    """Where the code before a definition ends: past the comments between them, which
    `doc_comments` may read (and whose row, against that code's, decides whether they
    document the definition)."""
    sibling = first.prev_sibling
    while sibling is not None and sibling.type in comment_types:
        sibling = sibling.prev_sibling
    if sibling is not None:
        return sibling.end_byte
    parent = first.parent
    return parent.start_byte if parent is not None else 0


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
