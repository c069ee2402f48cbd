"""The one transition every anchor takes (DESIGN §4b; memory: one-transition-path): its
rules, over the facts observed and the facts moor.lock binds, give the transition — or a
`Failure` (a rule that cannot be evaluated), or None (no rule fired).

Two rule sets reach it. A code anchor's (and an unruled command anchor's) are generated
from what is watched (`code_rules.generated`): every rule that fires counts, each naming
an axis that changed. A command anchor's declared rules (CEL, `rules.py`) are evaluated in
order and the first that fires wins, moving the anchor to the state its `to` gives. What
is particular to a kind is settled before this and given to it: a code anchor's relocation,
alias and derivation re-baseline decide which facts it compares; a command anchor's
declaration check decides whether its facts are comparable at all, and its streak whether
an outcome is counted yet.

Generated rules never import CEL: a check of code anchors never loads the library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

from moor_extractors.model import Failure

from moor_engine.anchors.code_rules import AxisRule
from moor_engine.anchors.declarations import Declaration
from moor_engine.anchors.facts import ENTERED_AXIS, STATE_AXIS

if TYPE_CHECKING:
    from moor_engine.anchors.rules import Fired

RuleSet = tuple[AxisRule, ...] | Declaration  # generated rules, or a declaration's own


@dataclass(frozen=True)
class Transition:
    """What moved: the axes that changed; for a declared rule, which one fired and the
    state it moved the anchor to."""

    axes: list[str]
    fired: Fired | None = None


@overload
def transition(
    rules: tuple[AxisRule, ...], observed: Mapping[str, str], bound: Mapping[str, str]
) -> Transition | None: ...


@overload
def transition(
    rules: RuleSet, observed: Mapping[str, str], bound: Mapping[str, str]
) -> Transition | Failure | None: ...


def transition(
    rules: RuleSet, observed: Mapping[str, str], bound: Mapping[str, str]
) -> Transition | Failure | None:
    if isinstance(rules, Declaration):
        return _first_firing(rules, observed, bound)
    axes = [rule.axis for rule in rules if rule.fires(observed, bound)]
    return Transition(axes) if axes else None


def _first_firing(
    declaration: Declaration, observed: Mapping[str, str], bound: Mapping[str, str]
) -> Transition | Failure | None:
    """The declared rules over `obs` (the facts observed) and `state` (the state bound, or
    the observation itself before a first state), `taken_at` and `entered_at`."""
    from moor_engine.anchors import rules

    obs = json.loads(observed.get(STATE_AXIS, "{}"))
    state = json.loads(bound.get(STATE_AXIS) or observed.get(STATE_AXIS, "{}"))
    fired = rules.evaluate(
        declaration,
        obs,
        state,
        rules.parse_time(observed.get(ENTERED_AXIS)),
        rules.parse_time(bound.get(ENTERED_AXIS)),
    )
    if fired is None or isinstance(fired, Failure):
        return fired
    return Transition([STATE_AXIS], fired)
