"""Memory files: YAML frontmatter + Markdown body (DESIGN §2), parsed without ever raising.

`parse_memory` turns the bytes of one memory file into a `Memory`, or into positioned
`Problem`s that make the memory ``invalid`` (DESIGN §6). Positions are 1-based; lines are
counted the way editors and LSP count them (``\\n``, ``\\r\\n`` and a lone ``\\r`` each end a
line, nothing else does), and columns are counted in Unicode code points, not counting a
leading UTF-8 BOM. The language server converts columns to UTF-16 when it needs to.

Problem codes (each at the position of the offending node unless said otherwise):

=========================== ==============================================================
``invalid_utf8``            the file is not UTF-8; at the first bad byte
``missing_frontmatter``     the first line is not ``---``; at 1:1
``unclosed_frontmatter``    no closing ``---`` (or ``...``) line; at the opening ``---``
``empty_frontmatter``       nothing but blanks/comments between the delimiters; at 1:1
``frontmatter_over_budget`` the frontmatter is larger than `MAX_FRONTMATTER_CHARS`, nests
                            deeper than `MAX_DEPTH`, or its merge keys (``<<``) expand to more
                            than `MAX_MERGED_ITEMS` keys (a "billion laughs"); at the node
                            where the budget ran out (1:1 for the size)
``yaml_syntax``             YAML cannot parse it (YAML's own position, mapped to the file),
                            including characters YAML refuses (controls, a BOM inside)
``frontmatter_not_a_mapping`` the frontmatter is a list or a scalar
``duplicate_key``           a key repeated in one mapping, at any level; at the repeat
``about_not_a_list``        ``about`` is neither a string nor a list
``about_entry_invalid``     an entry is neither a string nor a ``{ref, watch}`` mapping,
                            or its ``ref`` is not a string
``about_entry_missing_ref`` a mapping entry without ``ref``
``about_entry_unknown_key`` a mapping entry with a key other than ``ref`` / ``watch``
``bad_reference``           a reference (or a ``supersedes`` path) is malformed
``outside_workspace``       a reference (or ``supersedes`` path) leaves the workspace
``duplicate_reference``     two entries of ``about`` name the same anchor; at the second
``watch_not_a_list``        a ``watch`` is neither an axis name nor a list of axis names
``unknown_watch_axis``      a ``watch`` item is not one of `AXES`
``confidence_invalid``      ``confidence`` is not ``verified``/``inferred``/``unverified``
``supersedes_not_a_list``   ``supersedes`` is neither a string nor a list of strings
``links_not_a_mapping``     ``links`` is not a mapping with string keys
``links_not_a_list``        a ``links`` value is neither a string nor a list of strings
``title_not_a_string``      ``title`` is a list or a mapping
``pinned_invalid``          ``pinned`` is not a boolean
``created_invalid``         ``created`` is a list or a mapping
``source_invalid``          ``source`` is not ``KIND:NAME`` (a note's name: no ``/``, no
                            leading dot, no control characters)
``misspelt_key``            a top-level key that is nearly one moor reads (``abut``,
                            ``About``, ``watched``): the message names the key meant
``internal_error``          a bug in this module (never expected; tests assert it is absent)
=========================== ==============================================================

Choices, so that the engine and the editor can rely on them:

* A field given as ``null`` (``about:`` with nothing after it) counts as absent. A memory
  without ``about`` (or with an empty list) is valid; the engine calls it ``ungrounded``.
* Every field that takes a list of strings (``watch``, ``supersedes``, each ``links``
  value) also accepts a single string.
* ``watch`` tuples are returned in the order of `AXES`, without repeats, so two spellings
  of one set compare equal. ``watch: []`` is allowed and means "only whether the target
  exists" (it still goes ``gone``).
* ``confidence`` defaults to ``unverified``: a memory claims nothing it does not state.
  Values are exact (lowercase); the diagnostic lists the three.
* ``supersedes`` paths are normalised like reference paths (``./a.md`` → ``a.md``) so the
  retirement latch matches memory paths exactly; ``links`` values are kept as written.
* Unknown top-level keys are allowed and ignored (users add their own metadata), but they
  are still checked for duplicate keys and YAML syntax — except a key that is nearly one
  moor reads (another case, or a close spelling of about the same length: `abut`), which
  is a problem naming the key meant: a misspelt `about:` must not leave a memory silently
  ungrounded.
* YAML is loaded safely: the frontmatter is only *composed* into nodes (with libyaml's
  ``CSafeLoader`` when available) and interpreted here; only scalar keys are ever
  constructed, with `SafeConstructor`, so no tag can build an object. A tag, anchor, alias
  or merge that puts a non-string where a string is needed is a problem, not a crash.
  Merge keys (``<<``) are honoured in the mappings this module reads. A value reached
  through an alias is located where its text is: at its anchor, not at the ``*alias``.
* The frontmatter is budgeted, so that 600 hostile bytes cannot hang a check or the editor:
  its size (checked before YAML sees it), its nesting depth (through aliases too) and the
  keys its merges expand to. An alias itself is never expanded, so an unused alias bomb
  costs nothing and stays valid; only what moor would walk is counted.
* References are checked with `parse_reference` (lexically). Symlinks leaving the workspace
  need the workspace root: that check is `reference.resolve_path`, run by the engine.
"""

