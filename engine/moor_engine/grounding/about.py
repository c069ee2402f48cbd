"""About this code: the memories bound to a symbol, to what encloses it, to what it holds,
or to a whole file — with their trust states and questions. The question an agent (or a
person) should ask before editing code.

Nesting is decided by the definitions' spans in the file as it is now (the same parse a
check uses), not by splitting names, so it holds in every language moor reads: a memory
about `Client` encloses `Client.send`, one about `Client.send.inner` is nested in it, and one
about the whole file encloses everything in it. A memory whose code is not found now is
matched only by its exact reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from moor_extractors.model import DefinitionSite, Failure
from moor_extractors.reference import ANCHOR_PREFIX, Reference, parse_reference
from moor_extractors.resolve import reference_symbol

from moor_engine.agents.since import since
from moor_engine.grounding.links import Related, retired_among, visible_relations
from moor_engine.grounding.memories import LoadedMemory, load_memories
from moor_engine.grounding.observe import Found, NotFound
from moor_engine.grounding.suggest import suggestions
from moor_engine.grounding.trust import QUIET_STATES, AnchorReport, MemoryReport, State
from moor_engine.memory import namespaces
from moor_engine.memory.recall import state_reasons
from moor_engine.session import Session
from moor_engine.usage import UsageError

# Closest first: how a listed memory's code stands to the code asked about.
RELATIONS = ("exact", "enclosing", "nested", "file", "in file")
_LINE = re.compile(r"(.+):([0-9]+)")


@dataclass(frozen=True)
class Target:
    path: str
    symbol: str | None  # the definition asked about (or found at the line)
    line: int | None  # the line asked about
    start_line: int = 0  # the definition's lines (0: the whole file)
    end_line: int = 0
    note: str | None = None  # e.g. the symbol does not exist now
    missing: bool = False  # the symbol asked about is not in the file now

    def describe(self) -> str:
        if self.symbol is None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
            return where + ("" if self.line is None else " (the file: no definition there)")
        shown = f"{self.path}#{self.symbol}"
        if self.start_line:
            shown += f" (lines {self.start_line}-{self.end_line})"
        return shown

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "symbol": self.symbol,
            "line": self.line,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "note": self.note,
        }


@dataclass(frozen=True)
class AboutItem:
    path: str
    title: str
    state: State  # the memory's trust state (the engine's verdict)
    relation: str  # one of RELATIONS
    ref: str  # the reference that ties it here
    anchor_state: State
    detail: str | None
    why: tuple[str, ...]
    questions: tuple[str, ...]
    agent: str | None = None  # its namespace (None: shared)
    since: str | None = None  # the journal's time the anchor has been as it is now since
    # Its links both ways and its cobound memories (one hop).
    related: Related = field(default_factory=Related)

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "agent": self.agent,
            "title": self.title,
            "state": self.state.value,
            "relation": self.relation,
            "about": self.ref,
            "anchor_state": self.anchor_state.value,
            "detail": self.detail,
            "why": list(self.why),
            "questions": list(self.questions),
            "since": self.since,
            **self.related.as_json(),
        }


@dataclass
class AboutResult:
    target: Target
    items: list[AboutItem] = field(default_factory=list)
    retired: int = 0  # retired memories left out

    @property
    def needs_attention(self) -> bool:
        return any(item.state not in QUIET_STATES for item in self.items)

    def as_json(self) -> dict[str, object]:
        return {
            "target": self.target.as_json(),
            "memories": [item.as_json() for item in self.items],
            "retired_left_out": self.retired,
        }


def about(
    session: Session, arg: str, agent: str | None = None, *, everyone: bool = False
) -> AboutResult:
    """Memories about `arg`: `PATH#SYMBOL`, `PATH:LINE` or `PATH`, as reader `agent` sees
    them (`namespaces`). `everyone`: a person's whole view (the editor, like `moor check`),
    every agent's memories too, each item naming its owner."""
    agent = namespaces.reader(agent)
    if arg.startswith(ANCHOR_PREFIX):
        return _about_anchor(session, arg, agent, everyone)
    path_arg, symbol, line = _split(session, arg)
    rel = session.relative_arg(path_arg)
    if not (session.workspace.root / rel).is_file():
        raise UsageError(
            f"{rel}: no such file in {session.workspace.root}", code="not_found", path=rel
        )
    target, span = _target(session, rel, symbol, line)
    every = session.workspace.memory_paths()
    loaded = load_memories(session.workspace, every, session.journal)
    candidates = [
        path
        for path, memory in loaded.items()
        if memory.memory is not None
        and (everyone or namespaces.visible(memory.memory.agent, agent))
        and any(
            item.ref is not None and _may_be_here(session, rel, item.ref, span)
            for item in memory.entries
        )
    ]
    # With the memories that declare `supersedes:`, so the verdict sees every retirement.
    declaring = [p for p, m in loaded.items() if m.memory is not None and m.memory.supersedes]
    report = session.check(list(dict.fromkeys([*candidates, *declaring])), record=False)
    wanted = set(candidates)
    evaluation = session.last_evaluation
    observations = evaluation.observations if evaluation is not None else {}
    result = AboutResult(target)
    dates = since(session.journal, (m for m in report.memories if m.path in wanted))
    relations = visible_relations(loaded, agent, everyone=everyone)
    retired = retired_among(report.memories)
    for memory_report in report.memories:
        if memory_report.path not in wanted:
            continue
        best: tuple[int, AnchorReport] | None = None
        for anchor in memory_report.anchors:
            relation = _relation(target, span, anchor, observations.get(anchor.canonical or ""))
            if relation is not None and (best is None or RELATIONS.index(relation) < best[0]):
                best = (RELATIONS.index(relation), anchor)
        if best is None:
            continue
        if memory_report.state == State.RETIRED:
            result.retired += 1
            continue
        anchor = best[1]
        dated = dates.get(anchor.canonical) if anchor.canonical is not None else None
        item = _item(memory_report, RELATIONS[best[0]], anchor, loaded, dated)
        result.items.append(replace(item, related=relations.of(item.path).without(retired)))
    result.items.sort(key=lambda item: (RELATIONS.index(item.relation), item.path))
    if target.missing and not any(item.relation == "exact" for item in result.items):
        raise _not_found(session, target)
    return result


