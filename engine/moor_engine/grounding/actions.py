"""What a person does about a memory: bind, reaffirm, follow — each journalled with its why."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from moor_extractors.memory import parse_memory
from moor_extractors.model import Facts, Failure
from moor_extractors.reference import Reference, parse_reference
from moor_store.inside import exists_inside, read_inside
from moor_store.intent import Change
from moor_store.journal import NewEntry
from moor_store.lockfile import Lock, LockedAnchor, LockedMemory, format_lock

from moor_engine.anchors.machine import first_look, is_custom, reaffirmed
from moor_engine.grounding.check import locked_anchor_from, translated_anchor
from moor_engine.grounding.definition_index import bound_languages
from moor_engine.grounding.memories import LoadedMemory, loaded_lock_content, lock_content
from moor_engine.grounding.observe import Found, NotFound, found_address
from moor_engine.grounding.places import place_seal
from moor_engine.grounding.trust import AnchorReport, State
from moor_engine.grounding.verdicts import followable, reaffirm_verdict
from moor_engine.memory.latch import latch_declared, read_latches
from moor_engine.memory.retired_text import RetiredText
from moor_engine.session import Session
from moor_engine.usage import UsageError
from moor_engine.written import Refusal, Written


def _latch_declared(
    session: Session,
    lock: Lock,
    loaded: list[LoadedMemory],
    entries: list[NewEntry],
    written: Written,
) -> Lock:
    """Record what these memories' `supersedes:` retire (moor_engine.memory.latch), with the
    rest."""
    memories = [(m.path, m.memory) for m in loaded if m.memory is not None]
    lock, retiring = latch_declared(
        session.workspace.root, lock, read_latches(lock, session.journal), memories
    )
    entries.extend(retiring)
    written.done.extend(f"{e.memory}: retired ({e.detail})" for e in retiring)
    return lock


def _require_memory(session: Session, path: str) -> str:
    selected = session.select([path])
    if len(selected) != 1 or not session.workspace.is_memory_path(selected[0]):
        raise UsageError(
            f"{path} is not a memory file under {session.workspace.config.memory_roots}",
            code="not_a_memory",
            path=path,
        )
    return selected[0]


def _unusable(session: Session, path: str, loaded: LoadedMemory, action: str) -> Refusal:
    """Why a memory cannot be acted on: its problems (`invalid`), or what kept it from being
    read (`unreadable`) — the file gone since the action was asked for (`not_found`):
    removed while the action waited for the write lock (a `forget`, or a person)."""
    if loaded.read_error is None:
        why = f"{path}: invalid: " + "; ".join(p.message for p in loaded.problems)
        return Refusal("invalid", why, path=path)
    if not exists_inside(session.workspace.root, path):
        why = (
            f"{path} was removed while this {action} waited (forgotten, or deleted); "
            "nothing was written"
        )
        return Refusal("not_found", why, path=path)
    return Refusal("unreadable", loaded.read_error, path=path)


def _seal(session: Session, found: Found, change: Change, canonical: str) -> None:
    """Keep the code as it is now, so `diff` can show what changed since (with the change),
    and its place in the file, for a rename in place (`places.py`)."""
    if is_custom(canonical):  # a command anchor: its facts, not a file
        change.seals.extend(session.commands.seals(found.address) if session.commands else [])
        return
    view = session.observer.view(found.path)
    if view is None or isinstance(view, Failure):
        return
    change.seals.append((found.address, view.source_text(found.site)))
    change.seals.extend(place_seal(view, found, canonical))


def bind(session: Session, paths: list[str]) -> Written:
    """Record the current address of every anchor not yet in moor.lock.

    Anchors already bound keep their bound address (accepting drift is `reaffirm`'s job);
    a memory's text hash is recorded when it is first bound or its `about:` set changes.
    Under the write lock, as one unit (ARCHITECTURE.md, "writing").
    """
    with session.writing("moor bind"):
        return _bind(session, paths)


def _bind(session: Session, paths: list[str]) -> Written:
    selected = session.select(paths)
    change = Change("moor bind")
    evaluation = session.evaluate(selected)
    written = Written("bind")
    lock = session.lock
    # The memories of the lock being written, changed in place: a new Lock per memory bound
    # copied every memory's entry each time, quadratic in the memories (issue 22).
    memories = dict(lock.memories)
    entries: list[NewEntry] = []
    retired = RetiredText(session, read_latches(lock, session.journal))
    for path in selected:
        loaded = evaluation.loaded[path]
        if loaded.memory is None:
            written.refused.append(_unusable(session, path, loaded, "bind"))
            continue
        if any(item.ref is None for item in loaded.entries):
            bad = [item for item in loaded.entries if item.ref is None]
            written.refused.extend(
                Refusal(
                    item.problem.code if item.problem else "invalid",
                    f"{path}: {item.entry.raw}: "
                    + (item.problem.detail if item.problem else "refused"),
                    path=path,
                    ref=item.entry.raw,
                )
                for item in bad
            )
            continue
        old = lock.memories.get(path)
        canonicals = {item.ref.canonical() for item in loaded.entries if item.ref is not None}
        if old is None or canonicals != set(old.anchors):
            # What it says is recorded as reviewed: a retired text is not (retired_text.py).
            refused = retired.refusal(path, loaded.memory)
            if refused is not None:
                written.refused.append(replace(refused, message=f"{path}: {refused.message}"))
                continue
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
                code, why = _unobserved(observation)
                written.refused.append(
                    Refusal(
                        code,
                        f"{path}: cannot bind {item.entry.raw}: {why}",
                        path=path,
                        ref=item.entry.raw,
                    )
                )
                continue
            anchors[canonical] = locked_anchor_from(item.ref, observation)
            added.append(canonical)
            if item.ref.anchor is not None:
                declared = session.workspace.config.anchors.get(item.ref.anchor)
                warning = first_look(declared, observation)
                if warning is not None:
                    written.done.append(f"{path}: {warning}")
            _seal(session, observation, change, canonical)
            entries.append(
                NewEntry("open", canonical, memory=path, address=observation.address, code="bind")
            )
        removed = sorted(set(old.anchors) - set(anchors)) if old is not None else []
        entries.extend(NewEntry("revise", r, memory=path, code="unbind") for r in removed)
        if len(removed) == 1 and len(added) == 1:
            # One reference edited into another by hand: a re-point, kept in the lineage.
            entries.append(
                NewEntry(
                    "revise",
                    added[0],
                    memory=path,
                    address=anchors[added[0]].address,
                    previous=old.anchors[removed[0]].address if old is not None else None,
                    code="repoint",
                    detail=f"re-pointed by hand: {removed[0]} -> {added[0]}",
                    data={"from": removed[0], "to": added[0], "how": "by hand"},
                )
            )
        if not added and not removed:
            continue  # already bound as it is, or nothing could be bound
        content = (
            loaded_lock_content(session.workspace, loaded, anchors)
            if old is None or added or removed
            else old.content
        )
        memories[path] = LockedMemory(path, content, anchors)
        written.done.append(
            f"{path}: bound {len(added)} anchor(s)"
            + (f", dropped {len(removed)}" if removed else "")
        )
    if not paths:
        # A full bind also forgets lock entries of memory files that no longer exist — only
        # those: one that is still on disk (outside the memory roots now, or unreadable) is
        # kept, so a configuration mistake never drops what was bound.
        for path in sorted(set(memories) - set(selected)):
            if exists_inside(session.workspace.root, path):
                session.warnings.append(
                    f"{path} is in moor.lock but not a memory under memory_roots "
                    f"{session.workspace.config.memory_roots}; kept in moor.lock"
                )
                continue
            entries.extend(
                NewEntry("revise", ref, memory=path, code="unbind", detail="memory file removed")
                for ref in memories.pop(path).anchors
            )
            written.done.append(f"{path}: no longer exists; dropped from moor.lock")
    lock = _latch_declared(
        session,
        replace(lock, memories=memories),
        [evaluation.loaded[p] for p in selected],
        entries,
        written,
    )
    session.lock = lock
    if session.mended:
        written.done.append(
            "moor.lock: retirements and tombstones this clone holds were missing (an older "
            "moor.lock came back); recorded them again"
        )
    if written.done:
        change.write("moor.lock", session.lock_bytes, format_lock(lock).encode("utf-8"))
    change.entries = entries
    session.commit(change)
    # The definition index is built now, so the first check after bound code goes looks
    # again only at what changed since (memory: relocation-index-follows-the-change-set).
    session.checker.indexes.prepare(bound_languages(session.lock))
    session.observer.flush()
    return written


def reaffirm(session: Session, path: str, why: str) -> Written:
    """Accept the code as it is now for every anchor of one memory, with a reason.

    All or nothing: an anchor that is gone, moved or cannot be observed blocks the whole
    reaffirmation, so the lock never mixes old and new judgements of one memory.
    """
    if not why.strip():
        raise UsageError('reaffirm needs a reason: --why "..."', code="no_reason")
    path = _require_memory(session, path)
    with session.writing("moor reaffirm"):
        return _reaffirm(session, path, why)


def _reaffirm(session: Session, path: str, why: str) -> Written:
    evaluation = session.evaluate([path])
    loaded = evaluation.loaded[path]
    written = Written("reaffirm", path=path)
    if loaded.memory is None:
        written.refused.append(_unusable(session, path, loaded, "reaffirm"))
        return written
    verdict = reaffirm_verdict(evaluation.report.memories[0])
    if not verdict.allowed:
        written.refused.append(
            Refusal(verdict.code, f"{path}: cannot reaffirm: {verdict.why}", path=path)
        )
        return written
    anchors: dict[str, LockedAnchor] = {}
    founds: list[tuple[str, Found]] = []
    for item in loaded.entries:
        if item.ref is None:
            written.refused.append(
                Refusal(
                    item.problem.code if item.problem else "invalid",
                    f"{item.entry.raw}: {item.problem.detail if item.problem else ''}",
                    path=path,
                    ref=item.entry.raw,
                )
            )
            continue
        canonical = item.ref.canonical()
        observation = evaluation.observations[canonical]
        if isinstance(observation, Found):
            anchors[canonical] = locked_anchor_from(item.ref, observation)
            if is_custom(canonical):
                before = session.lock.memories.get(path)
                anchors[canonical] = reaffirmed(
                    anchors[canonical],
                    before.anchors.get(canonical) if before is not None else None,
                    next(
                        (
                            a
                            for a in evaluation.report.memories[0].anchors
                            if a.canonical == canonical
                        ),
                        None,
                    ),
                )
            founds.append((canonical, observation))
        elif isinstance(observation, NotFound):
            written.refused.append(
                Refusal(
                    "not_found",
                    f"{item.entry.raw}: not found: `moor follow {path}` if it moved, "
                    "or edit the memory",
                    path=path,
                    ref=item.entry.raw,
                )
            )
        else:
            written.refused.append(
                Refusal(
                    observation.code,
                    f"{item.entry.raw}: cannot be observed "
                    f"({observation.code}: {observation.detail})",
                    path=path,
                    ref=item.entry.raw,
                )
            )
    if written.refused:
        return written
    old = session.lock.memories.get(path)
    change = Change("moor reaffirm")
    entries = []
    for canonical, found in founds:
        _seal(session, found, change, canonical)
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
    lock = session.with_memory(LockedMemory(path, loaded.memory.content_hash, anchors), path)
    lock = _latch_declared(session, lock, [loaded], entries, written)
    change.write("moor.lock", session.lock_bytes, format_lock(lock).encode("utf-8"))
    change.entries = entries
    session.commit(change)
    session.lock = lock
    session.observer.flush()
    written.done.append(f"{path}: reaffirmed {len(founds)} anchor(s): {why}")
    return written


@dataclass(frozen=True)
class _Move:
    raw: str  # the reference as written
    canonical: str
    line: int
    target: str  # canonical reference of the new place
    how: str  # "moved", "renamed", or "chosen" (a person named the new place)


def follow(
    session: Session,
    path: str,
    to: str | None = None,
    source: str | None = None,
    why: str | None = None,
    *,
    dry_run: bool = False,
) -> Written:
    """Re-point moved references (or, with `to`, the one a person names) and re-bind them.

    Every new place is observed and the new memory text parsed before anything is written;
    then the memory file is replaced atomically and moor.lock after it. A refusal leaves
    both byte-identical. The re-pointed anchor keeps its bound digests, so whatever
    changed on the way (every watched axis but the name) shows as `drifted` until someone
    reaffirms it with a reason.

    `dry_run`: decide everything and answer the memory's new text, writing nothing (an
    editor shows it in the open buffer first, then follows for real).
    """
    path = _require_memory(session, path)
    with session.writing("moor follow"):
        return _follow(session, path, to, source, why, dry_run)


def _follow(
    session: Session,
    path: str,
    to: str | None,
    source: str | None,
    why: str | None,
    dry_run: bool = False,
) -> Written:
    evaluation = session.evaluate([path])
    loaded = evaluation.loaded[path]
    written = Written("follow", path=path)
    if loaded.memory is None:
        written.refused.append(_unusable(session, path, loaded, "follow"))
        return written
    report = evaluation.report.memories[0]
    if to is None:
        moves = [
            _Move(a.ref, a.canonical, a.line, a.moved_to, a.code or "moved")
            for a in report.anchors
            if followable(a) and a.moved_to and a.canonical
        ]
        if not moves:
            # A no-op, not a refusal (exit 0): nothing asked for was refused.
            written.done.append(
                f"{path}: nothing moved, nothing to follow: a no-op, not a refusal "
                "(nothing was changed)"
            )
            written.done.extend(
                f"{path}: {a.ref} is gone; if it lives on elsewhere: "
                f"`moor follow {path} --to {a.candidates[0].ref if a.candidates else 'REF'}`"
                for a in report.anchors
                if a.state == State.GONE
            )
            return written
    else:
        chosen = _chosen_move(report.anchors, path, to, source, written)
        if chosen is None:
            return written
        moves = [chosen]
    founds: dict[str, Found] = {}
    for move in moves:
        ref = parse_reference(move.target)
        observation = ref if isinstance(ref, Failure) else session.observer.observe(ref)
        if not isinstance(observation, Found):
            code, why_not = _unobserved(observation)
            written.refused.append(
                Refusal(
                    code,
                    f"{move.raw}: the new place {move.target} cannot be observed "
                    f"({why_not}); nothing was changed",
                    path=path,
                    ref=move.target,
                )
            )
            return written
        assert not isinstance(ref, Failure)
        overloads = session.observer.overloads(ref) if move.how == "chosen" else []
        if overloads:
            # One piece of code was bound; a group's facts are all of its overloads at once,
            # which the bound code never matches: the person names the one it became.
            written.refused.append(
                Refusal(
                    "overload_group",
                    f"--to {move.target}: {ref.symbol} names {len(overloads)} overloads "
                    f"watched together ({', '.join(overloads)}): name the one "
                    f"{move.raw} became, e.g. `moor follow {path} --to {overloads[0]}`",
                    path=path,
                    ref=move.target,
                    suggestions=tuple(overloads),
                )
            )
            return written
        founds[move.target] = observation
    original = _memory_bytes(session, path)
    text = original.decode("utf-8")
    for move in moves:
        rewritten = _replace_reference(text, move.raw, move.target, move.line)
        if rewritten is None:
            written.refused.append(
                Refusal(
                    "not_rewritable",
                    f"{move.raw}: could not find it on line {move.line} to rewrite; edit by hand",
                    path=path,
                    ref=move.raw,
                )
            )
            return written
        text = rewritten
    reparsed = parse_memory(path, text.encode("utf-8"))
    if reparsed.memory is None:
        written.refused.append(
            Refusal(
                "not_rewritable",
                f"{path}: the rewritten memory would not parse; edit by hand",
                path=path,
            )
        )
        return written
    old = session.lock.memories.get(path)
    anchors = dict(old.anchors) if old else {}
    entries = []
    for move in moves:
        ref = parse_reference(move.target)
        assert not isinstance(ref, Failure)
        found = founds[move.target]
        before = old.anchors.get(move.canonical) if old else None
        followed = _followed_anchor(session, ref, found, before)
        anchors.pop(move.canonical, None)
        anchors[followed.ref] = followed
        entries.append(
            NewEntry(
                "revise",
                followed.ref,
                memory=path,
                address=followed.address,
                previous=before.address if before else None,
                reason=why,
                code="follow",
                detail=f"{move.how}: {move.canonical} -> {followed.ref}",
                data={"from": move.canonical, "to": followed.ref, "how": move.how},
            )
        )
        if (
            before is not None
            and before.derivation != found.derivation
            and session.checker.translation(before.ref, before, found) is None
        ):
            written.done.append(
                f"{path}: {move.raw} was bound by another normaliser: the code at "
                f"{move.target} is taken as it is now (`moor diff {path}` shows it)"
            )
        written.done.append(f"{path}: {move.raw} -> {move.target}")
    was_current = old is None or old.content == loaded_lock_content(
        session.workspace, loaded, old.anchors
    )
    followed_entries = [(entry, _canonical(entry.raw)) for entry in reparsed.memory.about]
    content = (
        lock_content(text, reparsed.memory, followed_entries, anchors)
        if was_current or old is None
        else old.content
    )
    new_lock = session.with_memory(LockedMemory(path, content, anchors), path)
    if _memory_bytes(session, path) != original:
        written.refused.append(
            Refusal("conflict", f"{path}: changed while following; nothing was changed", path=path)
        )
        written.done.clear()
        return written
    written.memory_text = text
    if dry_run:
        return written
    change = Change("moor follow")
    for move in moves:
        followed_ref = parse_reference(move.target)
        assert not isinstance(followed_ref, Failure)
        before = old.anchors.get(move.canonical) if old else None
        _seal_followed(
            session,
            founds[move.target],
            before,
            new_lock.memories[path].anchors[followed_ref.canonical()],
            change,
        )
    # The memory first, moor.lock after it: the intent record completes both if a crash
    # comes between them.
    change.write(path, original, text.encode("utf-8"))
    change.write("moor.lock", session.lock_bytes, format_lock(new_lock).encode("utf-8"))
    change.entries = entries
    session.commit(change)
    session.lock = new_lock
    session.observer.flush()
    return written


def _memory_bytes(session: Session, path: str) -> bytes:
    return read_inside(session.workspace.root, path, limit=session.workspace.config.max_file_size)


def _canonical(raw: str) -> str | None:
    ref = parse_reference(raw)
    return None if isinstance(ref, Failure) else ref.canonical()


def _chosen_move(
    anchors: list[AnchorReport], path: str, to: str, source: str | None, written: Written
) -> _Move | None:
    """The anchor a person re-points with `--to` (named by `--from` when there are several)."""
    target = parse_reference(to)
    if isinstance(target, Failure):
        written.refused.append(Refusal(target.code, f"--to {to}: {target.detail}", ref=to))
        return None
    if target.path is None:
        written.refused.append(
            Refusal(
                "not_code", f"--to {to}: only code can be followed to, not a custom anchor", ref=to
            )
        )
        return None
    movable = [a for a in anchors if a.state in (State.MOVED, State.GONE) and a.canonical]
    if source is not None:
        wanted = parse_reference(source)
        key = wanted.canonical() if not isinstance(wanted, Failure) else source
        movable = [a for a in anchors if a.ref == source or a.canonical == key]
        if not movable:
            written.refused.append(
                Refusal("not_found", f"--from {source}: {path} has no such reference", ref=source)
            )
            return None
        if movable[0].state not in (State.MOVED, State.GONE):
            written.refused.append(
                Refusal(
                    "not_moved",
                    f"--from {source}: it is {movable[0].state.value}, not moved or gone; "
                    "edit the reference and `moor bind` to re-point it",
                    ref=source,
                )
            )
            return None
    if len(movable) != 1:
        listed = ", ".join(a.ref for a in movable) or "none"
        written.refused.append(
            Refusal(
                "ambiguous",
                f"{path}: say which reference goes to {to} with --from (moved or gone: {listed})",
                path=path,
                suggestions=tuple(a.ref for a in movable),
            )
        )
        return None
    anchor = movable[0]
    assert anchor.canonical is not None
    return _Move(anchor.ref, anchor.canonical, anchor.line, target.canonical(), "chosen")


def _followed_anchor(
    session: Session, ref: Reference, found: Found, before: LockedAnchor | None
) -> LockedAnchor:
    """The anchor at its new place, still judged against the code it was bound to.

    Every axis keeps its bound digest (the name is in none of them), so code that changed
    on the way shows as drifted after `follow` instead of being silently accepted. Code
    bound by an older normaliser is judged against its bound code normalised again
    (derivations.py); only when that is not recoverable is it taken as it is now.
    """
    if before is not None and before.derivation != found.derivation:
        translation = session.checker.translation(before.ref, before, found)
        if translation is not None:
            before = translated_anchor(before, found.derivation, translation)
    if before is None or before.derivation != found.derivation:
        return locked_anchor_from(ref, found)
    axes = {axis: before.axes.get(axis, digest) for axis, digest in found.facts.axes.items()}
    facts = Facts(kind=before.kind, axes=axes)
    return LockedAnchor(
        ref=ref.canonical(),
        address=found_address(found.derivation, facts),
        derivation=found.derivation,
        kind=before.kind,
        axes=axes,
    )


def _seal_followed(
    session: Session,
    found: Found,
    before: LockedAnchor | None,
    followed: LockedAnchor,
    change: Change,
) -> None:
    """Keep `diff` working after a follow: the followed address shows the bound code."""
    if followed.address == found.address or session.journal is None:
        _seal(session, found, change, followed.ref)
        return
    text = session.journal.snapshot(before.address) if before is not None else None
    if text is not None:
        change.seals.append((followed.address, text))
    change.seals.extend(place_seal(session.observer.view(found.path), found, followed.ref))


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


def _unobserved(observation: object) -> tuple[str, str]:
    """The refusal code and the reason for code that could not be observed: the failure's
    own, or `not_found`."""
    if isinstance(observation, Failure):
        return observation.code, f"{observation.code}: {observation.detail}"
    return "not_found", "it does not exist"
