"""The atlas's data: every memory with its trust state, the code it is about (files →
definitions), its links and cobound memories, its history, and a summary (counts per state,
coverage by folder). One check of the whole workspace, recorded nowhere: the atlas is a
view. The surfaces render it (`moor atlas` writes the page; the editor shows it).

The data is plain JSON (`Atlas.as_json`), versioned (`ATLAS_VERSION`), so a page or a
script reads it without moor. An anchor is described by its file and symbol as parsed from
the canonical reference; an anchor with no file (a custom anchor, when moor has them) is
kept with `file: null` under its own name, so the shape holds them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from moor_extractors.model import Failure
from moor_extractors.reference import parse_reference
from moor_store.journal import Entry

from moor_engine.grounding.links import visible_relations
from moor_engine.grounding.memories import LoadedMemory
from moor_engine.grounding.trust import SEVERITY_ORDER, MemoryReport, Report, State, worst
from moor_engine.session import Session
from moor_engine.workspace.roots import CONFIG_FILE, LOCK_FILE

ATLAS_VERSION = 1
HISTORY_KEPT = 12  # the latest journal entries kept per memory: the page stays small
# The journal's entry kinds a person reads as history: bound, changed, reaffirmed or
# revised, closed (`still` and `attempt` are bookkeeping of checks).
_STORY = {"open", "transition", "revise", "close"}


@dataclass
class AtlasMemory:
    report: MemoryReport
    folder: str
    agent: str | None
    text: str
    links: list[dict[str, object]]
    cobound: list[str]
    history: list[dict[str, object]] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        report = self.report
        return {
            "path": report.path,
            "title": report.title or report.path,
            "state": report.state.value,
            "folder": self.folder,
            "agent": self.agent,
            "text": self.text,
            "notes": list(report.notes),
            "findings": [finding.message for finding in report.link_findings],
            "anchors": [
                {
                    "ref": anchor.ref,
                    "canonical": anchor.canonical,
                    "file": _file_of(anchor.canonical),
                    "symbol": _symbol_of(anchor.canonical),
                    "state": anchor.state.value,
                    "detail": anchor.detail,
                }
                for anchor in report.anchors
            ],
            "links": self.links,
            "cobound": self.cobound,
            "history": self.history,
        }


@dataclass
class Atlas:
    workspace: str  # the root's folder name
    memories: list[AtlasMemory]
    code_files: list[str]  # every file that counts as code (coverage is measured on them)

    def as_json(self) -> dict[str, object]:
        files: dict[str, dict[str, list[str]]] = {}  # file -> symbol ("" = whole) -> memories
        states: dict[str, State] = {}
        for memory in self.memories:
            states[memory.report.path] = memory.report.state
            for anchor in memory.report.anchors:
                file = _file_of(anchor.canonical) or anchor.ref
                symbol = _symbol_of(anchor.canonical) or ""
                users = files.setdefault(file, {}).setdefault(symbol, [])
                if memory.report.path not in users:
                    users.append(memory.report.path)
        code = [
            {
                "path": path,
                "folder": posixpath.dirname(path),
                "state": worst([states[m] for users in symbols.values() for m in users]).value,
                "definitions": [
                    {
                        "symbol": symbol,
                        "memories": users,
                        "state": worst([states[m] for m in users]).value,
                    }
                    for symbol, users in sorted(symbols.items())
                ],
            }
            for path, symbols in sorted(files.items())
        ]
        return {
            "version": ATLAS_VERSION,
            "workspace": self.workspace,
            "states": [state.value for state in SEVERITY_ORDER],
            "summary": self.summary(files),
            "memories": [memory.as_json() for memory in self.memories],
            "code": code,
        }

    def summary_counts(self) -> dict[str, int]:
        """How many memories are in each state, worst first (as `moor check` counts)."""
        return Report([m.report for m in self.memories]).summary()

    def summary(self, files: dict[str, dict[str, list[str]]]) -> dict[str, object]:
        counts = self.summary_counts()
        folders: dict[str, dict[str, int]] = {}
        for path in self.code_files:
            row = folders.setdefault(posixpath.dirname(path), {"files": 0, "covered": 0})
            row["files"] += 1
            if path in files:
                row["covered"] += 1
        for path in files:  # a bound file git does not list (untracked, or gone)
            if path in self.code_files or _file_of(path) is None:
                continue  # listed already, or a custom anchor (`anchor:NAME`): no file
            row = folders.setdefault(posixpath.dirname(path), {"files": 0, "covered": 0})
            row["files"] += 1
            row["covered"] += 1
        memories_in: dict[str, int] = {}
        for memory in self.memories:
            for file in {_file_of(a.canonical) for a in memory.report.anchors}:
                if file is not None:
                    folder = posixpath.dirname(file)
                    memories_in[folder] = memories_in.get(folder, 0) + 1
        return {
            "memories": len(self.memories),
            "states": counts,
            "folders": [
                {"folder": folder, **row, "memories": memories_in.get(folder, 0)}
                for folder, row in sorted(folders.items())
            ],
        }


def atlas(session: Session) -> Atlas:
    """The atlas of the workspace `session` opened: a person's whole view (every agent's
    memories, each naming its owner), checked now and recorded nowhere."""
    report = session.check(session.select([]), record=False)
    evaluation = session.last_evaluation
    loaded = evaluation.loaded if evaluation is not None else {}
    return assemble(session, report.memories, loaded)


def assemble(
    session: Session, reports: Sequence[MemoryReport], loaded: Mapping[str, LoadedMemory]
) -> Atlas:
    """The atlas of memories already evaluated (`reports`, `loaded`: a check's, or the
    editor's live check's), with the journal's history and the code files of `session`."""
    relations = visible_relations(loaded, None, everyone=True)
    history = _histories(session, reports)
    memories = []
    for memory_report in sorted(reports, key=lambda report: report.path):
        memory = loaded[memory_report.path].memory if memory_report.path in loaded else None
        related = relations.of(memory_report.path)
        memories.append(
            AtlasMemory(
                memory_report,
                posixpath.dirname(memory_report.path),
                memory.agent if memory is not None else None,
                memory.body.strip() if memory is not None else "",
                [link.as_json() for link in related.links],
                list(related.cobound),
                history.get(memory_report.path, []),
            )
        )
    # Coverage is of the project's code: moor's own config and lock are not code to cover.
    own = {CONFIG_FILE, LOCK_FILE}
    code = [path for path in session.workspace.code_paths if path not in own]
    return Atlas(session.workspace.root.name, memories, code)