def _about_anchor(session: Session, arg: str, agent: str | None, everyone: bool) -> AboutResult:
    """Memories bound to a custom anchor (`anchor:NAME`): those naming it in `about:`, all
    `exact`. Checking them observes its command — only where the workspace is trusted."""
    ref = parse_reference(arg)
    if isinstance(ref, Failure) or ref.anchor is None:
        detail = ref.detail if isinstance(ref, Failure) else "not an anchor:NAME reference"
        raise UsageError(f"{arg}: {detail}", code="bad_reference")
    canonical = ref.canonical()
    loaded = load_memories(session.workspace, session.workspace.memory_paths(), session.journal)
    candidates = [
        path
        for path, memory in loaded.items()
        if memory.memory is not None
        and (everyone or namespaces.visible(memory.memory.agent, agent))
        and any(
            item.ref is not None and item.ref.canonical() == canonical for item in memory.entries
        )
    ]
    bound = any(canonical in memory.anchors for memory in session.lock.memories.values())
    if ref.anchor not in session.workspace.config.anchors and not bound and not candidates:
        declared = ", ".join(sorted(session.workspace.config.anchors)) or "none"
        raise UsageError(
            f"{canonical} is neither declared in moor.toml ([anchors.{ref.anchor}]) nor "
            f"bound by any memory; declared: {declared}",
            code="not_found",
        )
    declaring = [p for p, m in loaded.items() if m.memory is not None and m.memory.supersedes]
    report = session.check(list(dict.fromkeys([*candidates, *declaring])), record=False)
    wanted = set(candidates)
    result = AboutResult(Target(canonical, None, None))
    dates = since(session.journal, (m for m in report.memories if m.path in wanted))
    relations = visible_relations(loaded, agent, everyone=everyone)
    retired = {m.path for m in report.memories if m.state == State.RETIRED}
    for memory_report in report.memories:
        anchor = next((a for a in memory_report.anchors if a.canonical == canonical), None)
        if memory_report.path not in wanted or anchor is None:
            continue
        if memory_report.state == State.RETIRED:
            result.retired += 1
            continue
        item = _item(memory_report, "exact", anchor, loaded, dates.get(canonical))
        result.items.append(replace(item, related=relations.of(item.path).without(retired)))
    result.items.sort(key=lambda item: item.path)
    return result


def _may_be_here(session: Session, rel: str, ref: Reference, span: _Span | None) -> bool:
    """Whether a memory referring to `ref` may be about the target in `rel`: it names that
    file, or (a definition asked about) code that is not where it names now — a file that
    is not there, or a definition no longer in its file — which the relocation may have
    found here (a rename, a move to another file). The check then asks the relocation
    (`_relation`: `moved_to`). Asked about a definition, each definition a memory names in
    another file is observed (parse-cached, and in the session's observer, which the check
    of the candidates then reuses)."""
    if ref.path == rel:
        return True
    if span is None or ref.path is None:
        return False
    if not (session.workspace.root / ref.path).is_file():
        return True
    return ref.symbol is not None and isinstance(session.observer.observe(ref), NotFound)