from __future__ import annotations

import difflib
import re
import types
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TypeGuard

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .digest import digest_text
from .model import AXES, DEFAULT_WATCH, Failure
from .reference import normalise_path, parse_reference

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

CONFIDENCE_LEVELS: tuple[str, ...] = ("verified", "inferred", "unverified")
# Budgets for the frontmatter: each is ~100x what a real memory uses (the largest of moor's
# own is 634 characters, 4 deep, no merges) and keeps the worst case well under 100 ms.
MAX_FRONTMATTER_CHARS = 65536
MAX_DEPTH = 64
MAX_MERGED_ITEMS = 10_000
DEFAULT_CONFIDENCE = "unverified"
QUESTIONS_HEADING = "when this changes, ask"

_STANDARD = "tag:yaml.org,2002:"
_STR = _STANDARD + "str"
_SEQ = _STANDARD + "seq"
_MAP = _STANDARD + "map"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_MERGE = "tag:yaml.org,2002:merge"
_ENTRY_KEYS = ("ref", "watch")
_BOM = "\ufeff"
# What YAML 1.1 refuses in a stream (as PyYAML's reader does), plus a BOM inside the text,
# which libyaml refuses too. Checked up front so the position is exact with either loader.
_NOT_YAML_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|\ufeff"
)
_NOT_YAML_PRINTABLE_ASCII = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # the fast path
_DELIMITER = re.compile(r"---[ \t]*")
_CLOSERS = re.compile(r"(?:---|\.\.\.)[ \t]*")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_BULLET = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?")
_CHECKBOX = re.compile(r"^\[[ xX]\][ \t]+")
_SPACES = re.compile(r"\s+")
# `source: KIND:NAME`: a kind moor.toml may name, and a note's file stem (`sources.py`).
_SOURCE = re.compile(r"[a-z][a-z0-9_-]*:[^./\\\x00-\x1f\x7f][^/\\\x00-\x1f\x7f]*")


@dataclass(frozen=True)
class Problem:
    """A positioned problem in a memory file (1-based line and column, code points)."""

    code: str
    message: str
    line: int
    column: int


@dataclass(frozen=True)
class AboutEntry:
    """One entry of ``about:``.

    `line`/`column` locate the reference string itself (for a quoted string: its opening
    quote); `end_line`/`end_column` are just past its end, so an editor can underline it.
    """

    raw: str
    watch: tuple[str, ...] | None
    line: int
    column: int
    end_line: int = 0
    end_column: int = 0


@dataclass(frozen=True)
class Memory:
    path: str
    title: str
    about: tuple[AboutEntry, ...]
    watch: tuple[str, ...] | None
    confidence: str
    supersedes: tuple[str, ...]
    links: Mapping[str, tuple[str, ...]]
    questions: tuple[str, ...]
    body: str
    content_hash: str
    about_line: int
    # What the memory says, as `value_key` spells it: what a tombstone is keyed on.
    value: str = ""
    pinned: bool = False  # `pinned: true`: ranked up in recall
    created: str | None = None  # `created:` as written (an ISO date): recall's recency
    # `agent:` as written (a non-string value described, so it is never a valid name):
    # whether it names a namespace is the engine's decision (moor_engine/namespaces.py).
    agent: str | None = None
    agent_line: int = 0
    # `source:` as written (`KIND:NAME`): a sidecar binding a note moor only reads.
    source: str | None = None


@dataclass(frozen=True)
class ParsedMemory:
    memory: Memory | None
    problems: tuple[Problem, ...]


