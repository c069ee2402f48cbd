"""What looking for vanished code found (`relocate.py` looks). Its own module because every
check names these types while only a check with a vanished target loads the search."""

from __future__ import annotations

from dataclasses import dataclass

from moor_extractors.reference import Reference

from moor_engine.grounding.trust import Candidate


@dataclass(frozen=True)
class Relocation:
    ref: Reference
    how: str  # "moved" (same name, another file) or "renamed" (same body, another name)


@dataclass(frozen=True)
class Search:
    """What looking for vanished code found: a relocation, or candidates (best first) and
    why none of them was taken."""

    relocation: Relocation | None = None
    candidates: tuple[Candidate, ...] = ()
    why: str | None = None
