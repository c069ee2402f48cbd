"""Looking back: the journal of a memory's anchors, and the code's diff since it was bound."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from moor_extractors.model import Failure
from moor_store.journal import Entry

from moor_engine.observe import FileView, Found
from moor_engine.session import Session, UsageError


@dataclass
class AnchorDiff:
    ref: str
    bound_address: str | None
    address: str | None
    diff: str  # unified diff, empty when nothing changed
    note: str  # why there is no diff, or what moved


def _memory_anchors(session: Session, path: str) -> tuple[str, list[tuple[str, str | None]]]:
    selected = session.select([path])
    if len(selected) != 1 or not session.workspace.is_memory_path(selected[0]):
        raise UsageError(f"{path} is not a memory file")
    path = selected[0]
    evaluation = session.evaluate([path])
    loaded = evaluation.loaded[path]
    anchors = [
        (item.entry.raw, item.ref.canonical() if item.ref is not None else None)
        for item in loaded.entries
    ]
    return path, anchors


def memory_log(session: Session, path: str) -> tuple[str, list[Entry]]:
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
            if entry.code == "follow" and isinstance(entry.data, dict) and "from" in entry.data
        }
        if earlier <= wanted:
            return path, entries
        wanted |= earlier


def memory_diff(session: Session, path: str) -> tuple[str, list[AnchorDiff]]:
    path, anchors = _memory_anchors(session, path)
    locked = session.lock.memories.get(path)
    diffs: list[AnchorDiff] = []
    for raw, canonical in anchors:
        if canonical is None:
            diffs.append(AnchorDiff(raw, None, None, "", "the reference is invalid"))
            continue
        bound = locked.anchors.get(canonical) if locked else None
        observation = session.observer.observe_canonical(canonical)
        if bound is None:
            diffs.append(AnchorDiff(raw, None, None, "", "not bound yet: nothing to compare"))
            continue
        if isinstance(observation, Failure):
            note = f"cannot be observed now ({observation.code}: {observation.detail})"
            diffs.append(AnchorDiff(raw, bound.address, None, "", note))
            continue
        if not isinstance(observation, Found):
            diffs.append(
                AnchorDiff(raw, bound.address, observation.address, "", "gone from its file")
            )
            continue
        if observation.address == bound.address:
            diffs.append(
                AnchorDiff(raw, bound.address, observation.address, "", "unchanged since bound")
            )
            continue
        before = session.journal.snapshot(bound.address) if session.journal else None
        view = session.observer.view(observation.path)
        after = (
            "" if view is None or isinstance(view, Failure) else view.source_text(observation.site)
        )
        if before is None:
            diffs.append(
                AnchorDiff(
                    raw,
                    bound.address,
                    observation.address,
                    "",
                    "no snapshot of the bound code in this clone's journal (it was bound "
                    "elsewhere); `git log -p moor.lock` shows when",
                )
            )
            continue
        diff = "".join(
            difflib.unified_diff(
                _lines(before),
                _lines(after),
                fromfile=f"{canonical} (bound)",
                tofile=f"{canonical} ({_now(view)})",
            )
        )
        note = "" if diff else "only formatting differs"
        diffs.append(AnchorDiff(raw, bound.address, observation.address, diff, note))
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