def effective_watch(memory: Memory, entry: AboutEntry) -> tuple[str, ...]:
    """The axes an entry watches: its own, else the memory's default, else `DEFAULT_WATCH`."""
    if entry.watch is not None:
        return entry.watch
    if memory.watch is not None:
        return memory.watch
    return DEFAULT_WATCH


def normalise_memory_text(text: str) -> str:
    """The text a memory's content hash is taken over.

    Drops a leading BOM, turns CRLF and lone CR into LF, drops trailing whitespace on every
    line and trailing blank lines — so line-ending or editor-whitespace churn does not make a
    memory ``rewritten``, while any other edit does.
    """
    if text.startswith(_BOM):
        text = text[1:]
    lines = [line.rstrip() for line in _split_lines(text)]
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines)


# Top-level keys moor reads (DESIGN §2, §7): a near miss of one is a problem.
KNOWN_KEYS = (
    "about",
    "watch",
    "confidence",
    "supersedes",
    "links",
    "title",
    "pinned",
    "agent",
    "author",
    "created",
    "source",
)


def misspelt_key(name: str) -> str | None:
    """The known key `name` was probably meant to be, if it is not one itself."""
    if name in KNOWN_KEYS:
        return None
    for known in KNOWN_KEYS:
        if name.casefold() == known:
            return known
    close = difflib.get_close_matches(name, KNOWN_KEYS, n=1, cutoff=0.75)
    if close and abs(len(close[0]) - len(name)) <= 2:
        return close[0]
    return None


def hash_memory_text(text: str) -> str:
    """`Memory.content_hash` for a memory's decoded text."""
    return digest_text(normalise_memory_text(text))


def hash_memory_text_without(text: str, lines: Iterable[int]) -> str:
    """`hash_memory_text` of the text with these lines (1-based, as the parser counts
    them) left out."""
    drop = set(lines)
    if text.startswith(_BOM):
        text = text[1:]
    kept = [line for number, line in enumerate(_split_lines(text), 1) if number not in drop]
    return hash_memory_text("\n".join(kept))


VALUE_SCHEME = "value/1"
_NOT_WORD = re.compile(r"[\W_]+")


def normalise_value(text: str) -> str:
    """Text as a forgotten value is compared: case, spacing and punctuation do not count
    (`Send()  retries!` and `send retries` are one value); words and their order do."""
    return _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def value_key(text: str) -> str:
    """The key of what `text` says; empty when it says nothing (which no tombstone holds)."""
    normal = normalise_value(text)
    return f"{VALUE_SCHEME} {digest_text(normal)}" if normal else ""


def parse_memory(path: str, data: bytes) -> ParsedMemory:
    """Parse one memory file; never raises. `path` is workspace-relative, '/'-separated."""
    try:
        return _parse(path, data)
    except Exception as exc:  # a bug here must not take a whole check down
        problem = Problem("internal_error", f"moor could not parse this file: {exc!r}", 1, 1)
        return ParsedMemory(None, (problem,))


# --- reading --------------------------------------------------------------------------------


