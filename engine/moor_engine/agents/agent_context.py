"""`moor context`: the memories an agent should read first, as a managed block of an
agent file (AGENTS.md, CLAUDE.md) — framed as untrusted data (`framing`), within a token
budget, kept up to date by `--write` and checked in CI by `--check`.

The block is between two markers; nothing outside them is ever changed, and a file without
them gets the block appended. What it holds is decided from the check alone (no journal
dates, no clock), so a fresh clone in CI computes the same block as the author's machine:
`--check` fails only when the memories or their trust states changed.

Which memories: every memory that parses and is not retired — current ones as they are,
the others with their warnings (a drifted memory an agent cannot see is worse than one
flagged) — pinned first, then by path. A pinned memory is always in (`pinned: true` means
"always in `moor context`"), even when the pinned ones alone exceed the budget, which is
then reported; the others until the budget is spent. The rest are counted, and the block
says how to reach them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from moor_extractors.reference import Reference, parse_reference

from moor_engine.agents.framing import Framed, frame, frame_one, framed
from moor_engine.grounding.trust import State
from moor_engine.memory import namespaces
from moor_engine.session import Session

START = "<!-- moor:context:start (written by `moor context --write`; edits inside are replaced) -->"
END = "<!-- moor:context:end -->"
DEFAULT_BUDGET = 2000  # tokens
_LEFT_OUT = {State.RETIRED, State.INVALID}


def tokens(text: str) -> int:
    """A model's tokens for `text`, estimated as one per four characters (what budgets
    in agent files are counted in; no tokenizer is shipped)."""
    return math.ceil(len(text) / 4)


@dataclass
class ContextBlock:
    text: str  # the block, markers included
    included: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # over the budget
    tokens: int = 0
    budget: int = DEFAULT_BUDGET
    pinned_tokens: int = 0  # what the preamble and the pinned memories alone take
    # The pinned memories alone exceed the budget: all are in, and nothing else is.
    pinned_over_budget: bool = False


def context_block(
    session: Session, budget: int = DEFAULT_BUDGET, agent: str | None = None
) -> ContextBlock:
    agent = namespaces.reader(agent)
    block = ContextBlock("", budget=budget)
    fitted = fit(shown_memories(session, agent), budget)
    block.included = [memory.path for memory in fitted.kept]
    block.left_out = fitted.left_out
    block.pinned_tokens = fitted.pinned_tokens
    block.pinned_over_budget = fitted.pinned_over_budget
    body = frame(fitted.kept)
    if block.left_out:
        body += (
            f"\n\n{len(block.left_out)} more memories did not fit the budget: ask "
            "`moor about <file>` before editing code, or `moor recall <words>`."
        )
    block.text = f"{START}\n{body}\n{END}"
    block.tokens = tokens(block.text)
    return block


@dataclass(frozen=True)
class Fitted:
    kept: list[Framed]  # in the order given
    left_out: list[str]  # paths of the memories over the budget (never a pinned one)
    pinned_tokens: int  # the preamble, the overhead and every pinned memory
    pinned_over_budget: bool  # those alone exceed the budget: nothing else is kept


def fit(memories: Iterable[Shown], budget: int, overhead: int = 0) -> Fitted:
    """The memories, in order, that fit `budget` tokens: every pinned one, whatever it
    costs, with the preamble and `overhead` tokens spent first, then the others while they
    fit (a later, smaller one may still fit). `moor context` and `moor rules` both budget
    this way."""
    costed = [(shown, tokens(frame_one(shown.framed)) + 1) for shown in memories]
    used = tokens(frame([])) + overhead + sum(cost for shown, cost in costed if shown.pinned)
    pinned_tokens = used
    kept: list[Framed] = []
    left_out: list[str] = []
    for shown, cost in costed:
        if shown.pinned:
            kept.append(shown.framed)
        elif used + cost > budget:
            left_out.append(shown.framed.path)
        else:
            kept.append(shown.framed)
            used += cost
    return Fitted(kept, left_out, pinned_tokens, pinned_tokens > budget)


def merged(
    existing: str | None, block: str, start_marker: str = START, end_marker: str = END
) -> str:
    """The agent file with `block` in place of its managed block (appended if it has none);
    nothing outside the markers changes. (`moor rules` passes its own markers.)"""
    if not existing:
        return block + "\n"
    start = existing.find(start_marker[: start_marker.index(" (")])
    end = existing.find(end_marker, start if start >= 0 else 0)
    if start >= 0 and end >= 0:
        return existing[:start] + block + existing[end + len(end_marker) :]
    return existing.rstrip("\n") + "\n\n" + block + "\n"


def managed(existing: str, start_marker: str = START, end_marker: str = END) -> str | None:
    """The managed block an agent file holds now, or None."""
    start = existing.find(start_marker[: start_marker.index(" (")])
    end = existing.find(end_marker, start if start >= 0 else 0)
    if start < 0 or end < 0:
        return None
    return existing[start : end + len(end_marker)]


@dataclass(frozen=True)
class Shown:
    """A memory an agent file may show: framed, with the files its `about:` names."""

    framed: Framed
    pinned: bool
    paths: tuple[str, ...]  # the files its references name, canonical, sorted


def shown_memories(session: Session, agent: str | None = None) -> list[Shown]:
    """Every memory an agent file may show — it parses, is not retired (one that is not
    current carries its warnings) and is visible to `agent` (`namespaces.visible`) — pinned
    first, then by path; decided from the check alone, so a fresh clone computes the same
    list."""
    report = session.check(session.select([]), record=False)
    evaluation = session.last_evaluation
    assert evaluation is not None
    chosen: list[Shown] = []
    for memory_report in report.memories:
        loaded = evaluation.loaded.get(memory_report.path)
        if memory_report.state in _LEFT_OUT or loaded is None or loaded.memory is None:
            continue
        if not namespaces.visible(loaded.memory.agent, agent):
            continue
        paths = {
            reference.path
            for anchor in memory_report.anchors
            if anchor.canonical is not None
            for reference in [parse_reference(anchor.canonical)]
            if isinstance(reference, Reference) and reference.path is not None
        }
        chosen.append(
            Shown(framed(memory_report, loaded.memory), loaded.memory.pinned, tuple(sorted(paths)))
        )
    chosen.sort(key=lambda shown: (not shown.pinned, shown.framed.path))
    return chosen
