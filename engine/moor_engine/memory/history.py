"""Looking back: the journal of a memory's anchors, and the code's diff since it was bound."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from moor_store.journal import Entry

from moor_engine.anchors.machine import is_custom
from moor_engine.grounding.bound_code import bound_code
from moor_engine.grounding.observe import FileView, Found
from moor_engine.grounding.trust import State
from moor_engine.memory import namespaces
from moor_engine.session import Session
from moor_engine.usage import UsageError


@dataclass
class AnchorDiff:
    ref: str
    bound_address: str | None
    address: str | None
    diff: str  # unified diff, empty when nothing changed
    note: str  # why there is no diff, or what moved
    changed: bool = False  # a watched axis changed (what `check` says), whatever the text


def _memory_anchors(session: Session, path: str) -> tuple[str, list[tuple[str, str | None]]]:
    path = _memory_path(session, path)
    evaluation = session.evaluate([path])
    loaded = evaluation.loaded[path]
    anchors = [
        (item.entry.raw, item.ref.canonical() if item.ref is not None else None)
        for item in loaded.entries
    ]
    return path, anchors


def _memory_path(session: Session, path: str) -> str:
    rel = session.relative_arg(path)
    if session.workspace.is_memory_path(rel) and (session.workspace.root / rel).is_file():
        return rel  # what `select` chooses for a memory file, without listing every memory
    selected = session.select([path])
    if len(selected) != 1 or not session.workspace.is_memory_path(selected[0]):
        raise UsageError(f"{path} is not a memory file", code="not_a_memory", path=path)
    return selected[0]


def memory_log(session: Session, path: str) -> tuple[str, list[Entry]]:
    gone = _forgotten(session, path)
    if gone is not None:
        # No file (forgotten, or removed): its history is what the journal says of it.
        entries = session.journal.entries(memory=gone) if session.journal is not None else []
        return gone, entries
    path, anchors = _memory_anchors(session, path)
    if session.journal is None:
        return path, []
    keys = [canonical for _raw, canonical in anchors if canonical is not None]
    locked = session.lock.memories.get(path)
    if locked is not None:
        keys.extend(locked.anchors)
    keys.append(f"memory:{path}")
    # An anchor's lineage: a follow names the reference it came from, whose history
    # (transitions observed before the follow) is this memory's history too.
    wanted = set(keys)
    while True:
        entries = session.journal.entries_for(path, sorted(wanted))
        earlier = {
            str(entry.data["from"])
            for entry in entries
            if entry.code in ("follow", "repoint")
            and isinstance(entry.data, dict)
            and "from" in entry.data
        }
        if earlier <= wanted:
            return path, entries
        wanted |= earlier


def _forgotten(session: Session, arg: str) -> str | None:
    """`arg` as a memory path the journal knows, when no file is there now."""
    rel = session.relative_arg(arg)
    if (session.workspace.root / rel).exists() or session.journal is None:
        return None
    return rel if session.journal.entries(memory=rel) else None


def memory_diff(session: Session, path: str) -> tuple[str, list[AnchorDiff]]:
    """Each anchor's code as bound beside the code now: at its new place when it moved,
    nothing when it is gone. `changed` is the check's own verdict (a watched axis moved,
    or the code is gone), so `moor diff` and `moor check` agree on whether anything did."""
    path = _memory_path(session, path)
    evaluation = session.evaluate([path])
    report = evaluation.report.memories[0]
    locked = session.lock.memories.get(path)
    diffs: list[AnchorDiff] = []
    for anchor in report.anchors:
        raw, canonical = anchor.ref, anchor.canonical
        if canonical is None:
            diffs.append(AnchorDiff(raw, None, None, "", "the reference is invalid"))
            continue
        bound = locked.anchors.get(canonical) if locked else None
        if bound is None:
            diffs.append(AnchorDiff(raw, None, None, "", "not bound yet: nothing to compare"))
            continue
        changed = anchor.state in (State.DRIFTED, State.GONE) or (
            anchor.state == State.MOVED and bool(anchor.axes)
        )
        if anchor.state == State.UNVERIFIED:
            note = f"cannot be observed now ({anchor.code}: {anchor.detail})"
            diffs.append(AnchorDiff(raw, bound.address, None, "", note))
            continue
        if anchor.state not in (State.GONE, State.MOVED) and anchor.address == bound.address:
            diffs.append(
                AnchorDiff(raw, bound.address, anchor.address, "", "unchanged since bound")
            )
            continue
        before = bound_code(session.workspace, session.journal, canonical, bound)
        if before is None:
            note = (
                "no snapshot of the bound code in this clone's journal, and git history "
                "does not hold it (it was bound elsewhere, or not committed); "
                "`git log -p moor.lock` shows when"
            )
            diffs.append(AnchorDiff(raw, bound.address, anchor.address, "", note, changed))
            continue
        now_ref = anchor.moved_to if anchor.state == State.MOVED else canonical
        after, label = "", "gone"
        if anchor.state != State.GONE and now_ref is not None:
            observation = session.observer.observe_canonical(now_ref)
            if isinstance(observation, Found) and is_custom(now_ref) and session.commands:
                after = session.commands.texts.get(observation.address, "")
                label = "now"
            elif isinstance(observation, Found):
                view = session.observer.view(observation.path)
                if isinstance(view, FileView):
                    after, label = view.source_text(observation.site), _now(view)
        origin = "" if before.origin == "journal" else f", from {before.origin}"
        diff = "".join(
            difflib.unified_diff(
                _lines(before.text),
                _lines(after),
                fromfile=f"{canonical} (bound{origin})",
                tofile=f"{now_ref} ({label})",
            )
        )
        if anchor.state == State.GONE:
            note = "gone: the bound code is shown removed"
        elif anchor.state == State.MOVED:
            note = f"{anchor.code or 'moved'}: now {anchor.moved_to}"
            if not changed:
                note += "; no watched axis changed"
        else:
            note = "" if changed else "only formatting differs: no watched axis changed"
        diffs.append(AnchorDiff(raw, bound.address, anchor.address, diff, note, changed))
    return path, diffs


def _now(view: object) -> str:
    """How the diff names the code as it is now: from an editor's unsaved buffer, or not."""
    return "unsaved, in the editor" if isinstance(view, FileView) and view.overlay else "now"


def _lines(text: str) -> list[str]:
    """Lines for a diff, each ending in a newline: a definition's source does not end in
    one, and without it the last line before and the first after run together."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return lines


def reader_log(session: Session, path: str, agent: str | None) -> tuple[str, list[Entry]]:
    """`memory_log` as reader `agent` may read it (`namespaces`); another agent's memory is
    refused exactly as a path with no memory is, so the refusal tells nothing of it. The
    CLI's `moor log` and the editor are a person's whole view and use `memory_log`."""
    from moor_engine.memory.memory_owners import memories_of

    agent = namespaces.reader(agent)
    rel = session.relative_arg(path)
    if not namespaces.sees(memories_of(session, [rel]).get(rel), agent):
        raise UsageError(
            f"{rel}: no such memory, folder or file in {session.workspace.root}",
            code="not_found",
            path=rel,
        )
    return memory_log(session, path)
