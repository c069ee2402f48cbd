# ruff: noqa: RUF001, RUF002  (look-alikes are what this file is about)
"""A strict reader of moor's frame, written apart from the engine's so that the tests do not
grade the engine by its own rule: how a model (or a Markdown renderer) could read framed
text once every look-alike is read as what it imitates.

Each character is read after HTML entities are decoded (`&lt;`, `&#60;`, `&#x3c;`, `&lt`),
its compatibility decomposition (NFKD, so fullwidth `＜／＞` are `</>`), with default-ignorable
code points, format characters and combining marks dropped (U+200B, U+00AD, U+FEFF…),
casefolded, and with letters that look like those of moor's words read as them (Cyrillic
`о`, Greek `ο`…). Moor's broken `<` (U+2039) and `>` (U+203A) are not read as `<`, `>`.

In that reading a delimiter is `<memory…`/`</memory…` (or `memories`), a marker the start of
`<!-- moor:`; a trust line is a line that reads as moor's warning line (`> drifted: …`,
`> current since …: …`) — the only other place a trust state is written is moor's own
opening line.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field

STATES = (
    "invalid",
    "retired",
    "gone",
    "drifted",
    "moved",
    "rewritten",
    "unverified",
    "unbound",
    "ungrounded",
    "current",
)
# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt).
IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
# Look-alikes (after casefolding) of `<`, `>`, `/` and the letters of memory, memories, moor
# and of the trust states' names.
LOOKS_LIKE = {
    "<": "˂ᐸ",
    ">": "˃ᐳ",
    "/": "⁄∕⧸",
    "a": "аαɑ",
    "b": "ƅь",
    "c": "сϲᴄ",
    "d": "ԁ",
    "e": "еҽ℮ε",
    "g": "ɡց",
    "i": "іιıɩӏ",
    "l": "ǀ",
    "m": "мμᴍ",
    "n": "ո",
    "o": "оοօσᴏ0୦",
    "r": "гᴦⲅꭇꭈ",
    "s": "ѕꜱƽ",
    "t": "т",
    "u": "սᴜʋ",
    "v": "νѵᴠ",
    "w": "ѡԝᴡ",
    "y": "уүγʏυ",
}
_AS = {look: plain for plain, looks in LOOKS_LIKE.items() for look in looks}
_NEWLINES = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

OPEN = re.compile(r"<\s*memor(?:y|ies)(?=[\s>/]|$)")
CLOSE = re.compile(r"<\s*/\s*memor(?:y|ies)(?=[\s>/]|$)")
MARKER = re.compile(r"<\s*!--\s*moor\s*:")
TRUST = re.compile(
    rf"^[^\S\n]*>[^\S\n>]*(?:>[^\S\n]*)*(?:{'|'.join(STATES)})\b(?:[^\S\n]+since\b[^:\n]*)?[^\S\n]*:"
)
# moor's own opening line, as framing writes it.
OPENING = re.compile(
    r'<memory path="([^"]*)" state="([^"]*)" about="([^"]*)"(?: warning="([^"]*)")?>'
)


def ignorable(char: str) -> bool:
    point = ord(char)
    return any(low <= point <= high for low, high in IGNORABLE)


def reads_as(text: str) -> str:
    """`text` as it reads once every look-alike is read as what it imitates."""
    out = []
    for char in unicodedata.normalize("NFKD", html.unescape(text)):
        category = unicodedata.category(char)
        if char in _NEWLINES:
            out.append("\n")
        elif ignorable(char) or (category in ("Mn", "Me", "Cf", "Cc") and char != "\t"):
            continue
        elif category == "Zs" or char == "\u2800":
            out.append(" ")
        else:
            folded = char.casefold()
            out.append("".join(_AS.get(c, c) for c in folded))
    return "".join(out)


@dataclass
class Frame:
    path: str
    state: str
    about: str
    warning: str | None
    body: list[str] = field(default_factory=list)  # the lines between the two delimiters
    raw: str = ""  # those lines as written, line ends included


@dataclass
class Reading:
    frames: list[Frame]
    opens: int  # opening delimiters anywhere, in the look-alike reading
    closes: int
    markers: int
    trust_lines: list[str]  # lines that read as moor's warning line, wherever they are
    problems: list[str]  # structure a strict reader of moor's frame would not accept


def read_frame(text: str, preamble: str) -> Reading:
    """Read moor's framed output: the preamble (moor's own text, naming the delimiters it
    explains) set aside, every delimiter, marker and trust line counted in the look-alike
    reading (so one spelled across a line break counts too), then the lines walked as a
    strict reader would: an opening line moor writes, body lines, `</memory>`."""
    text = text.replace(preamble, "")
    read = reads_as(text)
    reading = Reading(
        frames=[],
        opens=len(OPEN.findall(read)),
        closes=len(CLOSE.findall(read)),
        markers=len(MARKER.findall(read)),
        trust_lines=[line for line in text.splitlines() if TRUST.search(reads_as(line))],
        problems=[],
    )
    current: Frame | None = None
    for number, ended in enumerate(text.splitlines(keepends=True), 1):
        line = ended.rstrip(_NEWLINES + "\n")
        read_line = reads_as(line)
        opening = OPENING.fullmatch(line)
        if current is None:
            if opening is not None:
                path, state, about, warning = opening.groups()
                current = Frame(path, state, about, warning)
            elif OPEN.search(read_line) or CLOSE.search(read_line):
                reading.problems.append(f"line {number} outside a frame: {line!r}")
        elif line == "</memory>":
            reading.frames.append(current)
            current = None
        else:
            if OPEN.search(read_line) or CLOSE.search(read_line):
                reading.problems.append(f"line {number} in {current.path}: {line!r}")
            current.body.append(line)
            current.raw += ended
    if current is not None:
        reading.problems.append(f"{current.path} is never closed")
    return reading


def kept(original: str, shown: str) -> bool:
    """`shown` is `original` with nothing deleted: at most some units (a character, an
    entity) replaced by moor's broken `<` (U+2039) or `>` (U+203A), every other character
    kept, in order."""
    pattern = "".join(".{1,12}?" if char in "\u2039\u203a" else re.escape(char) for char in shown)
    return re.fullmatch(pattern, original, re.DOTALL) is not None
