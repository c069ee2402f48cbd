"""A check of every memory answered from the last one, while nothing it rests on moved.

A warm `moor check` of 10,000 memories spent ~1.2 s CPU reading and parsing moor.lock,
decoding every memory's cached parse and deriving every trust state again, to print what
the last check printed. So a check of every memory keeps its report in
`.moor/kept-check.json` with the stat keys (`filestat`: size, mtime, ctime, inode, device)
of everything it rests on, and the next one answers from it when every key still holds:

* the judge: moor's own modules, tree-sitter and its grammars (an upgrade is a new judge),
  and moor's version;
* moor.toml, pyproject.toml (which may hold the settings) and moor.lock (absent: must
  still be absent), the journal file's identity (a
  journal set aside or rebuilt must be told again what this clone saw);
* which memories there are (listed again: `Workspace.memory_paths`), each memory file, and
  every file an anchor names.

Keys are taken through `moor_store.inside` (links walked inside only). A key whose mtime is
within the racy window of the check's start (`filestat.RACY_WINDOW_NS`, widened by how
long the check took) is stored as one that never matches: a file written during the
check, or in the same clock tick, is read again by the next check, as git does for its
index.

A report is kept only when it depends on nothing else: no anchor gone or moved (the
search for vanished code reads the whole tree and git), no re-baseline, no failure of
the environment (an unreachable file, an unreadable memory), no warning, and the check's
observations journalled. Otherwise the file is removed. A file that is not one this code
wrote (corrupt, foreign, another format) is ignored, never trusted: a key holds only for
the very inode and ctime the check saw, which no clone or copy of a repository carries
(memory: a-warm-check-answers-from-its-kept-report).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from moor_extractors.model import Failure, Reason
from moor_extractors.reference import ANCHOR_PREFIX
from moor_store import intent
from moor_store.inside import (
    has_stray_temporaries,
    read_inside,
    remove_inside,
    stat_many_inside,
    write_inside,
)

from moor_engine.grounding.trust import AnchorReport, Candidate, MemoryReport, Report, State
from moor_engine.workspace.distribution import version
from moor_engine.workspace.filestat import RACY_WINDOW_NS, StatKey, stat_key, stored
from moor_engine.workspace.roots import SETTINGS_FILES, STATE_DIR
from moor_engine.workspace.workspace import JOURNAL_FILE, Workspace

if TYPE_CHECKING:
    from moor_engine.grounding.check import Evaluation
    from moor_engine.session import Session

FILE = f"{STATE_DIR}/kept-check.json"
FORMAT = 1
_MAX_BYTES = 512 * 1024 * 1024
# The judge: whose verdicts are kept (grammars decide what a definition is).
_PACKAGES = (
    "moor_engine",
    "moor_extractors",
    "moor_store",
    "tree_sitter",
    "tree_sitter_python",
    "tree_sitter_javascript",
    "tree_sitter_typescript",
    "tree_sitter_go",
    "tree_sitter_rust",
    "tree_sitter_java",
    "tree_sitter_markdown",
)
# Anchors whose state comes from a search of the whole tree, not from the files they name.
_SEARCHED = frozenset({State.GONE, State.MOVED})

Keys = dict[str, list[int]]


# --- what vouches ---------------------------------------------------------------------------


def _judge_files() -> list[str]:
    found: list[str] = []
    for name in _PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for base, dirs, files in os.walk(folder):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                found += [f"{base}/{f}" for f in sorted(files) if f.endswith((".py", ".so"))]
    return found


def judge_keys() -> Keys:
    """The keys of moor's code and its grammars, and moor's version (as a key's name)."""
    keys: Keys = {f"version {version()}": []}
    for path in _judge_files():
        with contextlib.suppress(OSError):
            keys[path] = list(stat_key(os.stat(path)))
    return keys


def _keys(root: Path, rels: Iterable[str]) -> dict[str, list[int] | None]:
    """Each file's key as it is now (None: it cannot be stat-ed), taken inside the root."""
    found: dict[str, list[int] | None] = {}
    for rel, info in stat_many_inside(root, rels).items():
        found[rel] = None if isinstance(info, OSError) else list(stat_key(info))
    return found


def file_keys(root: Path, rels: Iterable[str]) -> Keys:
    """Each file's key as it is now; [] for one that cannot be stat-ed (absent)."""
    return {rel: key or [] for rel, key in _keys(root, rels).items()}


def stored_keys(
    root: Path, rels: Iterable[str], started_ns: int, *, absent: bool = False
) -> Keys | None:
    """The keys to keep for `rels`, read by work that started at `started_ns`; None when
    one was modified since (or within the racy window before), or cannot be stat-ed (with
    `absent`, an absent file is kept as [] instead: it must stay absent)."""
    now_ns = time.time_ns()
    window = RACY_WINDOW_NS + max(0, now_ns - started_ns)
    keys: Keys = {}
    for rel, key in _keys(root, rels).items():
        if key is None:
            if not absent:
                return None
            keys[rel] = []
        elif list(stored(StatKey(*key), now_ns, window)) != key:
            return None  # changed while it was read, or in the same tick: read it again
        else:
            keys[rel] = key
    return keys


def journal_identity(root: Path) -> list[int]:
    """The journal file's inode and device ([]: none): a journal set aside or rebuilt is
    another file."""
    try:
        info = os.stat(root / STATE_DIR / JOURNAL_FILE)
    except OSError:
        return []
    key = stat_key(info)
    return [key.inode, key.device]


# The settings (moor.toml, else pyproject.toml's `[tool.moor]`) and moor.lock.
SETTINGS = SETTINGS_FILES


# --- answering from it -----------------------------------------------------------------------


def answer(start: Path) -> Report | None:
    """`kept_report` of the workspace `start` is in."""
    return kept_report(Workspace.open(start))


def kept_report(workspace: Workspace) -> Report | None:
    """The report of the last check of every memory, if every key it rests on still
    holds; None when the check must be made (none kept, unreadable, anything moved, an
    interrupted action to complete first)."""
    root = workspace.root
    if intent.pending(root) or has_stray_temporaries(root, STATE_DIR):
        return None  # `Session.open` completes or sweeps first
    document = _read(root)
    if document is None:
        return None
    if document.get("judge") != judge_keys():
        return None
    if document.get("settings") != file_keys(root, SETTINGS):
        return None
    if document.get("journal") != journal_identity(root):
        return None
    memories = workspace.memory_paths()
    if workspace.warnings or document.get("memories") != memories:
        return None
    files = document.get("files")
    if not isinstance(files, dict) or not set(memories) <= set(files):
        return None
    now = _keys(root, files)
    if any(now[rel] is None or now[rel] != key for rel, key in files.items()):
        return None
    return _report(document.get("report"), memories)


def _read(root: Path) -> dict[str, object] | None:
    try:
        value = json.loads(read_inside(root, FILE, limit=_MAX_BYTES))
    except (OSError, ValueError):  # missing, not a regular file, too large, not JSON
        return None
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        return None
    return value


# --- keeping it ------------------------------------------------------------------------------


def keep(session: Session, evaluation: Evaluation, paths: list[str], started_ns: int) -> None:
    """Keep the report of `evaluation` (a check of `paths`, started at `started_ns`) for
    the next check of every memory, or remove the kept one when it may not be kept."""
    workspace = session.workspace
    document = _document(session, evaluation, paths, started_ns)
    with contextlib.suppress(OSError):  # a cache: not kept costs the next check its time
        if document is None:
            remove_inside(workspace.root, FILE)
        else:
            # A torn file is not JSON (ignored), so it is not synced to disk on every check.
            write_inside(workspace.root, FILE, json.dumps(document).encode(), durable=False)


def _document(
    session: Session, evaluation: Evaluation, paths: list[str], started_ns: int
) -> dict[str, object] | None:
    workspace = session.workspace
    journal = session.journal
    if journal is None or journal.read_only or session.told():
        return None
    if paths != workspace.memory_paths() or workspace.warnings:
        return None
    if evaluation.translations or evaluation.report.rebaselined or not _keepable(evaluation):
        return None
    code = {
        item.ref.path
        for loaded in evaluation.loaded.values()
        for item in loaded.entries
        if item.ref is not None and item.ref.path is not None
    }
    settings = stored_keys(workspace.root, SETTINGS, started_ns, absent=True)
    files = stored_keys(workspace.root, [*paths, *sorted(code - set(paths))], started_ns)
    if settings is None or files is None:
        return None
    return {
        "format": FORMAT,
        "judge": judge_keys(),
        "settings": settings,
        "journal": journal_identity(workspace.root),
        "memories": paths,
        "files": files,
        "report": _encoded(evaluation.report),
    }


def _keepable(evaluation: Evaluation) -> bool:
    if any(loaded.read_error for loaded in evaluation.loaded.values()):
        return False  # an unreadable memory may be readable next time with the same key
    for canonical, observation in evaluation.observations.items():
        if canonical.startswith(ANCHOR_PREFIX):
            return False  # a command's output rests on more than files moor can stat
        if isinstance(observation, Failure) and observation.reason == Reason.UNREACHABLE:
            return False
    return not any(_searched(memory) for memory in evaluation.report.memories)


def _searched(report: MemoryReport) -> bool:
    return any(anchor.state in _SEARCHED for anchor in report.anchors)


def keepable_memory(
    session: Session, evaluation: Evaluation, report: MemoryReport, started_ns: int
) -> Keys | None:
    """The keys one memory's verdict in `evaluation` rests on (its memory file's, its
    anchors' files'), to keep it by; None when it rests on more (as `_keepable`) or a key
    is racy."""
    loaded = evaluation.loaded.get(report.path)
    if loaded is None or loaded.read_error or _searched(report):
        return None
    files = [report.path]
    for item in loaded.entries:
        if item.ref is None:
            continue
        canonical = item.ref.canonical()
        observation = evaluation.observations.get(canonical)
        if (
            canonical.startswith(ANCHOR_PREFIX)
            or canonical in evaluation.translations
            or (isinstance(observation, Failure) and observation.reason == Reason.UNREACHABLE)
        ):
            return None
        if item.ref.path is not None:
            files.append(item.ref.path)
    return stored_keys(session.workspace.root, dict.fromkeys(files), started_ns)


# --- the report as JSON, and read back -------------------------------------------------------


def _encoded(report: Report) -> list[object]:
    return [
        {
            "path": m.path,
            "state": m.state.value,
            "title": m.title,
            "notes": m.notes,
            "at": [m.line, m.column],
            "code": m.code,
            "anchors": [
                [
                    a.ref,
                    a.state.value,
                    a.canonical,
                    [a.line, a.column, a.end_line, a.end_column],
                    a.axes,
                    a.reason,
                    a.code,
                    a.detail,
                    a.moved_to,
                    [[c.ref, c.similarity] for c in a.candidates],
                    a.suggestions,
                    a.bound_address,
                    a.address,
                    a.change,
                ]
                for a in m.anchors
            ],
        }
        for m in report.memories
    ]


class _Invalid(Exception):
    pass


def _report(encoded: object, paths: list[str]) -> Report | None:
    """The kept report read back; None when it is not one this module wrote for `paths`."""
    if not isinstance(encoded, list) or len(encoded) != len(paths):
        return None
    try:
        memories = [_memory(item) for item in encoded]
    except (_Invalid, KeyError, ValueError, TypeError):
        return None
    if [m.path for m in memories] != paths:
        return None
    return Report(memories)


_STATES = {state.value: state for state in State}


def _memory(item: object) -> MemoryReport:
    if not isinstance(item, Mapping):
        raise _Invalid
    line, column = _ints(item.get("at"), 2)
    anchors = item.get("anchors")
    if not isinstance(anchors, list):
        raise _Invalid
    return MemoryReport(
        path=_text(item.get("path")),
        state=_STATES[_text(item.get("state"))],
        title=_text(item.get("title")),
        anchors=[_anchor(anchor) for anchor in anchors],
        notes=_texts(item.get("notes")),
        line=line,
        column=column,
        code=_optional(item.get("code")),
    )


_OPTIONAL = (str, type(None))


def _anchor(item: object) -> AnchorReport:
    # Read for every anchor of every memory: checked inline, not field by field.
    if type(item) is not list or len(item) != 14:
        raise _Invalid
    (ref, state, canonical, at, axes, reason, code, detail, moved_to) = item[:9]
    candidates, suggestions, bound_address, address, change = item[9:]
    if not (
        type(ref) is str
        and type(canonical) in _OPTIONAL
        and type(reason) in _OPTIONAL
        and type(code) in _OPTIONAL
        and type(detail) in _OPTIONAL
        and type(moved_to) in _OPTIONAL
        and type(bound_address) in _OPTIONAL
        and type(address) in _OPTIONAL
        and type(change) in _OPTIONAL
        and type(candidates) is list
    ):
        raise _Invalid
    line, column, end_line, end_column = _ints(at, 4)
    return AnchorReport(
        ref=ref,
        state=_STATES[_text(state)],
        canonical=canonical,
        line=line,
        column=column,
        end_line=end_line,
        end_column=end_column,
        axes=_texts(axes),
        reason=reason,
        code=code,
        detail=detail,
        moved_to=moved_to,
        candidates=[_candidate(c) for c in candidates] if candidates else [],
        suggestions=_texts(suggestions),
        bound_address=bound_address,
        address=address,
        change=change,
    )


def _candidate(item: object) -> Candidate:
    if not isinstance(item, list) or len(item) != 2:
        raise _Invalid
    ref, similarity = item
    if similarity is not None and not isinstance(similarity, float | int):
        raise _Invalid
    return Candidate(_text(ref), None if similarity is None else float(similarity))


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise _Invalid
    return value


def _optional(value: object) -> str | None:
    return None if value is None else _text(value)


def _texts(value: object) -> list[str]:
    if type(value) is not list or not all(type(v) is str for v in value):
        raise _Invalid
    return value


def _ints(value: object, count: int) -> list[int]:
    if type(value) is not list or len(value) != count or not all(type(v) is int for v in value):
        raise _Invalid
    return value
