"""What a person may do about a memory now, and which command comes next.

One place for every surface (ARCHITECTURE.md, "Where each decision lives"): the actions
refuse by these rules, the CLI prints the next command from them, and the language server
offers code actions by them, so no surface can allow what another refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

from moor_engine.trust import AnchorReport, MemoryReport, State

# Anchor states a reaffirmation accepts; any other blocks the whole memory (all or none).
REAFFIRMABLE = frozenset({State.CURRENT, State.DRIFTED, State.UNBOUND})
_REAFFIRM_BLOCKERS = {
    State.MOVED: "it moved: `moor follow` it first",
    State.GONE: "it is gone: `moor follow --to` its new place, or edit the memory",
    State.UNVERIFIED: "it cannot be observed now",
    State.INVALID: "the reference is invalid",
}


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    why: str = ""  # why not (empty when allowed)


def reaffirm_verdict(memory: MemoryReport) -> Verdict:
    if memory.state == State.INVALID and not memory.anchors:
        return Verdict(False, "the memory is invalid: " + "; ".join(memory.notes))
    blocked = [
        f"{anchor.ref}: {_REAFFIRM_BLOCKERS.get(anchor.state, anchor.state.value)}"
        for anchor in memory.anchors
        if anchor.state not in REAFFIRMABLE
    ]
    if blocked:
        return Verdict(False, "; ".join(blocked))
    return Verdict(True)


def follow_verdict(memory: MemoryReport) -> Verdict:
    """Whether `moor follow MEMORY` (without `--to`) has a move to follow."""
    if any(a.state == State.MOVED and a.moved_to for a in memory.anchors):
        return Verdict(True)
    return Verdict(False, "nothing moved")


def bind_verdict(memory: MemoryReport) -> Verdict:
    if any(a.state == State.UNBOUND for a in memory.anchors):
        return Verdict(True)
    return Verdict(False, "every reference is bound")


def next_step(memory: MemoryReport, anchor: AnchorReport | None) -> str | None:
    """The command a person runs next for a finding (None when there is nothing to do)."""
    path = memory.path
    state = anchor.state if anchor is not None else memory.state
    if state == State.DRIFTED:
        return f'moor diff {path}, then moor reaffirm {path} --why "..."'
    if state == State.MOVED:
        return f"moor diff {path}, then moor follow {path}"
    if state == State.GONE and anchor is not None:
        if anchor.candidates:
            return f"moor follow {path} --from {anchor.ref} --to {anchor.candidates[0].ref}"
        if anchor.suggestions:
            return f"edit {path}: write {anchor.suggestions[0]} instead, then moor bind {path}"
        return f"edit {path}: its reference names code that no longer exists"
    if state == State.UNBOUND:
        return f"moor bind {path}"
    if state == State.REWRITTEN:
        return f'moor reaffirm {path} --why "..."'
    return None
