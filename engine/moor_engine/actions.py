"""What a person does about a memory: bind, reaffirm, follow — each journalled with its why."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from moor_extractors.memory import parse_memory
from moor_extractors.model import Facts, Failure
from moor_extractors.reference import Reference, parse_reference
from moor_store.journal import NewEntry
from moor_store.lockfile import LockedAnchor, LockedMemory

from moor_engine.check import locked_anchor_from
from moor_engine.observe import Found, NotFound, found_address
from moor_engine.session import Session, UsageError
from moor_engine.trust import State


@dataclass
class Outcome:
    """What an action did, and what it refused (with why) — refusals mean exit status 1."""

    done: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def _require_memory(session: Session, path: str) -> str:
    selected = session.select([path])
    if len(selected) != 1 or not session.workspace.is_memory_path(selected[0]):
        raise UsageError(
            f"{path} is not a memory file under {session.workspace.config.memory_roots}"
        )
    return selected[0]


def _seal(session: Session, found: Found) -> None:
    if session.journal is None:
        return
    view = session.observer.view(found.path)
    if view is None or isinstance(view, Failure):
        return
    session.journal.seal(found.address, view.source_text(found.site))


def bind(session: Session, paths: list[str]) -> Outcome:
    """Record the current address of every anchor not yet in moor.lock.

    Anchors already bound keep their bound address (accepting drift is `reaffirm`'s job);
    a memory's text hash is recorded when it is first bound or its `about:` set changes.
    """
    selected = session.select(paths)
    evaluation = session.evaluate(selected)
    outcome = Outcome()
    lock = session.lock
    entries: list[NewEntry] = []
    for path in selected:
        loaded = evaluation.loaded[path]
        if loaded.memory is None:
            outcome.refused.append(
                f"{path}: invalid: " + "; ".join(p.message for p in loaded.problems)
            )
            continue
        if any(item.ref is None for item in loaded.entries):
            bad = [item for item in loaded.entries if item.ref is None]
            outcome.refused.extend(
                f"{path}: {item.entry.raw}: {item.problem.detail if item.problem else 'refused'}"
                for item in bad
            )
            continue
        old = lock.memories.get(path)
        anchors: dict[str, LockedAnchor] = {}
        added: list[str] = []
        for item in loaded.entries:
            assert item.ref is not None
            canonical = item.ref.canonical()
            if old is not None and canonical in old.anchors:
                anchors[canonical] = old.anchors[canonical]
                continue
            observation = evaluation.observations[canonical]
            if not isinstance(observation, Found):
                why = (
                    f"{observation.code}: {observation.detail}"
                    if isinstance(observation, Failure)
                    else "it does not exist"
                )
                outcome.refused.append(f"{path}: cannot bind {item.entry.raw}: {why}")
                continue
            anchors[canonical] = locked_anchor_from(item.ref, observation)
            added.append(canonical)
            _seal(session, observation)
            entries.append(
                NewEntry("open", canonical, memory=path, address=observation.address, code="bind")
            )
        removed = sorted(set(old.anchors) - set(anchors)) if old is not None else []
        entries.extend(NewEntry("revise", r, memory=path, code="unbind") for r in removed)
        if not added and not removed:
            continue  # already bound as it is, or nothing could be bound
        content = loaded.memory.content_hash if old is None or added or removed else old.content
        lock = session.with_memory(LockedMemory(path, content, anchors), path)
        session.lock = lock
        outcome.done.append(
            f"{path}: bound {len(added)} anchor(s)"
            + (f", dropped {len(removed)}" if removed else "")
        )
    if not paths:
        # A full bind also forgets lock entries of memory files that no longer exist.
        for path in sorted(set(lock.memories) - set(selected)):
            entries.extend(
                NewEntry("revise", ref, memory=path, code="unbind", detail="memory file removed")
                for ref in lock.memories[path].anchors
            )
            lock = session.with_memory(None, path)
            session.lock = lock
            outcome.done.append(f"{path}: no longer exists; dropped from moor.lock")
    if outcome.done:
        session.save_lock(lock)
    if session.journal is not None and entries:
        session.journal.append(entries)
    session.observer.flush()
    return outcome


def reaffirm(session: Session, path: str, why: str) -> Outcome:
    """Accept the code as it is now for every anchor of one memory, with a reason.

    All or nothing: an anchor that is gone, moved or cannot be observed blocks the whole
    reaffirmation, so the lock never mixes old and new judgements of one memory.
    """
    if not why.strip():
        raise UsageError('reaffirm needs a reason: --why "..."')
    path = _require_memory(session, path)
    evaluation = session.evaluate([path])
    loaded = evaluation.loaded[path]
    outcome = Outcome()
    if loaded.memory is None:
        outcome.refused.append(f"{path}: invalid: " + "; ".join(p.message for p in loaded.problems))
        return outcome
    anchors: dict[str, LockedAnchor] = {}
    founds: list[tuple[str, Found]] = []
    for item in loaded.entries:
        if item.ref is None:
            outcome.refused.append(
                f"{item.entry.raw}: {item.problem.detail if item.problem else ''}"
            )
            continue
        observation = evaluation.observations[item.ref.canonical()]
        if isinstance(observation, Found):
            anchors[item.ref.canonical()] = locked_anchor_from(item.ref, observation)
            founds.append((item.ref.canonical(), observation))
        elif isinstance(observation, NotFound):
            outcome.refused.append(
                f"{item.entry.raw}: not found: `moor follow {path}` if it moved, or edit the memory"
            )
        else:
            outcome.refused.append(
                f"{item.entry.raw}: cannot be observed ({observation.code}: {observation.detail})"
            )
    if outcome.refused:
        return outcome
    old = session.lock.memories.get(path)
    entries = []
    for canonical, found in founds:
        _seal(session, found)
        previous = old.anchors[canonical].address if old and canonical in old.anchors else None
        entries.append(
            NewEntry(
                "revise",
                canonical,
                memory=path,
                address=found.address,
                previous=previous,
                reason=why,
                code="reaffirm",
            )
        )
    if not founds:
        entries.append(
            NewEntry("revise", f"memory:{path}", memory=path, reason=why, code="reaffirm")
        )
    session.save_lock(
        session.with_memory(LockedMemory(path, loaded.memory.content_hash, anchors), path)
    )
    if session.journal is not None:
        session.journal.append(entries)
    session.observer.flush()
    outcome.done.append(f"{path}: reaffirmed {len(founds)} anchor(s): {why}")
    return outcome


def follow(session: Session, path: str) -> Outcome:
    """Rewrite moved or renamed references in the memory file, then bind them."""
    path = _require_memory(session, path)
    evaluation = session.evaluate([path])
    loaded = evaluation.loaded[path]
    outcome = Outcome()
    report = evaluation.report.memories[0]
    moves = [
        (a.ref, a.canonical, a.moved_to, a.line, a.code)
        for a in report.anchors
        if a.state == State.MOVED and a.moved_to
    ]
    if loaded.memory is None or not moves:
        outcome.done.append(f"{path}: nothing moved, nothing to follow")
        return outcome
    memory_file = session.workspace.root / path
    text = memory_file.read_bytes().decode("utf-8")
    for raw, _canonical, target, line, _how in moves:
        assert target is not None
        rewritten = _replace_reference(text, raw, target, line)
        if rewritten is None:
            outcome.refused.append(
                f"{raw}: could not find it on line {line} to rewrite; edit by hand"
            )
            return outcome
        text = rewritten
    memory_file.write_bytes(text.encode("utf-8"))
    reparsed = parse_memory(path, text.encode("utf-8"))
    assert reparsed.memory is not None
    old = session.lock.memories.get(path)
    anchors = dict(old.anchors) if old else {}
    entries = []
    for raw, canonical, target, _line, how in moves:
        assert target is not None and canonical is not None
        ref = parse_reference(target)
        assert not isinstance(ref, Failure)
        observation = session.observer.observe(ref)
        if not isinstance(observation, Found):
            outcome.refused.append(f"{raw}: the new place {target} cannot be observed")
            continue
        before = old.anchors.get(canonical) if old else None
        followed = _followed_anchor(ref, observation, before, how or "moved")
        anchors.pop(canonical, None)
        anchors[followed.ref] = followed
        _seal_followed(session, observation, before, followed)
        entries.append(
            NewEntry(
                "revise",
                ref.canonical(),
                memory=path,
                address=followed.address,
                previous=old.anchors[canonical].address
                if old and canonical in old.anchors
                else None,
                code="follow",
                data={"from": canonical, "to": ref.canonical()},
            )
        )
        outcome.done.append(f"{path}: {raw} -> {target}")
    content = (
        reparsed.memory.content_hash
        if (old is None or old.content == loaded.memory.content_hash)
        else old.content
    )
    session.save_lock(session.with_memory(LockedMemory(path, content, anchors), path))
    if session.journal is not None and entries:
        session.journal.append(entries)
    session.observer.flush()
    return outcome


def _followed_anchor(
    ref: Reference, found: Found, before: LockedAnchor | None, how: str
) -> LockedAnchor:
    """The anchor at its new place, still judged against the code it was bound to.

    Only what a move or rename must change is taken from the new place (`place`, and for
    a rename the `signature` that holds the name); every other axis keeps its bound digest,
    so code that changed on the way shows as drifted after `follow` instead of being
    silently accepted.
    """
    if before is None or before.derivation != found.derivation:
        return locked_anchor_from(ref, found)
    renewed = {"place", "signature"} if how == "renamed" else {"place"}
    axes = {
        axis: found.facts.axes[axis] if axis in renewed else before.axes.get(axis, digest)
        for axis, digest in found.facts.axes.items()
    }
    facts = Facts(kind=before.kind, axes=axes)
    return LockedAnchor(
        ref=ref.canonical(),
        address=found_address(found.derivation, facts),
        derivation=found.derivation,
        kind=before.kind,
        axes=axes,
    )


def _seal_followed(
    session: Session, found: Found, before: LockedAnchor | None, followed: LockedAnchor
) -> None:
    """Keep `diff` working after a follow: the followed address shows the bound code."""
    if followed.address == found.address or session.journal is None:
        _seal(session, found)
        return
    text = session.journal.snapshot(before.address) if before is not None else None
    if text is not None:
        session.journal.seal(followed.address, text)


_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")


def _replace_reference(text: str, raw: str, target: str, line: int) -> str | None:
    # Lines as the memory parser counts them (\n, \r\n, lone \r), not str.splitlines,
    # which also breaks at U+2028 and friends and would miscount.
    parts = _LINE_BREAK.split(text)
    lines = ["".join(parts[i : i + 2]) for i in range(0, len(parts), 2)]
    if not 1 <= line <= len(lines):
        return None
    current = lines[line - 1]
    if raw not in current:
        return None
    lines[line - 1] = current.replace(raw, target, 1)
    return "".join(lines)
