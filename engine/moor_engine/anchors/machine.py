"""A command anchor's state: the observation against what moor.lock binds, through its
streak; and what a check journals of it (memory: command-anchors-move-after-their-streak).

Without rules, any change of the fact address is a transition, as for code — but only once
it has been seen `streak` times in a row: one flapping observation never reaches the
memory. A changed declaration is its own finding (`declaration_changed`), never read as
changed facts. A failed observation is an attempt (DESIGN §5), journalled every time, so
a person (and the editor's backoff) can count them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from moor_extractors.digest import canonical_json
from moor_extractors.model import Failure
from moor_extractors.reference import ANCHOR_PREFIX
from moor_store.journal import Journal, NewEntry
from moor_store.lockfile import Closure, LockedAnchor

from moor_engine.anchors.attempts import attempt_entry, journals_attempt
from moor_engine.anchors.code_rules import UNRULED, generated
from moor_engine.anchors.declarations import Declaration
from moor_engine.anchors.facts import (
    DECLARATION_AXIS,
    ENTERED_AXIS,
    FACTS_AXIS,
    INPUTS_AXIS,
    PART_AXES,
    STATE_AXIS,
    changed_parts,
)
from moor_engine.anchors.transition import RuleSet, transition
from moor_engine.grounding.observe import Found, NotFound, Observation
from moor_engine.grounding.trust import AnchorReport, State

if TYPE_CHECKING:
    from moor_engine.anchors.rules import Fired

OBSERVED: Final = "observed"  # the code of a `still` entry that records one observation
TERMINAL: Final = "terminal"  # the code of a `close` entry a terminal state made
_HISTORY: Final = 200  # the latest entries a streak is counted over (a streak is ≤ 100)


def is_custom(canonical: str) -> bool:
    return canonical.startswith(ANCHOR_PREFIX)


def streak_seen(journal: Journal | None, canonical: str, address: str) -> int:
    """How many observations in a row, this one included, saw `address`."""
    if journal is None:
        return 1
    entries = journal.entries(anchor=canonical)[-_HISTORY:]
    seen = 1
    for entry in reversed(entries):
        if entry.kind != "still" or entry.code != OBSERVED:
            continue  # failed attempts and decisions are not observations
        if entry.address != address:
            break
        seen += 1
    return seen


def command_report(
    report: AnchorReport,
    declaration: Declaration | None,
    observation: Found | NotFound,
    locked: LockedAnchor | None,
    journal: Journal | None,
) -> AnchorReport:
    """`report` (its reference filled in) completed for a successful observation."""
    name = report.canonical or report.ref
    report.address = observation.address
    needed = declaration.streak if declaration is not None else 1
    report.probe = {
        "kind": "command",
        "reproducibility": declaration.reproducibility if declaration is not None else None,
        "streak": [1, needed],
    }
    if locked is None:
        report.state = State.UNBOUND
        report.code = "unbound"
        report.detail = "not bound yet: run `moor bind`"
        return report
    if observation.address == locked.address and not (declaration and declaration.rules):
        return report
    now_declared = (
        observation.facts.axes.get(DECLARATION_AXIS) if isinstance(observation, Found) else None
    )
    if isinstance(observation, Found) and now_declared != locked.axes.get(DECLARATION_AXIS):
        report.state = State.DRIFTED
        report.code = "declaration_changed"
        report.axes = [DECLARATION_AXIS]
        parts = changed_parts(locked.axes, observation.facts.axes)
        kinds = [kind for kind in PART_AXES if parts is None or kind in parts] or list(PART_AXES)
        report.detail = (
            f"the declaration of {name} in moor.toml changed since it was bound"
            + (f" (its {' and '.join(kinds)})" if parts else "")
            + "; its facts are not compared across declarations: re-read the memory, then "
            f"`moor revise {name} {'|'.join('--' + kind for kind in kinds)} --why ...` "
            "(or `moor reaffirm`)"
        )
        return report
    # The facts go through the one transition (transition.py): a declaration's own rules
    # (for a Found: a `null` has no state to give them), else the rule generated for it as
    # for code, any change of the facts. `null` is facts too: the address a NotFound has.
    ruled = declaration is not None and bool(declaration.rules) and isinstance(observation, Found)
    rule_set: RuleSet = declaration if ruled and declaration is not None else generated(UNRULED)
    observed = observation.facts.axes if isinstance(observation, Found) else {FACTS_AXIS: "null"}
    outcome = transition(rule_set, observed, locked.axes)
    changed = observation.address != locked.address
    # A changed observation counts once it has held `streak` times in a row, whatever the
    # rules say of it; the generated rule reads the facts alone, so a change it does not
    # fire on (inputs only) is no news and has no streak.
    if changed and (ruled or outcome is not None):
        seen = streak_seen(journal, name, observation.address)
        report.probe["streak"] = [min(seen, needed), needed]
        if seen < needed:
            report.code = "streak_pending"
            report.detail = (
                f"{name} observed a change, {seen} of {needed} times in a row: not counted yet"
            )
            return report
    if isinstance(outcome, Failure):
        report.state = State.UNVERIFIED
        report.reason = outcome.reason.value
        report.code = outcome.code
        report.detail = outcome.detail + "; no transition was made"
        return report
    if outcome is None:
        if ruled and changed:
            report.code = "no_rule_fired"
            report.detail = f"{name} observed a change no rule fires on: its state stays"
        return report
    report.axes = outcome.axes
    if outcome.fired is not None and declaration is not None:
        return _rule_fired(report, declaration, outcome.fired)
    if isinstance(observation, NotFound):
        report.state = State.GONE
        report.code = "not_found"
        report.detail = f"{name} now observes nothing (its command printed null)"
    else:
        report.state = State.DRIFTED
        report.code = "drifted"
        report.detail = f"the facts {name} observes changed since it was bound"
        report.detail += _inputs(observation, locked)
    if declaration is not None:
        report.detail += f" ({_reproducible(declaration)})"
    return report


def _rule_fired(report: AnchorReport, declaration: Declaration, fired: Fired) -> AnchorReport:
    """A declared rule fired: the anchor moves to its state (a terminal one closes it)."""
    name = report.canonical or report.ref
    assert report.probe is not None
    report.state = State.DRIFTED
    report.probe["rule"] = fired.index
    report.probe["state"] = fired.state
    terminal = fired.terminal(declaration)
    shown = canonical_json(fired.state)
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    report.code = "terminal_state" if terminal else "rule_fired"
    report.detail = (
        f"{name}: rule {fired.index} (`{fired.rule.when}`) fired: its state is now {shown}"
    )
    if terminal:
        report.detail += (
            f", the terminal state {terminal!r}: the anchor is closed (in this clone's journal; "
            f"`moor close {name} --why ...` records it in moor.lock)"
        )
    return report


def reaffirmed(
    new: LockedAnchor, old: LockedAnchor | None, report: AnchorReport | None
) -> LockedAnchor:
    """What a reaffirm binds of a command anchor with rules: the state a firing rule moved it
    to (entered now), else the state it was in — a reaffirm accepts the memory, it does not
    start the anchor's life again (memory: anchor-rules-move-the-state)."""
    if STATE_AXIS not in new.axes:
        return new
    probe = report.probe if report is not None and report.probe is not None else {}
    axes = dict(new.axes)
    if "state" in probe:
        axes[STATE_AXIS] = canonical_json(probe["state"])
    elif old is not None and STATE_AXIS in old.axes:
        axes[STATE_AXIS] = old.axes[STATE_AXIS]
        axes[ENTERED_AXIS] = old.axes.get(ENTERED_AXIS, axes[ENTERED_AXIS])
    return replace(new, axes=axes)


