"""What a person may do about a memory now, and which command comes next.

One place for every surface (ARCHITECTURE.md, "Where each decision lives"): the actions
refuse by these rules, the CLI prints the next command from them, and the language server
offers code actions by them, so no surface can allow what another refuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from moor_engine.grounding.trust import AnchorReport, MemoryReport, State, worst

# Anchor states a reaffirmation accepts; any other blocks the whole memory (all or none).
REAFFIRMABLE = frozenset({State.CURRENT, State.DRIFTED, State.UNBOUND})
_REAFFIRM_BLOCKERS = {
    State.MOVED: "it moved: `moor follow` it first",
    State.GONE: "it is gone: `moor follow --to` its new place, or edit the memory",
    State.UNVERIFIED: "it cannot be observed now",
    State.INVALID: "the reference is invalid",
}


# Unverified anchors a person may still accept: the code is observable, only its bound
# digests cannot be compared (an older normaliser, bound code not recoverable).
REAFFIRMABLE_CODES = frozenset({"older_derivation_unverifiable"})


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    why: str = ""  # why not (empty when allowed)
    # Why not, stably, for a program (empty when allowed): the refusal's code in the
    # action's `Written` (MCP's refusal, the CLI's JSON).
    code: str = ""


def reaffirm_verdict(memory: MemoryReport) -> Verdict:
    """Whether `moor reaffirm MEMORY` may accept the code as it is now. Refused: `invalid`
    (the memory), `forgotten` (its text), or the state of the worst anchor that blocks it
    (`gone`, `moved`, `unverified`, `invalid`)."""
    if memory.state == State.INVALID and not memory.anchors:
        return Verdict(False, "the memory is invalid: " + "; ".join(memory.notes), "invalid")
    if memory.code in ("tombstoned", "superseded_text"):
        # Reviewing retired text back in is writing it again (moor_engine.memory.latch).
        why = memory.notes[0] if memory.notes else "its text was retired"
        return Verdict(False, why, "forgotten" if memory.code == "tombstoned" else "superseded")
    blocking = [
        anchor
        for anchor in memory.anchors
        if anchor.state not in REAFFIRMABLE and anchor.code not in REAFFIRMABLE_CODES
    ]
    if blocking:
        why = "; ".join(
            f"{anchor.ref}: {_REAFFIRM_BLOCKERS.get(anchor.state, anchor.state.value)}"
            for anchor in blocking
        )
        return Verdict(False, why, worst([anchor.state for anchor in blocking]).value)
    return Verdict(True)


def follow_verdict(memory: MemoryReport, anchor: AnchorReport | None = None) -> Verdict:
    """Whether `moor follow MEMORY` (without `--to`) has a move to follow: in `anchor`, or
    in any of the memory's anchors. `actions.follow` follows exactly these anchors; the
    editor offers "Follow the move" by it."""
    anchors = memory.anchors if anchor is None else (anchor,)
    if any(followable(a) for a in anchors):
        return Verdict(True)
    return Verdict(False, "nothing moved", "nothing_moved")


def followable(anchor: AnchorReport) -> bool:
    """Whether `moor follow` re-points this anchor by itself (it moved, and where to)."""
    return anchor.state == State.MOVED and bool(anchor.moved_to) and anchor.canonical is not None


def bind_verdict(memory: MemoryReport, anchor: AnchorReport | None = None) -> Verdict:
    """Whether `moor bind MEMORY` has an anchor to record: `anchor`, or any of the memory's.
    The editor offers "Bind" by it."""
    anchors = memory.anchors if anchor is None else (anchor,)
    if any(a.state == State.UNBOUND for a in anchors):
        return Verdict(True)
    return Verdict(False, "every reference is bound", "all_bound")


# Candidates closer than this are a tie: the ranking says nothing about which it is
# (measured: unchanged siblings of a renamed method score within 0.03 of it).
TIE_MARGIN = 0.03


def clear_best(anchor: AnchorReport) -> bool:
    """Whether the first candidate is ahead of the others by more than a tie."""
    scores = [c.similarity for c in anchor.candidates]
    if len(scores) < 2:
        return True
    first, second = scores[0], scores[1]
    return first is not None and (second is None or first - second > TIE_MARGIN)


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
            best = anchor.candidates[0]
            if not clear_best(anchor):
                listed = " or ".join(c.ref for c in anchor.candidates)
                return (
                    f"read the candidates (no clear best), then moor follow {path} "
                    f"--from {anchor.ref} --to one of {listed}"
                )
            return f"moor follow {path} --from {anchor.ref} --to {best.ref}"
        if anchor.suggestions:
            return f"edit {path}: write {anchor.suggestions[0]} instead, then moor bind {path}"
        return f"edit {path}: its reference names code that no longer exists"
    if state == State.UNBOUND:
        return f"moor bind {path}"
    if state == State.REWRITTEN:
        return f'moor reaffirm {path} --why "..."'
    return None


@dataclass(frozen=True)
class ReaffirmPrompt:
    """What a surface asks a person before a reaffirmation: what changed, and reasons they
    may pick instead of typing one (each journalled like `--why`)."""

    changed: str  # "body of Client.send changed since bound; …"
    reasons: tuple[str, ...]


def reaffirm_prompt(memory: MemoryReport) -> ReaffirmPrompt:
    """The question and the prepared reasons for reaffirming `memory`, from its findings:
    the reasons name what changed, so picking one still says what was reviewed."""
    changes: list[str] = []
    axes: set[str] = set()
    for anchor in memory.anchors:
        if anchor.state != State.DRIFTED:
            continue
        target = anchor.canonical or anchor.ref
        name = target.split("#", 1)[1] if "#" in target else target
        moved = anchor.axes or ["code"]
        axes.update(moved)
        changes.append(f"{' and '.join(moved)} of {name} changed since bound")
    if memory.code == "rewritten":
        changes.append("the memory's text changed since bound")
    if not changes:
        changes.append("nothing changed since bound")
    if axes and axes <= {"doc"}:
        reasons = (
            "Reviewed the documentation change: the memory still holds",
            "Wording only: the code's behaviour is unchanged",
        )
    elif "signature" in axes:
        reasons = (
            "Reviewed the new signature: the memory still holds",
            "Refactor only: behaviour unchanged",
        )
    elif axes:
        reasons = (
            "Reviewed the change: the memory still holds",
            "Refactor only: behaviour unchanged",
        )
    else:
        reasons = (
            "Reviewed the edited memory: it holds for the code as it is",
            "Wording only: the memory says the same",
        )
    return ReaffirmPrompt("; ".join(changes), reasons)


@dataclass(frozen=True)
class RetirePrompt:
    """What to ask a person for the reason to forget, supersede or restore a memory."""

    question: str
    why: str  # what the reason tells ("memories/x.md never held")
    reasons: tuple[str, ...]  # prepared reasons a person may pick, in order


def retire_prompt(
    action: str, path: str, by: str | None = None, shared: Sequence[str] = ()
) -> RetirePrompt:
    """The question for `action` (forget, supersede, restore) on the memory `path`. Forget
    and restore prepare no reason: why a memory never held, or holds after all, is the
    person's own, and `moor log` shows it for good. Supersede prepares the one fact both
    memories share, the code they are about (`shared`), when there is one."""
    if action == "forget":
        return RetirePrompt(
            f"Forget {path}: the file is removed and its text refused from now on. "
            "Why did it never hold?",
            f"{path} never held",
            (),
        )
    if action == "restore":
        return RetirePrompt(
            f"Restore {path}: why does it hold after all?", f"{path} holds after all", ()
        )
    prepared = (f"{by} says it better, about the same code ({', '.join(shared[:2])})",)
    return RetirePrompt(
        f"Supersede {path} by {by}: {path} is retired. Why does {by} say it better?",
        f"{by} says it better",
        prepared if shared else (),
    )
