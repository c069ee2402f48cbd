"""`moor revise anchor:NAME --probe|--rules|--terminal|--state JSON --why`: a person's
revision of a command anchor, written into moor.lock for every memory bound to it and
journalled with its reason, one `revise` entry per kind (memory:
revising-an-anchor-says-what-and-why).

A declaration edited in moor.toml is `declaration_changed` until revised: `--rules` and
`--terminal` take the new declaration and keep the bound facts (a change of the facts
since is still a change), `--probe` takes the facts the new probe observes now (they are
not comparable with the old probe's), `--state` sets the anchor's state (a JSON object,
entered now).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Final

from moor_extractors.model import Facts, Failure
from moor_extractors.reference import parse_reference
from moor_store.intent import Change
from moor_store.journal import NewEntry, utc_now
from moor_store.lockfile import LockedAnchor, LockedMemory, format_lock

from moor_engine.anchors.declarations import Declaration
from moor_engine.anchors.facts import (
    DECLARATION_AXIS,
    ENTERED_AXIS,
    FACTS_AXIS,
    PART_AXES,
    STATE_AXIS,
    changed_parts,
)
from moor_engine.grounding.observe import Found, found_address
from moor_engine.session import Session
from moor_engine.usage import UsageError
from moor_engine.written import Refusal, Written

KINDS: Final = ("probe", "rules", "terminal", "state")


def revise(session: Session, raw: str, kinds: list[str], state: str | None, why: str) -> Written:
    """Revise `raw` (anchor:NAME) for the `kinds` named (with `state`, the new state)."""
    if not why.strip():
        raise UsageError('revise needs a reason: --why "..."')
    kinds = [kind for kind in KINDS if kind in kinds or (kind == "state" and state is not None)]
    if not kinds:
        raise UsageError("revise what? name --probe, --rules, --terminal or --state JSON")
    with session.writing("moor revise"):
        return _revise(session, raw.strip(), kinds, state, why.strip())


def _new_state(state: str, name: str) -> str | Refusal:
    from moor_engine.anchors import rules

    try:
        value = json.loads(state)
    except ValueError as error:
        return Refusal("invalid_state", f"--state for {name}: not JSON ({error})", ref=name)
    if not isinstance(value, dict):
        return Refusal("invalid_state", f"--state for {name}: must be a JSON object", ref=name)
    text = rules.state_text(value, name.removeprefix("anchor:"))
    if isinstance(text, Failure):
        return Refusal(text.code, text.detail, ref=name)
    return text


def _revise(session: Session, raw: str, kinds: list[str], state: str | None, why: str) -> Written:
    written = Written("revise")
    ref = parse_reference(raw)
    if isinstance(ref, Failure) or ref.anchor is None:
        written.refused.append(
            Refusal("not_an_anchor", f"revise {raw}: only a custom anchor (anchor:NAME)", ref=raw)
        )
        return written
    name = ref.canonical()
    bound = sorted(p for p, m in session.lock.memories.items() if name in m.anchors)
    closed = session.lock.closed.get(name) or session.checker.closure(name)
    if not bound or closed is not None:
        why_not = f"it is closed ({closed.reason})" if closed else "no memory is bound to it"
        written.refused.append(Refusal("not_revisable", f"revise {name}: {why_not}", ref=name))
        return written
    new_state = _new_state(state, name) if state is not None else None
    if isinstance(new_state, Refusal):
        written.refused.append(new_state)
        return written
    declaration = session.workspace.config.anchors.get(ref.anchor)
    if new_state is not None and (declaration is None or not declaration.rules):
        written.refused.append(
            Refusal(
                "no_rules", f"--state for {name}: it declares no rules to keep a state", ref=name
            )
        )
        return written
    unchecked = False
    named = {kind for kind in kinds if kind in PART_AXES}
    if named and declaration is not None:  # checked before the command runs
        mismatch = _mismatch(session, bound, name, named, declaration)
        if isinstance(mismatch, Refusal):
            written.refused.append(mismatch)
            return written
        unchecked = mismatch
    observation = session.checker.observe(ref)
    if not isinstance(observation, Found):
        what = (
            f"{observation.code}: {observation.detail}"
            if isinstance(observation, Failure)
            else "its command printed null"
        )
        written.refused.append(
            Refusal(
                getattr(observation, "code", "not_found"),
                f"revise {name}: cannot observe it now ({what})",
                ref=name,
            )
        )
        return written
    at = utc_now()
    memories = dict(session.lock.memories)
    for path in bound:
        memory = memories[path]
        before = memory.anchors[name]
        after = _revised(before, observation, kinds, new_state, at)
        if declaration is None or not declaration.rules:  # no rules now: no state to keep
            after = replace(
                after,
                axes={k: v for k, v in after.axes.items() if k not in (STATE_AXIS, ENTERED_AXIS)},
            )
        memories[path] = LockedMemory(path, memory.content, {**memory.anchors, name: after})
    lock = replace(session.lock, memories=memories)
    change = Change("moor revise")
    change.write("moor.lock", session.lock_bytes, format_lock(lock).encode("utf-8"))
    change.entries = [
        NewEntry(
            "revise",
            name,
            address=memories[bound[0]].anchors[name].address,
            reason=why,
            code=kind,
            data={"state": json.loads(new_state)} if kind == "state" and new_state else None,
        )
        for kind in kinds
    ]
    if "probe" in kinds and session.commands is not None:
        change.seals.extend(session.commands.seals(observation.address))
    session.commit(change)
    session.lock = lock
    written.done.append(f"{name}: revised ({', '.join(kinds)}): {why}")
    if unchecked:
        written.done.append(
            f"{name}: moor.lock kept no per-kind digests of its declaration (an older moor "
            "bound it): the kinds named were not checked against what changed; they are "
            "kept from now on"
        )
    written.done.extend(f"{path}: bound to it as revised" for path in bound)
    return written


def _mismatch(
    session: Session, bound: list[str], name: str, named: set[str], declaration: Declaration
) -> Refusal | bool:
    """A refusal when the declaration kinds named are not the kinds that changed since the
    anchor was bound (in any of its memories); True when moor.lock cannot tell (an older
    lock, without per-kind digests), False when they match."""
    now = {PART_AXES[kind]: part for kind, part in declaration.parts().items()}
    changed: set[str] = set()
    for path in bound:
        parts = changed_parts(session.lock.memories[path].anchors[name].axes, now)
        if parts is None:
            return True
        changed |= parts
    flags = ", ".join(f"--{kind}" for kind in KINDS if kind in changed) or "none"
    unnamed = [kind for kind in KINDS if kind in changed - named]
    if unnamed:
        return Refusal(
            "revision_not_named",
            f"revise {name}: its {' and '.join(unnamed)} changed too since it was bound, and "
            f"the revision does not name it: name what changed ({flags}), after reading the "
            "memories bound to it; nothing was written",
            ref=name,
        )
    unchanged = [kind for kind in KINDS if kind in named - changed]
    if unchanged:
        return Refusal(
            "revision_unchanged",
            f"revise {name}: its {' and '.join(unchanged)} did not change since it was bound "
            f"(changed: {flags}); a revision names what changed — for changed facts, "
            "`moor reaffirm` the memory; nothing was written",
            ref=name,
        )
    return False


def _revised(
    before: LockedAnchor, found: Found, kinds: list[str], state: str | None, at: str
) -> LockedAnchor:
    """`before` as revised: the declaration now, the facts bound (now, with `--probe`), the
    state set by `--state` (else kept)."""
    axes = dict(before.axes)
    now = found.facts.axes
    if "probe" in kinds:
        axes = {k: v for k, v in now.items() if k not in (STATE_AXIS, ENTERED_AXIS)}
        for kept in (STATE_AXIS, ENTERED_AXIS):
            if kept in before.axes:
                axes[kept] = before.axes[kept]
    if kinds != ["state"]:
        axes[DECLARATION_AXIS] = now[DECLARATION_AXIS]
        axes.update((axis, now[axis]) for axis in PART_AXES.values() if axis in now)
    if STATE_AXIS not in axes and STATE_AXIS in now:  # rules declared since it was bound
        axes[STATE_AXIS], axes[ENTERED_AXIS] = now[STATE_AXIS], now[ENTERED_AXIS]
    if state is not None:
        axes[STATE_AXIS], axes[ENTERED_AXIS] = state, at
    addressed: dict[str, str] = {k: axes[k] for k in (FACTS_AXIS, DECLARATION_AXIS) if k in axes}
    return replace(
        before,
        axes=axes,
        derivation=found.derivation,
        address=found_address(found.derivation, Facts(found.facts.kind, addressed)),
    )