def _split_lines(text: str) -> list[str]:
    """Lines as editors count them; never `str.splitlines` (it also splits on U+2028 etc.)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _invalid(problems: list[Problem]) -> ParsedMemory:
    return ParsedMemory(None, tuple(sorted(problems, key=lambda p: (p.line, p.column))))


def _decode(data: bytes) -> str | Problem:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8")  # valid up to the first bad byte
        if before.startswith(_BOM):
            before = before[1:]
        lines = _split_lines(before)
        return Problem(
            "invalid_utf8",
            f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            len(lines),
            len(lines[-1]) + 1,
        )


def _parse(path: str, data: bytes) -> ParsedMemory:
    decoded = _decode(data)
    if isinstance(decoded, Problem):
        return _invalid([decoded])
    text = decoded[1:] if decoded.startswith(_BOM) else decoded
    lines = _split_lines(text)
    if not _DELIMITER.fullmatch(lines[0]):
        return _invalid(
            [Problem("missing_frontmatter", "a memory starts with a '---' frontmatter line", 1, 1)]
        )
    close = next(
        (
            i
            for i in range(1, len(lines))
            if lines[i][:3] in ("---", "...") and _CLOSERS.fullmatch(lines[i])
        ),
        None,
    )
    if close is None:
        return _invalid(
            [
                Problem(
                    "unclosed_frontmatter",
                    "the frontmatter opened here is never closed by a '---' line",
                    1,
                    1,
                )
            ]
        )
    frontmatter = "".join(line + "\n" for line in lines[1:close])
    body = "\n".join(lines[close + 1 :])
    reader = _Frontmatter(frontmatter, first_line=2, last_line=close + 1)
    fields = reader.read()
    if reader.problems or fields is None:
        return _invalid(reader.problems)
    title, questions, prose = _scan_body(lines[close + 1 :])
    if title is None:
        title = fields.title or PurePosixPath(path).stem or path
    memory = Memory(
        path=path,
        title=title,
        about=fields.about,
        watch=fields.watch,
        confidence=fields.confidence,
        supersedes=fields.supersedes,
        links=types.MappingProxyType(fields.links),
        questions=questions,
        body=body,
        content_hash=hash_memory_text(text),
        about_line=fields.about_line,
        value=value_key(prose) or value_key(title),
        pinned=fields.pinned,
        created=fields.created,
        agent=fields.agent,
        agent_line=fields.agent_line,
        source=fields.source,
    )
    return ParsedMemory(memory, ())


# --- frontmatter ----------------------------------------------------------------------------


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


class _Frontmatter:
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
            fields.links = self._links(top["links"][1])
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

    def _links(self, node: Node) -> dict[str, tuple[str, ...]]:
        if _is_null(node):
            return {}
        if not _is_map(node):
            self.report(
                "links_not_a_mapping",
                f"'links' must map a relation to memory paths, not {_describe(node)}",
                node,
            )
            return {}
        links: dict[str, tuple[str, ...]] = {}
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
        return links

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


# --- body ---------------------------------------------------------------------------------


def _heading(line: str) -> tuple[int, str] | None:
    match = _ATX.fullmatch(line)
    if match is None:
        return None
    text = match.group(2) or ""
    if text.endswith("#"):
        text = _CLOSING_HASHES.sub("", text).strip()
    return len(match.group(1)), text


def _is_questions_heading(text: str) -> bool:
    return " ".join(text.split()).rstrip(" :?").lower() == QUESTIONS_HEADING


def _scan_body(lines: list[str]) -> tuple[str | None, tuple[str, ...], str]:
    """The first level-1 heading, the bullets under "When this changes, ask" headings, and
    the prose: every other line (what the memory says, for its `value`).

    Fenced code blocks are skipped. A questions section ends at the next heading of the
    same or a higher level. A bullet's continuation lines (up to a blank line) join it.
    """
    title: str | None = None
    questions: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    section_level = 0  # >0 while inside a questions section
    current: list[str] | None = None

    def finish() -> None:
        nonlocal current
        if current:
            text = " ".join(" ".join(current).split())
            if text:
                questions.append(text)
        current = None

    for line in lines:
        first = line.lstrip(" ")[:1]
        if not section_level:
            prose.append(line)  # a heading below takes itself out again
        if fence is not None:
            closing = _FENCE.fullmatch(line) if first == fence[0] else None
            if (
                closing
                and closing.group(1)[0] == fence[0]
                and len(closing.group(1)) >= len(fence)
                and not closing.group(2).strip()
            ):
                fence = None
            continue
        opening = _FENCE.fullmatch(line) if first in ("`", "~") else None
        if opening is not None and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            finish()
            fence = opening.group(1)
            continue
        heading = _heading(line) if first == "#" else None
        if heading is not None:
            finish()
            level, text = heading
            was_prose = not section_level
            if _is_questions_heading(text):
                section_level = level
            elif section_level and level <= section_level:
                section_level = 0
            is_title = title is None and level == 1 and bool(text)
            if is_title:
                title = text
            if was_prose and (is_title or section_level):
                prose.pop()
            elif not was_prose and not section_level and not is_title:
                prose.append(line)
            continue
        if not section_level:
            continue
        if line.strip() == "":
            finish()
            continue
        if _THEMATIC_BREAK.fullmatch(line):
            finish()
            continue
        bullet = _BULLET.fullmatch(line)
        if bullet is not None:
            finish()
            item = (bullet.group(1) or "").strip()
            if item.startswith("["):
                item = _CHECKBOX.sub("", item, count=1)
            current = [item]
        elif current is not None:
            current.append(line.strip())
    finish()
    return title, tuple(questions), "\n".join(prose)