def first_look(declaration: Declaration | None, found: Found) -> str | None:
    """A warning when the anchor's rules, checked against its first observation (as both
    the facts observed and the facts bound: `obs` and `state` alike), fire or cannot be
    evaluated: a bind is never refused for it, the person learns now rather than at the
    next check."""
    if declaration is None or not declaration.rules or STATE_AXIS not in found.facts.axes:
        return None
    outcome = transition(declaration, found.facts.axes, found.facts.axes)
    name = f"anchor:{declaration.name}"
    if isinstance(outcome, Failure):
        return (
            f"warning: {name}: checked against its first observation, {outcome.detail} "
            f"({outcome.code}): it stays unverified until the rule is fixed"
        )
    if outcome is not None and outcome.fired is not None:
        fired = outcome.fired
        return (
            f"warning: {name}: rule {fired.index} (`{fired.rule.when}`) fires on its first "
            "observation: the memory will drift at the next check"
        )
    return None


def terminal_closure(journal: Journal | None, canonical: str) -> Closure | None:
    """The closure a terminal state made, as this clone's journal records it."""
    if journal is None or not is_custom(canonical):
        return None
    entry = journal.last_of(canonical, "close", TERMINAL)
    if entry is None:
        return None
    return Closure(canonical, "", entry.reason or "a terminal state", entry.at)


