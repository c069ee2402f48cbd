"""A memory's frontmatter, composed with YAML and read into its fields (the rules are in
`memory`'s docstring). Its own module so that YAML is imported only when a memory file is
parsed: a warm check reads parsed memories from the journal's cache."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeGuard

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from . import simple_yaml
from .memory import (
    CONFIDENCE_LEVELS,
    DEFAULT_CONFIDENCE,
    MAX_DEPTH,
    MAX_FRONTMATTER_CHARS,
    MAX_MERGED_ITEMS,
    AboutEntry,
    Problem,
    misspelt_key,
)
from .model import AXES, Failure
from .reference import normalise_path, parse_reference

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

_STANDARD = "tag:yaml.org,2002:"
_STR = _STANDARD + "str"
_SEQ = _STANDARD + "seq"
_MAP = _STANDARD + "map"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_MERGE = "tag:yaml.org,2002:merge"
_ENTRY_KEYS = ("ref", "watch")
# What YAML 1.1 refuses in a stream (as PyYAML's reader does), plus a BOM inside the text,
# which libyaml refuses too. Checked up front so the position is exact with either loader.
_NOT_YAML_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|\ufeff"
)
_NOT_YAML_PRINTABLE_ASCII = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # the fast path
_SPACES = re.compile(r"\s+")
# `source: KIND:NAME`: a kind moor.toml may name, and a note's file stem (`sources.py`).
_SOURCE = re.compile(r"[a-z][a-z0-9_-]*:[^./\\\x00-\x1f\x7f][^/\\\x00-\x1f\x7f]*")


class _Loader(_BaseLoader):
    """Safe loader used only to compose nodes and construct scalar keys.

    Path resolvers are never registered on it, so the per-node hooks are skipped (they are
    a measurable share of composing a small document).
    """

    def descend_resolver(self, current_node: Node | None, current_index: object) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


@dataclass
class _Fields:
    about: tuple[AboutEntry, ...] = ()
    about_line: int = 0
    watch: tuple[str, ...] | None = None
    confidence: str = DEFAULT_CONFIDENCE
    supersedes: tuple[str, ...] = ()
    links: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # (relation, target, line, column) of each link target as written: where a finding
    # about it (a missing memory, a contradiction) points.
    link_places: tuple[tuple[str, str, int, int], ...] = ()
    title: str | None = None
    pinned: bool = False
    created: str | None = None
    agent: str | None = None
    agent_line: int = 0
    source: str | None = None


def _shown_tag(tag: str) -> str:
    return "!!" + tag[len(_STANDARD) :] if tag.startswith(_STANDARD) else tag


def _describe(node: Node) -> str:
    if isinstance(node, MappingNode | SequenceNode):
        what = "a mapping" if isinstance(node, MappingNode) else "a list"
        standard = _MAP if isinstance(node, MappingNode) else _SEQ
        return what if node.tag == standard else f"{what} tagged {_shown_tag(node.tag)}"
    kind = {
        "tag:yaml.org,2002:null": "null",
        "tag:yaml.org,2002:bool": "a boolean",
        "tag:yaml.org,2002:int": "a number",
        "tag:yaml.org,2002:float": "a number",
        "tag:yaml.org,2002:timestamp": "a date",
        "tag:yaml.org,2002:binary": "binary data",
    }.get(node.tag)
    if kind is None:
        kind = f"a value tagged {_shown_tag(node.tag)}"
    value = str(node.value)
    shown = value if len(value) <= 40 else value[:37] + "..."
    return f"{kind} ({shown!r})" if value else kind


def _is_str(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _STR


def _is_seq(node: Node) -> TypeGuard[SequenceNode]:
    return isinstance(node, SequenceNode) and node.tag == _SEQ


def _is_map(node: Node) -> TypeGuard[MappingNode]:
    return isinstance(node, MappingNode) and node.tag == _MAP


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _NULL


class _OverBudget(Exception):
    """A frontmatter budget ran out while interpreting; becomes one positioned problem."""

    def __init__(self, message: str, node: Node | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.node = node


def _children(node: Node) -> list[Node]:
    """The collection nodes directly inside `node` (scalars add no depth worth walking)."""
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair if not isinstance(part, ScalarNode)]
    if isinstance(node, SequenceNode):
        return [item for item in node.value if not isinstance(item, ScalarNode)]
    return []


def _too_deep(root: Node) -> Node | None:
    """A node more than `MAX_DEPTH` collections deep (through aliases too), if any.

    One walk over the node graph, each node's height remembered, so a shared alias is
    measured once; an alias back to an enclosing node (a cycle) adds no depth."""
    height: dict[int, int] = {}
    on_path: set[int] = {id(root)}
    stack: list[tuple[Node, Iterator[Node]]] = [(root, iter(_children(root)))]
    while stack:
        node, pending = stack[-1]
        for child in pending:
            if id(child) in on_path:
                continue
            known = height.get(id(child))
            if known is not None:
                if len(stack) + known > MAX_DEPTH:
                    return child
                continue
            if len(stack) >= MAX_DEPTH:
                return child
            on_path.add(id(child))
            stack.append((child, iter(_children(child))))
            break
        else:
            stack.pop()
            on_path.discard(id(node))
            height[id(node)] = 1 + max(
                (height.get(id(child), 0) for child in _children(node)), default=0
            )
    return None


class Frontmatter:
    """Composes the frontmatter and interprets its nodes, collecting positioned problems."""

    def __init__(self, text: str, first_line: int, last_line: int) -> None:
        self.text = text
        self.first_line = first_line
        self.last_line = last_line  # the closing delimiter: nothing is reported past it
        self.problems: list[Problem] = []
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._loader: _Loader | None = None
        self._merged = 0  # keys expanded through merge keys so far (`MAX_MERGED_ITEMS`)

    # positions

    def at_index(self, index: int) -> tuple[int, int]:
        index = max(0, min(index, len(self.text)))
        row = bisect_right(self._starts, index) - 1
        line = self.first_line + row
        if line >= self.last_line:
            return self.last_line, 1
        return line, index - self._starts[row] + 1

    def at(self, node: Node) -> tuple[int, int]:
        mark = node.start_mark
        return self.at_index(mark.index) if mark is not None else (self.first_line, 1)

    def end(self, node: Node) -> tuple[int, int]:
        mark = node.end_mark
        return self.at_index(mark.index) if mark is not None else self.at(node)

    def report(self, code: str, message: str, node: Node | None = None) -> None:
        line, column = (self.first_line - 1, 1) if node is None else self.at(node)
        self.problems.append(Problem(code, message, line, column))

    # composing

    def read(self) -> _Fields | None:
        if len(self.text) > MAX_FRONTMATTER_CHARS:
            self.report(
                "frontmatter_over_budget",
                f"the frontmatter is {len(self.text):,} characters; "
                f"moor reads at most {MAX_FRONTMATTER_CHARS:,}",
            )
            return None
        pattern = _NOT_YAML_PRINTABLE_ASCII if self.text.isascii() else _NOT_YAML_PRINTABLE
        bad = pattern.search(self.text)
        if bad is not None:
            line, column = self.at_index(bad.start())
            char = f"U+{ord(bad.group()):04X}"
            self.problems.append(
                Problem("yaml_syntax", f"YAML does not allow the character {char}", line, column)
            )
            return None
        simple = simple_yaml.compose(self.text)
        if simple is not None:  # the very nodes YAML composes (no alias, two levels deep)
            self._check_duplicates(simple)
            return self._fields(simple)
        loader = _Loader(self.text)
        self._loader = loader
        try:
            root = self._compose(loader)
            if self.problems:
                return None
            if root is None:
                self.report("empty_frontmatter", "the frontmatter is empty")
                return None
            deep = _too_deep(root)
            if deep is not None:
                self.report(
                    "frontmatter_over_budget",
                    f"the frontmatter nests more than {MAX_DEPTH} levels deep",
                    deep,
                )
                return None
            if not _is_map(root):
                self.report(
                    "frontmatter_not_a_mapping",
                    f"the frontmatter must be a mapping of keys to values, not {_describe(root)}",
                    root,
                )
                return None
            self._check_duplicates(root)
            return self._fields(root)
        except _OverBudget as over:
            self.report("frontmatter_over_budget", over.message, over.node)
            return None
        finally:
            self._loader = None
            loader.dispose()

    def _compose(self, loader: _Loader) -> Node | None:
        try:
            return loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line, column = (
                self.at_index(mark.index) if mark is not None else (self.first_line - 1, 1)
            )
            parts = [part for part in (exc.context, exc.problem) if part]
            message = "YAML: " + (", ".join(parts) if parts else "cannot parse the frontmatter")
            self.problems.append(Problem("yaml_syntax", message, line, column))
        except yaml.YAMLError as exc:
            position = getattr(exc, "position", None)
            line, column = (
                self.at_index(position) if isinstance(position, int) else (self.first_line, 1)
            )
            self.problems.append(Problem("yaml_syntax", f"YAML: {exc}", line, column))
        except RecursionError:
            self.report("yaml_syntax", "YAML: the frontmatter is nested too deeply")
        return None

    def _key_identity(self, key: Node) -> object:
        if not isinstance(key, ScalarNode):
            return ("node", id(key))  # complex keys: never equal to one another here
        if key.tag == _STR:
            return (_STR, key.value)
        try:
            assert self._loader is not None
            value = self._loader.construct_object(key, deep=True)
            hash(value)
        except Exception:
            return (key.tag, key.value)
        return (key.tag, value)

    def _check_duplicates(self, root: Node) -> None:
        """Report repeated keys in every mapping of the node graph (aliases visited once)."""
        seen_nodes: set[int] = set()
        stack: list[Node] = [root]
        while stack:
            node = stack.pop()
            if id(node) in seen_nodes:
                continue
            seen_nodes.add(id(node))
            if isinstance(node, MappingNode):
                first: dict[object, Node] = {}
                for key, value in node.value:
                    if isinstance(key, ScalarNode) and key.tag == _STR:
                        identity: object = (_STR, key.value)
                    else:
                        identity = self._key_identity(key)
                        stack.append(key)
                    if identity in first:
                        line, _ = self.at(first[identity])
                        self.report(
                            "duplicate_key",
                            f"the key {key.value!r} is repeated (first at line {line}); "
                            "YAML would silently keep only the last one",
                            key,
                        )
                    else:
                        first[identity] = key
                    if not isinstance(value, ScalarNode):
                        stack.append(value)
            elif isinstance(node, SequenceNode):
                stack.extend(item for item in node.value if not isinstance(item, ScalarNode))

    def _items(
        self, node: MappingNode, merging: frozenset[int] = frozenset()
    ) -> Iterator[tuple[Node, Node]]:
        """Key/value pairs with merge keys (``<<``) expanded; explicit keys come last.

        Merged keys count against `MAX_MERGED_ITEMS` over the whole frontmatter, so that
        nine aliases merged nine levels deep (9**9 keys) stop at the budget."""
        explicit: list[tuple[Node, Node]] = []
        for key, value in node.value:
            if merging:
                self._merged += 1
                if self._merged > MAX_MERGED_ITEMS:
                    raise _OverBudget(
                        f"the merge keys ('<<') expand to more than {MAX_MERGED_ITEMS:,} keys"
                    )
            if isinstance(key, ScalarNode) and key.tag == _MERGE:
                sources = value.value if _is_seq(value) else [value]
                for source in sources:
                    if not _is_map(source):
                        self.report(
                            "yaml_syntax",
                            "YAML: a merge key '<<' needs a mapping or a list of mappings",
                            source,
                        )
                    elif id(source) not in merging and source is not node:
                        if len(merging) >= MAX_DEPTH:
                            raise _OverBudget(
                                f"the merge keys ('<<') nest more than {MAX_DEPTH} deep"
                            )
                        try:
                            yield from self._items(source, merging | {id(node)})
                        except _OverBudget as over:
                            over.node = key  # the outermost '<<' catches it last: reported there
                            raise
            else:
                explicit.append((key, value))
        yield from explicit

    def _string_keyed(self, node: MappingNode) -> dict[str, tuple[Node, Node]]:
        """String keys to (key node, value node); the last occurrence wins, as in YAML."""
        return {key.value: (key, value) for key, value in self._items(node) if _is_str(key)}

    # fields

    def _fields(self, root: MappingNode) -> _Fields:
        fields = _Fields()
        top = self._string_keyed(root)
        for name, (key, _value) in top.items():
            meant = misspelt_key(name)
            if meant is not None:
                self.report(
                    "misspelt_key",
                    f"`{name}:` is not a key moor reads; did you mean `{meant}:`?",
                    key,
                )
        if "about" in top:
            key, value = top["about"]
            fields.about_line = self.at(key)[0]
            fields.about = self._about(value)
        if "watch" in top:
            fields.watch = self._watch(top["watch"][1])
        if "confidence" in top:
            fields.confidence = self._confidence(top["confidence"][1])
        if "supersedes" in top:
            fields.supersedes = self._supersedes(top["supersedes"][1])
        if "links" in top:
            fields.links, fields.link_places = self._links(top["links"][1])
        if "title" in top:
            fields.title = self._title(top["title"][1])
        if "pinned" in top:
            fields.pinned = self._pinned(top["pinned"][1])
        if "created" in top:
            fields.created = self._created(top["created"][1])
        if "agent" in top:
            key, value = top["agent"]
            fields.agent_line = self.at(key)[0]
            fields.agent = self._as_written(value)
        if "source" in top:
            fields.source = self._source(top["source"][1])
        return fields

    def _about(self, node: Node) -> tuple[AboutEntry, ...]:
        if _is_null(node):
            return ()
        if _is_str(node):
            items: list[Node] = [node]
        elif _is_seq(node):
            items = list(node.value)
        else:
            self.report(
                "about_not_a_list",
                f"'about' must be a reference or a list of references, not {_describe(node)}",
                node,
            )
            return ()
        entries: list[AboutEntry] = []
        canonical_at: dict[str, int] = {}
        for item in items:
            entry = self._about_entry(item)
            if entry is None:
                continue
            reference = parse_reference(entry.raw)
            if isinstance(reference, Failure):
                self.problems.append(
                    Problem(reference.code, reference.detail, entry.line, entry.column)
                )
                continue
            canonical = reference.canonical()
            if canonical in canonical_at:
                self.problems.append(
                    Problem(
                        "duplicate_reference",
                        f"{canonical!r} is already referenced at line {canonical_at[canonical]}",
                        entry.line,
                        entry.column,
                    )
                )
                continue
            canonical_at[canonical] = entry.line
            entries.append(entry)
        return tuple(entries)

    def _about_entry(self, node: Node) -> AboutEntry | None:
        if _is_str(node):
            return self._entry(node, None)
        if not _is_map(node):
            self.report(
                "about_entry_invalid",
                "an 'about' entry must be a reference string or a mapping with 'ref' "
                f"(and optionally 'watch'), not {_describe(node)}",
                node,
            )
            return None
        ref: Node | None = None
        watch: tuple[str, ...] | None = None
        valid = True
        for key, value in self._items(node):
            name = key.value if _is_str(key) else None
            if name == "ref":
                ref = value
            elif name == "watch":
                before = len(self.problems)
                watch = self._watch(value)
                valid = valid and len(self.problems) == before
            else:
                shown = name if name is not None else _describe(key)
                self.report(
                    "about_entry_unknown_key",
                    f"unknown key {shown!r} in an 'about' entry; the keys are 'ref' and 'watch'",
                    key,
                )
                valid = False
        if ref is None:
            self.report(
                "about_entry_missing_ref",
                "this 'about' entry has no 'ref' naming what it is about",
                node,
            )
            return None
        if not _is_str(ref):
            self.report(
                "about_entry_invalid",
                f"'ref' must be a reference string, not {_describe(ref)}",
                ref,
            )
            return None
        return self._entry(ref, watch) if valid else None

    def _entry(self, node: Node, watch: tuple[str, ...] | None) -> AboutEntry:
        line, column = self.at(node)
        end_line, end_column = self.end(node)
        return AboutEntry(str(node.value), watch, line, column, end_line, end_column)

    def _strings(self, node: Node, code: str, what: str) -> list[tuple[str, Node]] | None:
        """A string or a list of strings, as (value, node) pairs; None after a problem."""
        if _is_str(node):
            return [(str(node.value), node)]
        if not _is_seq(node):
            self.report(
                code, f"{what} must be a string or a list of strings, not {_describe(node)}", node
            )
            return None
        values: list[tuple[str, Node]] = []
        for item in node.value:
            if not _is_str(item):
                self.report(
                    code, f"every item of {what} must be a string, not {_describe(item)}", item
                )
                return None
            values.append((str(item.value), item))
        return values

    def _watch(self, node: Node) -> tuple[str, ...] | None:
        if _is_null(node):
            return None
        values = self._strings(node, "watch_not_a_list", "'watch'")
        if values is None:
            return None
        chosen: set[str] = set()
        for value, item in values:
            if value in AXES:
                chosen.add(value)
            else:
                self.report(
                    "unknown_watch_axis",
                    f"{value!r} is not an axis; watch one of: {', '.join(AXES)}",
                    item,
                )
        return tuple(axis for axis in AXES if axis in chosen)

    def _confidence(self, node: Node) -> str:
        if _is_null(node):
            return DEFAULT_CONFIDENCE
        if _is_str(node) and node.value in CONFIDENCE_LEVELS:
            return str(node.value)
        shown = repr(node.value) if _is_str(node) else _describe(node)
        self.report(
            "confidence_invalid",
            f"'confidence' is {shown}; use one of: {', '.join(CONFIDENCE_LEVELS)}",
            node,
        )
        return DEFAULT_CONFIDENCE

    def _supersedes(self, node: Node) -> tuple[str, ...]:
        if _is_null(node):
            return ()
        values = self._strings(node, "supersedes_not_a_list", "'supersedes'")
        if values is None:
            return ()
        paths: list[str] = []
        for value, item in values:
            path = normalise_path(value)
            if isinstance(path, Failure):
                self.report(path.code, f"'supersedes': {path.detail}", item)
            elif path not in paths:
                paths.append(path)
        return tuple(paths)

    def _links(
        self, node: Node
    ) -> tuple[dict[str, tuple[str, ...]], tuple[tuple[str, str, int, int], ...]]:
        if _is_null(node):
            return {}, ()
        if not _is_map(node):
            self.report(
                "links_not_a_mapping",
                f"'links' must map a relation to memory paths, not {_describe(node)}",
                node,
            )
            return {}, ()
        links: dict[str, tuple[str, ...]] = {}
        places: list[tuple[str, str, int, int]] = []
        for key, value in self._items(node):
            if not _is_str(key):
                self.report(
                    "links_not_a_mapping",
                    f"a relation in 'links' must be a string, not {_describe(key)}",
                    key,
                )
                continue
            if _is_null(value):
                links[str(key.value)] = ()
                continue
            values = self._strings(value, "links_not_a_list", f"'links.{key.value}'")
            if values is not None:
                links[str(key.value)] = tuple(text for text, _ in values)
                places.extend((str(key.value), text, *self.at(item)) for text, item in values)
        return links, tuple(places)

    def _pinned(self, node: Node) -> bool:
        if _is_null(node):
            return False
        if isinstance(node, ScalarNode) and node.tag == _BOOL:
            return str(node.value).lower() in ("true", "yes", "on", "y")
        self.report("pinned_invalid", f"'pinned' is true or false, not {_describe(node)}", node)
        return False

    @staticmethod
    def _as_written(node: Node) -> str | None:
        if _is_null(node):
            return None
        if isinstance(node, ScalarNode):
            return str(node.value)
        return _describe(node)

    def _source(self, node: Node) -> str | None:
        if _is_null(node):
            return None
        if _is_str(node) and _SOURCE.fullmatch(node.value):
            return str(node.value)
        shown = repr(node.value) if _is_str(node) else _describe(node)
        self.report(
            "source_invalid",
            f"'source' is {shown}; it names a note as KIND:NAME (serena:retries)",
            node,
        )
        return None

    def _created(self, node: Node) -> str | None:
        if _is_null(node):
            return None
        if isinstance(node, ScalarNode) and node.tag.startswith(_STANDARD):
            return str(node.value).strip() or None
        self.report("created_invalid", f"'created' is a date, not {_describe(node)}", node)
        return None

    def _title(self, node: Node) -> str | None:
        if _is_null(node):
            return None
        if isinstance(node, ScalarNode) and node.tag.startswith(_STANDARD):
            return _SPACES.sub(" ", str(node.value)).strip() or None
        self.report("title_not_a_string", f"'title' must be text, not {_describe(node)}", node)
        return None
