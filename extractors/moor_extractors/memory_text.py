"""Writing memory files: the text of a new memory, and one section of one replaced.

The reading side is `memory.py`; what this module writes is checked by parsing it back
there (the engine refuses a write whose text does not parse to what was asked).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import yaml

from .memory import _FENCE, QUESTIONS_HEADING, _heading, _split_lines

TITLE_CHARS = 72  # a longer first line is cut at a word and the whole text kept as the body
SLUG_CHARS = 60
_SLUG_JUNK = re.compile(r"[^a-z0-9]+")
_QUESTIONS_TITLE = "When this changes, ask"


def title_of(text: str) -> tuple[str, str]:
    """(title, body) for a memory written from `text`: a short one-line text is its own
    title (and no body); otherwise the first line, cut at a word, titles the whole text."""
    text = text.strip()
    first = " ".join(text.split("\n", 1)[0].split())
    if "\n" not in text and len(first) <= TITLE_CHARS:
        return first, ""
    if len(first) > TITLE_CHARS:
        cut = first[: TITLE_CHARS + 1].rsplit(" ", 1)[0] or first[:TITLE_CHARS]
        first = cut.rstrip(" ,;:.-") + "…"
    return first, text


def slug(title: str) -> str:
    """A file name for a memory titled `title`: lowercase ASCII words joined by hyphens."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    words = _SLUG_JUNK.sub("-", ascii_text.lower()).strip("-")
    if len(words) > SLUG_CHARS:
        words = words[: SLUG_CHARS + 1].rsplit("-", 1)[0] or words[:SLUG_CHARS]
    return words.strip("-") or "memory"


@dataclass(frozen=True)
class NewMemory:
    title: str
    body: str
    about: Sequence[str]
    confidence: str
    created: str
    questions: Sequence[str] = ()
    author: str | None = None
    agent: str | None = None
    supersedes: Sequence[str] = ()
    source: str | None = None  # `KIND:NAME`: a sidecar binding a note moor only reads


def compose(new: NewMemory) -> str:
    """The text of a new memory file (docs/memories.md), ending with its questions section."""
    front: dict[str, object] = {}
    if new.about:
        front["about"] = list(new.about)
    front["confidence"] = new.confidence
    if new.supersedes:
        front["supersedes"] = list(new.supersedes)
    if new.author:
        front["author"] = new.author
    if new.agent:
        front["agent"] = new.agent
    if new.source:
        front["source"] = new.source
    front["created"] = new.created
    frontmatter = yaml.safe_dump(
        front, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000
    )
    title = " ".join(new.title.split())
    parts = [f"---\n{frontmatter}---\n# {title}\n"]
    if new.body.strip():
        parts.append(f"\n{new.body.strip()}\n")
    questions = [" ".join(q.split()) for q in new.questions if q.strip()]
    if questions:
        parts.append(f"\n## {_QUESTIONS_TITLE}\n")
        parts.extend(f"- {q}\n" for q in questions)
    return "".join(parts)


def _section_name(text: str) -> str:
    return " ".join(text.split()).rstrip(" :?").casefold()


def sections(text: str) -> list[tuple[int, int, str]]:
    """Every heading of a memory's body, outside fenced code: (line index, level, text)."""
    lines = _split_lines(text)
    found: list[tuple[int, int, str]] = []
    fence: str | None = None
    body = False
    delimiters = 0
    for index, line in enumerate(lines):
        if not body:
            if line.rstrip() in ("---", "...") and (delimiters or line.rstrip() == "---"):
                delimiters += 1
                body = delimiters == 2
            continue
        opening = _FENCE.fullmatch(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening is not None:
            fence = opening.group(1)
            continue
        heading = _heading(line) if line.lstrip(" ").startswith("#") else None
        if heading is not None:
            found.append((index, heading[0], heading[1]))
    return found


def replace_section(text: str, name: str, content: str) -> str | None:
    """`text` with what is under the heading named `name` (up to the next heading) replaced
    by `content`; None when no heading has that name. The names compare without case,
    spacing, or a trailing colon or question mark, as the questions heading is found."""
    wanted = _section_name(name)
    heads = sections(text)
    for number, (index, _level, heading) in enumerate(heads):
        if _section_name(heading) != wanted:
            continue
        lines = _split_lines(text)
        end = heads[number + 1][0] if number + 1 < len(heads) else len(lines)
        new = ["", *_split_lines(content.strip("\n"))] if content.strip() else []
        tail = lines[end:]
        if tail and tail != [""]:
            new.append("")
        elif not tail:
            tail = [""]
        return "\n".join([*lines[: index + 1], *new, *tail])
    return None


def section_names(text: str) -> list[str]:
    return [heading for _index, _level, heading in sections(text)]


def is_questions(name: str) -> bool:
    return _section_name(name) == QUESTIONS_HEADING