def _inputs(observation: Found, locked: LockedAnchor) -> str:
    """Whether the declared inputs changed too: when they did not, the change came from
    something the declaration does not name."""
    now, then = observation.facts.axes.get(INPUTS_AXIS), locked.axes.get(INPUTS_AXIS)
    if now is None or then is None:
        return ""
    return ", and so did its inputs" if now != then else "; its declared inputs did not"


def _reproducible(declaration: Declaration) -> str:
    if declaration.env:
        return f"open: it reads the host's {', '.join(declaration.env)}"
    return "closed: reproducible from its argv and inputs"


def command_entries(
    journal: Journal,
    observations: Mapping[str, Observation],
    bound: Mapping[str, LockedAnchor],
    reports: Mapping[str, AnchorReport],
) -> list[NewEntry]:
    """What a check journals of each bound command anchor it observed."""
    keys = [key for key in observations if is_custom(key) and key in bound]
    if not keys:
        return []  # no command anchor: not even a query (a warm check stays as cheap)
    looks = journal.last_looks(keys)
    entries: list[NewEntry] = []
    for key in keys:
        observation = observations[key]
        if key not in looks:
            entries.append(
                NewEntry(
                    "open",
                    key,
                    address=bound[key].address,
                    code="lock",
                    detail="first seen in this clone: bound state taken from moor.lock",
                )
            )
        if isinstance(observation, Failure):
            if observation.code in ("anchor_closed", "anchor_superseded"):
                continue  # closed: nothing was looked at
            if not journals_attempt(key, observation.code, looks.get(key)):
                continue
            entries.append(
                attempt_entry(key, observation.reason.value, observation.code, observation.detail)
            )
            continue
        report = reports.get(key)
        probe = report.probe if report is not None and report.probe is not None else {}
        streak = probe.get("streak", [1, 1])
        assert isinstance(streak, list)
        if report is not None and report.state == State.UNVERIFIED:
            # A rule that could not be evaluated: an attempt, not a look.
            entries.append(attempt_entry(key, report.reason, report.code, report.detail))
            continue
        if (
            report is not None
            and report.state in (State.DRIFTED, State.GONE)
            and report.code != "declaration_changed"
            and _not_yet_moved(journal, key, observation.address)
        ):
            entries.append(
                NewEntry(
                    "transition",
                    key,
                    address=observation.address,
                    previous=bound[key].address,
                    code=report.state.value,
                    detail=report.detail,
                    data={"axes": report.axes, **_fired(probe)},
                )
            )
            if report.code == "terminal_state":
                entries.append(
                    NewEntry("close", key, reason=report.detail, code=TERMINAL, data=_fired(probe))
                )
        entries.append(
            NewEntry(
                "still",
                key,
                address=observation.address,
                code=OBSERVED,
                data={
                    "reproducibility": probe.get("reproducibility"),
                    "streak": streak,
                    "state": report.state.value if report is not None else None,
                },
            )
        )
    return entries


def _fired(probe: Mapping[str, object]) -> dict[str, object]:
    return {k: probe[k] for k in ("rule", "state") if k in probe}


def _not_yet_moved(journal: Journal, key: str, address: str) -> bool:
    """Whether no transition to `address` was journalled since the last observation of
    another address (the streak completes once; later looks at it are no news)."""
    for entry in reversed(journal.entries(anchor=key)[-_HISTORY:]):
        if entry.kind == "transition" and entry.address == address:
            return False
        if entry.kind == "still" and entry.code == OBSERVED and entry.address != address:
            return True
    return True


def closure_report(closure: Closure) -> tuple[str, str]:
    """The code and detail of an anchor report for a closed anchor."""
    if closure.by:
        return (
            "anchor_superseded",
            f"{closure.anchor} was superseded by {closure.by} ({closure.at[:10]}): "
            f"{closure.reason}; bind the memory to {closure.by} if it still holds",
        )
    return "anchor_closed", f"{closure.anchor} was closed ({closure.at[:10]}): {closure.reason}"
