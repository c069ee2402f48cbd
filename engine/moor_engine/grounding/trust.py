"""Trust states (docs/memories.md) and the reports that carry them. Derived, never stored."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class State(StrEnum):
    INVALID = "invalid"
    RETIRED = "retired"
    GONE = "gone"
    DRIFTED = "drifted"
    MOVED = "moved"
    REWRITTEN = "rewritten"
    UNVERIFIED = "unverified"
    UNBOUND = "unbound"
    UNGROUNDED = "ungrounded"
    CURRENT = "current"


# Worst first: a memory's state is the worst of its own and its anchors' states.
SEVERITY_ORDER: tuple[State, ...] = tuple(State)
_RANK = {state: rank for rank, state in enumerate(SEVERITY_ORDER)}
# States a person need not look at: `moor check` exits 0 when every memory is in one.
QUIET_STATES = frozenset({State.CURRENT, State.UNGROUNDED, State.RETIRED})


def needs_look(memory: MemoryReport) -> bool:
    """Whether a person should look at this memory (`moor check` exits 1 for it). A memory
    that says what was forgotten or superseded is retired (kept from recall) yet still needs
    someone to delete it or restore the retired one: its text came back by hand."""
    return memory.state not in QUIET_STATES or memory.code in ("tombstoned", "superseded_text")


def worst(states: list[State]) -> State:
    return min(states, key=_RANK.__getitem__, default=State.CURRENT)


@dataclass(frozen=True)
class Candidate:
    """A place vanished code may be now (a canonical reference), for a person to confirm."""

    ref: str
    similarity: float | None  # of the normalised token streams, 0..1; None: not measured

    def describe(self) -> str:
        if self.similarity is None:
            return self.ref
        return f"{self.ref} ({round(self.similarity * 100)} % similar)"

    def as_json(self) -> dict[str, object]:
        similarity = None if self.similarity is None else round(self.similarity, 3)
        return {"ref": self.ref, "similarity": similarity}


@dataclass
class AnchorReport:
    """One anchor of a memory, as a check found it: its trust state, and where it is written."""

    ref: str  # the reference as written in the memory
    state: State
    canonical: str | None = None
    line: int = 0  # where the reference is written in the memory file (1-based)
    column: int = 0
    end_line: int = 0  # where it ends (0 when unknown), for editors to underline it whole
    end_column: int = 0
    axes: list[str] = field(default_factory=list)  # watched axes that moved
    reason: str | None = None  # failure class, for `unverified` and `invalid`
    code: str | None = None
    detail: str | None = None
    moved_to: str | None = None
    # Where vanished code may be now, best first (`gone` only): never followed by itself.
    candidates: list[Candidate] = field(default_factory=list)
    # Existing references close to one that names nothing and was never bound (did you mean).
    suggestions: list[str] = field(default_factory=list)
    bound_address: str | None = None
    address: str | None = None
    # A drift said in a line (`Optional[X]` → `X | None`), also at the end of `detail`: only
    # where the bound code could be read here (a journal or git), so a text every clone must
    # compute alike uses `plain_detail`.
    change: str | None = None
    # A custom anchor's probe: its kind, reproducibility (`closed`/`open`) and streak.
    probe: dict[str, object] | None = None

    @property
    def plain_detail(self) -> str | None:
        """`detail` without the one-line change."""
        if self.change and self.detail and self.detail.endswith(f": {self.change}"):
            return self.detail[: -len(self.change) - 2]
        return self.detail

    def as_json(self) -> dict[str, object]:
        shown: dict[str, object] = {
            "ref": self.ref,
            "state": self.state.value,
            "axes": self.axes,
            "reason": self.reason,
            "code": self.code,
            "detail": self.detail,
            "change": self.change,
            "moved_to": self.moved_to,
            "candidates": [candidate.as_json() for candidate in self.candidates],
            "suggestions": self.suggestions,
            "line": self.line,
        }
        if self.probe is not None:
            shown["probe"] = self.probe
        return shown


@dataclass(frozen=True)
class LinkFinding:
    """What a memory's `links:` call for (moor_engine.grounding.links)."""

    code: str  # "contradicts_current" or "missing_link"
    relation: str
    target: str
    message: str
    line: int  # where the target is written in the memory file (1-based)
    column: int
    suggestion: str | None = None  # for a missing memory: the closest existing one

    def as_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "relation": self.relation,
            "target": self.target,
            "message": self.message,
            "line": self.line,
            "column": self.column,
            "suggestion": self.suggestion,
        }


@dataclass
class MemoryReport:
    """One memory, as a check found it: its state (its anchors' worst) and why."""

    path: str
    state: State
    title: str = ""
    anchors: list[AnchorReport] = field(default_factory=list)
    # Memory-level findings: parse problems, rewritten text, lock problems.
    notes: list[str] = field(default_factory=list)
    line: int = 1  # where a memory-level finding points (e.g. the `about:` key)
    column: int = 1
    code: str | None = None
    # What its `links:` call for (moor_engine.grounding.links): never part of the state.
    link_findings: list[LinkFinding] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "state": self.state.value,
            "title": self.title,
            "code": self.code,
            "notes": self.notes,
            "anchors": [anchor.as_json() for anchor in self.anchors],
            "link_findings": [finding.as_json() for finding in self.link_findings],
        }


@dataclass
class Report:
    """What a check found: every memory it was asked about."""

    memories: list[MemoryReport]
    rebaselined: int = 0  # anchors re-baselined after a derivation change

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for memory in self.memories:
            counts[memory.state.value] = counts.get(memory.state.value, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: _RANK[State(item[0])]))

    @property
    def needs_attention(self) -> bool:
        return any(needs_look(memory) for memory in self.memories)

    def as_json(self) -> dict[str, object]:
        return {
            "memories": [memory.as_json() for memory in self.memories],
            "summary": self.summary(),
        }
