# ruff: noqa: RUF002, RUF003  (look-alikes are what this file is about)
"""How text reads to a model or a Markdown renderer once look-alikes are read as what they
imitate — so that `framing` finds moor's delimiters in memory text however they are spelled.

A character is read as its compatibility decomposition (NFKD: fullwidth `＜／＞` are `</>`),
without default-ignorable code points, format characters, controls or combining marks
(U+200B-U+200D, U+2060, U+FEFF, U+00AD…: a word they split still reads whole), casefolded,
and with the common look-alikes of `<`, `>`, `/` and of the letters of moor's delimiter
words (`memory`, `memories`, `moor`) and trust states (`current`, `drifted`…) read as those
(Cyrillic `о`, Greek `ο`…). An HTML entity (`&lt;`, `&#60;`, `&#x3c;`, the legacy `&lt`
without its `;`) reads as what it decodes to. Line and paragraph separators read as line
ends.

The reading keeps, for each character it has, the span of the text it came from, so a
caller can break the writer's own characters, visibly, rather than the reading.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from moor_engine.agents.angles import LINE_ENDS

# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt, Unicode 15.1).
_IGNORABLE = (
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
# After casefolding: what looks like `<`, `>`, `/`, or a letter of memory/memories/moor or
# of a trust state's name (from Unicode's confusables, the ones a model or a reader would take
# for them). Moor's own broken signs, U+2039 and U+203A, are deliberately not among them.
_LOOKS_LIKE = {
    "<": "\u02c2\u1438",  # ˂ ᐸ
    ">": "\u02c3\u1433",  # ˃ ᐳ
    "/": "\u2044\u2215\u29f8",  # ⁄ ∕ ⧸
    "a": "\u0430\u03b1\u0251",  # а α ɑ
    "b": "\u0185\u044c",  # ƅ ь
    "c": "\u0441\u03f2\u1d04",  # с ϲ ᴄ
    "d": "\u0501",  # ԁ
    "e": "\u0435\u04bd\u212e\u03b5",  # е ҽ ℮ ε
    "g": "\u0261\u0581",  # ɡ ց
    "i": "\u0456\u03b9\u0131\u0269\u04cf",  # і ι ı ɩ ӏ
    "l": "\u01c0",  # ǀ
    "m": "\u043c\u03bc\u1d0d",  # м μ ᴍ
    "n": "\u0578",  # ո
    "o": "\u043e\u03bf\u0585\u03c3\u1d0f0\u0b66",  # о ο օ σ ᴏ 0 ୦
    "r": "\u0433\u1d26\u2c85\uab47\uab48",  # г ᴦ ⲅ ꭇ ꭈ
    "s": "\u0455\ua731\u01bd",  # ѕ ꜱ ƽ
    "t": "\u0442",  # т
    "u": "\u057d\u1d1c\u028b",  # ս ᴜ ʋ
    "v": "\u03bd\u0475\u1d20",  # ν ѵ ᴠ
    "w": "\u0461\u051d\u1d21",  # ѡ ԝ ᴡ
    "y": "\u0443\u04af\u03b3\u028f\u03c5",  # у ү γ ʏ υ
}
_AS = str.maketrans({look: plain for plain, looks in _LOOKS_LIKE.items() for look in looks})
_DROPPED = frozenset(("Mn", "Me", "Cf", "Cc"))
# Printable ASCII but `&`, with tabs and line feeds: what most memory text is made of, read
# a run at a time (casefolded, `0` as `o`, a tab as a space) with no table look-up per character.
_PLAIN = re.compile(r"[\t\n\x20-\x25\x27-\x7e]+")
_PLAIN_AS = str.maketrans({"\t": " ", "0": "o", **{chr(c): chr(c + 32) for c in range(65, 91)}})
_OTHER = re.compile(r"[^\t\n\x20-\x7e]+")
_ENTITY = re.compile(r"&(?:#[xX][0-9a-fA-F]{1,8};?|#[0-9]{1,10};?|([A-Za-z][A-Za-z0-9]{0,31});?)")


def _ignorable(point: int) -> bool:
    return any(low <= point <= high for low, high in _IGNORABLE)


@lru_cache(maxsize=8192)
def read_as(char: str) -> str:
    """How one character (or one decoded entity) reads."""
    out = []
    for part in unicodedata.normalize("NFKD", char):
        if part in LINE_ENDS:
            out.append("\n")
        elif part == "\t":
            out.append(" ")
        elif _ignorable(ord(part)) or unicodedata.category(part) in _DROPPED:
            continue
        elif unicodedata.category(part) == "Zs" or part == "\u2800":
            out.append(" ")
        else:
            out.append(part.casefold().translate(_AS))
    return "".join(out)


@dataclass(frozen=True)
class Reading:
    """How a text reads, and for each character of the reading the span of the text it
    comes from: runs of plain ASCII read one to one, each other character or entity as a
    unit (one span for all it reads as; none when it reads as nothing)."""

    text: str
    _starts: tuple[int, ...]  # where each run or unit starts in `text`
    _origins: tuple[tuple[int, int | None], ...]  # its start in the source; its end, for a unit

    def span(self, index: int) -> tuple[int, int]:
        """The span of the source the reading's character at `index` comes from."""
        run = bisect_right(self._starts, index) - 1
        start, end = self._origins[run]
        if end is None:
            at = start + index - self._starts[run]
            return at, at + 1
        return start, end