def _not_found(session: Session, target: Target) -> UsageError:
    """A symbol that is not in its file now and that no memory names: refused, with the
    closest definitions that are (did you mean)."""
    ref = parse_reference(f"{target.path}#{target.symbol}")
    close = (
        suggestions(session.workspace, session.observer, ref)
        if not isinstance(ref, Failure)
        else []
    )
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return UsageError(
        f"{target.path}#{target.symbol}: no such definition in {target.path} now, and no "
        f"memory names it{hint}",
        code="not_found",
        path=target.path,
        suggestions=tuple(close),
    )


def _split(session: Session, arg: str) -> tuple[str, str | None, int | None]:
    if "#" in arg:
        path, _hash, symbol = arg.partition("#")
        if not symbol:
            raise UsageError(f"{arg}: name a symbol after '#', or leave '#' out for the file")
        return path, symbol, None
    line = _LINE.fullmatch(arg)
    if line is not None and not (session.start / arg).exists():
        number = int(line.group(2))
        if number < 1:
            raise UsageError(f"{arg}: lines are counted from 1")
        return line.group(1), None, number
    return arg, None, None


_Span = tuple[int, int]


def _target(
    session: Session, rel: str, symbol: str | None, line: int | None
) -> tuple[Target, _Span | None]:
    if symbol is not None:
        ref = parse_reference(f"{rel}#{symbol}")
        if isinstance(ref, Failure):
            raise UsageError(f"{rel}#{symbol}: {ref.detail}", code=ref.code, path=rel)
        assert ref.symbol is not None
        observation = session.observer.observe(ref)
        if isinstance(observation, Found) and observation.site is not None:
            site = observation.site
            target = Target(rel, ref.symbol, None, site.line, site.end_line)
            return target, (site.start_byte, site.end_byte)
        note = (
            f"{ref.symbol} is not in {rel} now: only memories naming it exactly are listed"
            if isinstance(observation, NotFound)
            else f"{ref.symbol} could not be observed ({observation.detail}): only memories "
            "naming it exactly are listed"
            if isinstance(observation, Failure)
            else None
        )
        missing = isinstance(observation, NotFound)
        return Target(rel, ref.symbol, None, note=note, missing=missing), None
    if line is None:
        return Target(rel, None, None), None
    view = session.observer.view(rel)
    if isinstance(view, Failure):
        raise UsageError(f"{rel}: {view.detail}", code=view.code, path=rel)
    if view is None:
        raise UsageError(f"{rel}: no such file", code="not_found", path=rel)
    lines = view.source().count(b"\n") + (0 if view.source().endswith(b"\n") else 1)
    if line > max(lines, 1):
        raise UsageError(f"{rel}:{line}: the file has {lines} lines", path=rel, line=line)
    inner = _innermost(view.sites() if view.language is not None else (), line)
    if inner is None:
        return Target(rel, None, line), None
    name = reference_symbol(rel, inner.qname) or inner.qname
    target = Target(rel, name, line, inner.line, inner.end_line)
    return target, (inner.start_byte, inner.end_byte)


def _innermost(sites: tuple[DefinitionSite, ...], line: int) -> DefinitionSite | None:
    holding = [s for s in sites if s.line <= line <= s.end_line]
    if not holding:
        return None
    return min(holding, key=lambda s: (s.end_byte - s.start_byte, s.start_byte))


def _relation(
    target: Target, span: _Span | None, anchor: AnchorReport, observation: object
) -> str | None:
    if anchor.canonical is None:
        return None
    if anchor.moved_to is not None and target.symbol is not None:
        # Moved (renamed) to the code asked about: the relocation knows it is this.
        moved = parse_reference(anchor.moved_to)
        if not isinstance(moved, Failure) and (moved.path, moved.symbol) == (
            target.path,
            target.symbol,
        ):
            return "exact"
    ref = parse_reference(anchor.canonical)
    if isinstance(ref, Failure) or ref.path != target.path:
        return None
    if target.symbol is None:
        return "file" if ref.symbol is None else "in file"
    if ref.symbol is None:
        return "file"
    if span is not None and isinstance(observation, Found) and observation.site is not None:
        start, end = observation.site.start_byte, observation.site.end_byte
        if (start, end) == span:
            return "exact"
        if start <= span[0] and span[1] <= end:
            return "enclosing"
        if span[0] <= start and end <= span[1]:
            return "nested"
        return None
    return "exact" if ref.symbol == target.symbol else None


def _item(
    report: MemoryReport,
    relation: str,
    anchor: AnchorReport,
    loaded: dict[str, LoadedMemory],
    dated: str | None,
) -> AboutItem:
    memory = loaded[report.path].memory if report.path in loaded else None
    questions = tuple(memory.questions) if memory is not None else ()
    return AboutItem(
        report.path,
        report.title,
        report.state,
        relation,
        anchor.ref,
        anchor.state,
        anchor.detail,
        state_reasons(report) if report.state not in QUIET_STATES else (),
        questions,
        memory.agent if memory is not None else None,
        dated,
    )
