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
from typing import Final

from moor_extractors.model import Failure
from moor_extractors.reference import ANCHOR_PREFIX
from moor_store.journal import Journal, NewEntry
from moor_store.lockfile import Closure, LockedAnchor

from moor_engine.anchors.declarations import Declaration
from moor_engine.anchors.facts import DECLARATION_AXIS, FACTS_AXIS, INPUTS_AXIS
from moor_engine.grounding.observe import Found, NotFound, Observation
from moor_engine.grounding.trust import AnchorReport, State

OBSERVED: Final = "observed"  # the code of a `still` entry that records one observation
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
    if observation.address == locked.address:
        return report
    now_declared = (
        observation.facts.axes.get(DECLARATION_AXIS) if isinstance(observation, Found) else None
    )
    if isinstance(observation, Found) and now_declared != locked.axes.get(DECLARATION_AXIS):
        report.state = State.DRIFTED
        report.code = "declaration_changed"
        report.axes = [DECLARATION_AXIS]
        report.detail = (
            f"the declaration of {name} in moor.toml changed since it was bound; its facts "
            "are not compared across declarations: re-read the memory, then "
            "`moor reaffirm --why ...`"
        )
        return report
    seen = streak_seen(journal, name, observation.address)
    report.probe["streak"] = [min(seen, needed), needed]
    if seen < needed:
        report.code = "streak_pending"
        report.detail = (
            f"{name} observed a change, {seen} of {needed} times in a row: not counted yet"
        )
        return report
    report.axes = [FACTS_AXIS]
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
            entries.append(
                NewEntry(
                    "attempt",
                    key,
                    reason=observation.reason.value,
                    code=observation.code,
                    detail=observation.detail,
                )
            )
            continue
        report = reports.get(key)
        probe = report.probe if report is not None and report.probe is not None else {}
        streak = probe.get("streak", [1, 1])
        assert isinstance(streak, list)
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
                    data={"axes": report.axes},
                )
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
