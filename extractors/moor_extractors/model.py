"""Plain data shared by every layer: what a probe can see and how it can fail.

Nothing here imports tree-sitter or SQLite; these are the words of docs/memories.md and
ARCHITECTURE.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

AXES: tuple[str, ...] = ("kind", "signature", "decorators", "body", "doc", "place", "text")
DEFAULT_WATCH: tuple[str, ...] = ("kind", "signature", "decorators", "body")
# A whole file or a Markdown section has one meaningful axis besides raw text.
FILE_AXES: tuple[str, ...] = ("body", "text")


class Reason(StrEnum):
    """Failure classes (docs/memories.md). A failure is an attempt, never drift."""

    UNREACHABLE = "unreachable"
    UNUSABLE = "unusable"
    UNEVALUABLE = "unevaluable"


@dataclass(frozen=True)
class Failure:
    """Why an observation could not be made."""

    reason: Reason
    code: str
    detail: str


@dataclass(frozen=True, slots=True)
class DefinitionSite:
    """Where a definition is in one file, found cheaply (no normalisation yet).

    `line`/`end_line` are 1-based and include decorators/attributes; `start_byte`/`end_byte`
    cover the same span. `has_error` is true when the syntax tree has an ERROR or MISSING
    node inside the span.
    """

    qname: str
    kind: str
    line: int
    end_line: int
    start_byte: int
    end_byte: int
    has_error: bool = False


@dataclass(frozen=True, slots=True)
class Facts:
    """What a probe saw: per-axis digests of the normalised token streams."""

    kind: str
    axes: Mapping[str, str] = field(default_factory=dict)