def _histories(
    session: Session, reports: Iterable[MemoryReport]
) -> dict[str, list[dict[str, object]]]:
    """Each memory's latest journal entries (its own, and what was observed of its anchors),
    newest first, from one read of the journal."""
    if session.journal is None:
        return {}
    users: dict[str, list[str]] = {}
    for report in reports:
        for anchor in report.anchors:
            if anchor.canonical is not None:
                users.setdefault(anchor.canonical, []).append(report.path)
    found: dict[str, list[dict[str, object]]] = {}
    entries: list[Entry] = session.journal.entries()
    for entry in reversed(entries):
        if entry.kind not in _STORY:
            continue
        owners = [entry.memory] if entry.memory is not None else users.get(entry.anchor, [])
        for owner in owners:
            kept = found.setdefault(owner, [])
            if len(kept) < HISTORY_KEPT:
                kept.append(
                    {
                        "at": entry.at,
                        "kind": entry.kind,
                        "code": entry.code,
                        "anchor": entry.anchor,
                        "reason": entry.reason,
                        "detail": entry.detail,
                    }
                )
    return found


def _file_of(canonical: str | None) -> str | None:
    if canonical is None:
        return None
    ref = parse_reference(canonical)
    return None if isinstance(ref, Failure) else ref.path


def _symbol_of(canonical: str | None) -> str | None:
    if canonical is None:
        return None
    ref = parse_reference(canonical)
    return None if isinstance(ref, Failure) else ref.symbol
