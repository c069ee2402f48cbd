"""Memory files: YAML frontmatter + Markdown body (docs/memories.md), parsed without ever raising.

`parse_memory` turns the bytes of one memory file into a `Memory`, or into positioned
`Problem`s that make the memory ``invalid`` (docs/memories.md). Positions are 1-based; lines are
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

import re
import types
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from .digest import digest_text
from .model import DEFAULT_WATCH

CONFIDENCE_LEVELS: tuple[str, ...] = ("verified", "inferred", "unverified")
# Budgets for the frontmatter: each is ~100x what a real memory uses (the largest of moor's
# own is 634 characters, 4 deep, no merges) and keeps the worst case well under 100 ms.
MAX_FRONTMATTER_CHARS = 65536
MAX_DEPTH = 64
MAX_MERGED_ITEMS = 10_000
DEFAULT_CONFIDENCE = "unverified"
QUESTIONS_HEADING = "when this changes, ask"
_BOM = "\ufeff"

_DELIMITER = re.compile(r"---[ \t]*")
_CLOSERS = re.compile(r"(?:---|\.\.\.)[ \t]*")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_BULLET = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?")
_CHECKBOX = re.compile(r"^\[[ xX]\][ \t]+")


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
    # whether it names a namespace is the engine's decision (moor_engine/memory/namespaces.py).
    agent: str | None = None
    agent_line: int = 0
    # `source:` as written (`KIND:NAME`): a sidecar binding a note moor only reads.
    source: str | None = None
    # (relation, target, line, column) of each `links:` target as written.
    link_places: tuple[tuple[str, str, int, int], ...] = ()


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


# Top-level keys moor reads (docs/memories.md): a near miss of one is a problem.
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
    import difflib  # only for a key moor does not read

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
    # YAML is imported only here: a warm check reads memories from the journal's cache.
    from .frontmatter import Frontmatter

    reader = Frontmatter(frontmatter, first_line=2, last_line=close + 1)
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
        link_places=fields.link_places,
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
