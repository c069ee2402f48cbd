"""`moor anchors`: every anchor the workspace knows — declared command anchors and the code
anchors moor.lock binds — with what this clone's journal last recorded of each. Nothing
is run and nothing read but moor.toml, moor.lock, the journal and the bound memories (the
`watch:` a code anchor's rules are generated from): `moor check` observes."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from moor_extractors.memory import effective_watch
from moor_extractors.model import DEFAULT_WATCH
from moor_extractors.reference import ANCHOR_PREFIX, is_markdown_path
from moor_store.journal import Entry

from moor_engine.anchors.code_rules import UNRULED, generated
from moor_engine.anchors.facts import STATE_AXIS
from moor_engine.anchors.machine import OBSERVED
from moor_engine.anchors.revise import KINDS
from moor_engine.grounding.memories import load_memories
from moor_engine.session import Session


@dataclass
class AnchorRow:
    anchor: str  # canonical reference
    kind: str  # command, symbol, section or file
    memories: list[str] = field(default_factory=list)  # the memories moor.lock binds to it
    bound: bool = False
    reproducibility: str | None = None  # command anchors: closed or open
    streak: int | None = None  # command anchors: observations a change must persist
    command: list[str] | None = None
    last_observed: str | None = None  # when (ISO-8601), from this clone's journal
    last_attempt: dict[str, str | None] | None = None  # the latest failed look, if newer
    last_state: str | None = None  # what the latest journalled look said
    next_due: str | None = None
    closed: dict[str, str] | None = None  # {by, reason, at} once closed (moor.lock)
    rules: int | None = None  # command anchors: how many transition rules it declares
    terminal: list[str] | None = None  # command anchors: the states that close it
    state: object = None  # with rules: the state moor.lock binds (its first memory's)
    revisions: dict[str, int] | None = None  # `moor revise`s journalled here, per kind
    # Code anchors: the transition rules their memories' `watch:` generates (code_rules.py),
    # when every memory binding it watches the same axes (`watch`); else each memory's.
    generated_rules: list[dict[str, str]] | None = None
    watch: list[str] | None = None
    generated_rules_by_memory: dict[str, list[dict[str, str]]] | None = None

    def as_json(self) -> dict[str, object]:
        return dict(self.__dict__)


def kind_of(canonical: str) -> str:
    if canonical.startswith(ANCHOR_PREFIX):
        return "command"
    path, _, symbol = canonical.partition("#")
    if not symbol:
        return "file"
    return "section" if is_markdown_path(path) else "symbol"


def list_anchors(session: Session) -> list[AnchorRow]:
    rows: dict[str, AnchorRow] = {}
    for name, declaration in session.workspace.config.anchors.items():
        rows[ANCHOR_PREFIX + name] = AnchorRow(
            ANCHOR_PREFIX + name,
            "command",
            reproducibility=declaration.reproducibility,
            streak=declaration.streak,
            command=list(declaration.command),
            next_due="at the next `moor check`",
            rules=len(declaration.rules),
            terminal=list(declaration.terminal),
            generated_rules=None if declaration.rules else _generated(UNRULED),
        )
    for path, memory in sorted(session.lock.memories.items()):
        for canonical in memory.anchors:
            row = rows.get(canonical) or _code_row(rows, canonical)
            row.bound = True
            row.memories.append(path)
            state = memory.anchors[canonical].axes.get(STATE_AXIS)
            if state is not None and row.state is None:
                row.state = json.loads(state)
    _watched(session, rows)
    for name, closure in session.lock.closed.items():
        row = rows.setdefault(name, AnchorRow(name, "command"))
        row.closed = {"by": closure.by, "reason": closure.reason, "at": closure.at}
        row.next_due = None  # closed: never observed again
    if session.journal is not None:
        latest = session.journal.latest(rows)
        for key, row in rows.items():
            if row.kind == "command":
                entries = session.journal.entries(anchor=key)
                _history(row, entries[-50:])
                row.revisions = dict(
                    Counter(e.code for e in entries if e.kind == "revise" and e.code in KINDS)
                )
            elif key in latest:
                row.last_state = latest[key].kind
                row.last_observed = latest[key].at
    return sorted(rows.values(), key=lambda row: (row.kind != "command", row.anchor))


def _code_row(rows: dict[str, AnchorRow], canonical: str) -> AnchorRow:
    row = rows[canonical] = AnchorRow(canonical, kind_of(canonical))
    if row.kind != "command":
        row.generated_rules, row.watch = _generated(DEFAULT_WATCH), list(DEFAULT_WATCH)
    return row


def _watched(session: Session, rows: dict[str, AnchorRow]) -> None:
    """Each code anchor's rules as the memories binding it generate them, from their
    `watch:`; a memory that cannot be read now is left out (the default watch stands in
    when none can be)."""
    code = {key: row for key, row in rows.items() if row.kind != "command" and row.memories}
    if not code:
        return
    paths = sorted({path for row in code.values() for path in row.memories})
    watches: dict[str, dict[str, tuple[str, ...]]] = {}
    for path, loaded in load_memories(session.workspace, paths, session.journal).items():
        if loaded.memory is None:
            continue
        for item in loaded.entries:
            key = item.ref.canonical() if item.ref is not None else None
            if key is not None and key in code and path in code[key].memories:
                watches.setdefault(key, {})[path] = effective_watch(loaded.memory, item.entry)
    for key, by_memory in watches.items():
        row = code[key]
        distinct = set(by_memory.values())
        if len(distinct) == 1:
            watch = distinct.pop()
            row.generated_rules, row.watch = _generated(watch), list(watch)
        else:
            row.generated_rules = row.watch = None
            row.generated_rules_by_memory = {
                path: _generated(watch) for path, watch in sorted(by_memory.items())
            }


def _generated(watch: tuple[str, ...]) -> list[dict[str, str]]:
    return [{"when": rule.when, "to": rule.to} for rule in generated(watch)]


def _history(row: AnchorRow, entries: list[Entry]) -> None:
    for entry in reversed(entries):
        if entry.kind == "attempt" and row.last_attempt is None and row.last_observed is None:
            row.last_attempt = {"at": entry.at, "code": entry.code, "detail": entry.detail}
            row.last_state = "unverified"
        elif entry.kind == "transition" and row.last_state is None:
            row.last_state = entry.code
        elif entry.kind == "still" and entry.code == OBSERVED and row.last_observed is None:
            row.last_observed = entry.at
            said = entry.data.get("state") if entry.data else None
            if row.last_state is None:
                row.last_state = str(said) if said else "observed"
