"""Text positions: moor counts in code points, LSP in the negotiated encoding's code units.

The engine reports 1-based lines and columns counted in Unicode code points, without a
leading BOM (`moor_extractors.memory`). LSP positions are 0-based and count UTF-16 code
units unless the client negotiated `utf-8` or `utf-32`. A `Span` keeps the text of the
lines it starts and ends on, so it can be converted later for whichever encoding the
client chose. No protocol types here: this module is plain data, testable on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"
_BOM = "\ufeff"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines as editors count them (`\\n`, `\\r\\n` and a lone `\\r` end a line, nothing
    else: never `str.splitlines`, which also splits on U+2028 and form feeds), without
    a leading BOM — the same convention as the memory parser's positions."""
    if text.startswith(_BOM):
        text = text[1:]
    return _LINE_BREAK.split(text)


def code_units(text: str, encoding: str) -> int:
    """How many code units `text` takes in the client's position encoding."""
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def to_client_character(line_text: str, column: int, encoding: str) -> int:
    """A 0-based code-point column on `line_text` as a client `character`."""
    column = max(0, min(column, len(line_text)))
    return code_units(line_text[:column], encoding)


def from_client_character(line_text: str, character: int, encoding: str) -> int:
    """A client `character` on `line_text` as a 0-based code-point column (clamped to the
    line; a position inside a surrogate pair or a UTF-8 sequence rounds up)."""
    if encoding == UTF32:
        return max(0, min(character, len(line_text)))
    units = 0
    for index, char in enumerate(line_text):
        if units >= character:
            return index
        units += code_units(char, encoding)
    return len(line_text)


@dataclass(frozen=True)
class Span:
    """A range of text: 0-based lines, 0-based code-point columns, end exclusive, with the
    text of its first and last line (what a conversion to client units needs)."""

    start_line: int
    start_column: int
    end_line: int
    end_column: int
    start_text: str = ""
    end_text: str = ""

    def client_range(self, encoding: str) -> tuple[int, int, int, int]:
        """(start line, start character, end line, end character) in client units."""
        return (
            self.start_line,
            to_client_character(self.start_text, self.start_column, encoding),
            self.end_line,
            to_client_character(self.end_text, self.end_column, encoding),
        )

    def contains(self, line: int, column: int) -> bool:
        """Whether a code-point position is inside the span (its end included, so a cursor
        just after a reference still counts as on it)."""
        after_start = (line, column) >= (self.start_line, self.start_column)
        return after_start and (line, column) <= (self.end_line, self.end_column)


def span_in_lines(
    lines: list[str], line: int, column: int, end_line: int | None = None, end_column: int = 0
) -> Span:
    """A span from the engine's 1-based (line, column) — to `end_line`/`end_column` when
    known, else to the end of that line — clamped to the text."""
    start = _clamp_line(lines, line - 1)
    start_text = lines[start] if lines else ""
    start_column = max(0, min(column - 1, len(start_text)))
    if end_line is None or end_line < line:
        return Span(start, start_column, start, len(start_text), start_text, start_text)
    end = _clamp_line(lines, end_line - 1)
    end_text = lines[end] if lines else ""
    end_col = max(0, min(end_column - 1, len(end_text)))
    if (end, end_col) < (start, start_column):
        end, end_col, end_text = start, start_column, start_text
    return Span(start, start_column, end, end_col, start_text, end_text)


def _clamp_line(lines: list[str], index: int) -> int:
    return max(0, min(index, len(lines) - 1)) if lines else 0


def span_of_bytes(source: bytes, start_byte: int, end_byte: int) -> Span:
    """The span covering `source[start_byte:end_byte]` (a tree-sitter definition)."""
    return Span(
        *_point(source, start_byte),
        *_point(source, end_byte),
        *_texts(source, start_byte, end_byte),
    )


def _point(source: bytes, offset: int) -> tuple[int, int]:
    offset = max(0, min(offset, len(source)))
    line = source.count(b"\n", 0, offset)
    line_start = source.rfind(b"\n", 0, offset) + 1
    prefix = source[line_start:offset].decode("utf-8", "replace")
    if line == 0 and prefix.startswith(_BOM):
        prefix = prefix[1:]
    return line, len(prefix)


def _texts(source: bytes, start_byte: int, end_byte: int) -> tuple[str, str]:
    return _line_text(source, start_byte), _line_text(source, end_byte)


def _line_text(source: bytes, offset: int) -> str:
    offset = max(0, min(offset, len(source)))
    line_start = source.rfind(b"\n", 0, offset) + 1
    line_end = source.find(b"\n", offset)
    raw = source[line_start : len(source) if line_end < 0 else line_end]
    text = raw.decode("utf-8", "replace").rstrip("\r")
    return text[1:] if line_start == 0 and text.startswith(_BOM) else text


def path_to_uri(path: Path) -> str:
    return path.as_uri()


def uri_to_path(uri: str) -> Path | None:
    """The local path of a `file:` URI, or None for any other scheme."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))