def _entity(text: str, at: int) -> tuple[str, int] | None:
    """The entity at `at` — what it decodes to and where it ends — or None. A named one
    without its `;` is the longest legacy name it starts with (`&ltmemory` is `<memory`),
    as an HTML renderer reads it."""
    match = _ENTITY.match(text, at)
    if match is None:
        return None
    whole, name = match.group(0), match.group(1)
    if name is None:
        digits = whole[2:].rstrip(";")
        point = int(digits[1:], 16) if digits[:1] in "xX" else int(digits)
        decoded = (
            chr(point) if 0 < point <= 0x10FFFF and not 0xD800 <= point <= 0xDFFF else "\ufffd"
        )
        return decoded, match.end()
    from html.entities import html5  # a table of 2,231 names: loaded for a named entity only

    if whole.endswith(";") and f"{name};" in html5:
        return html5[f"{name};"], match.end()
    for end in range(len(name), 0, -1):
        if name[:end] in html5:  # the legacy names, valid without `;`
            return html5[name[:end]], at + 1 + end
    return None


def reading(text: str) -> Reading:
    """`text` as it reads, with where each character of the reading comes from."""
    parts: list[str] = []
    starts: list[int] = []
    origins: list[tuple[int, int | None]] = []
    length = 0

    def add(part: str, origin: tuple[int, int | None]) -> None:
        nonlocal length
        if part:
            parts.append(part)
            starts.append(length)
            origins.append(origin)
            length += len(part)

    at = 0
    while at < len(text):
        plain = _PLAIN.match(text, at)
        if plain is not None:
            add(plain.group(0).translate(_PLAIN_AS), (at, None))
            at = plain.end()
        elif text[at] == "&":
            entity = _entity(text, at)
            decoded, end = entity if entity is not None else ("&", at + 1)
            add("".join(read_as(char) for char in decoded), (at, end))
            at = end
        else:  # a run of other characters: those that read as one character, one to one
            run = _OTHER.match(text, at)
            assert run is not None
            alike: list[str] = []
            alike_from = at
            for index in range(at, run.end()):
                read = read_as(text[index])
                if len(read) == 1:
                    alike.append(read)
                    continue
                add("".join(alike), (alike_from, None))
                add(read, (index, index + 1))
                alike, alike_from = [], index + 1
            add("".join(alike), (alike_from, None))
            at = run.end()
    return Reading("".join(parts), tuple(starts), tuple(origins))
