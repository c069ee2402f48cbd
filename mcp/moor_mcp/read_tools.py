"""The tools that read memories: search (one question or several), the memories about some
code, the drift report. Each calls the engine function the CLI calls and only renders."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mcp.server.mcpserver import MCPServer
from moor_engine.agents.framing import RESULT_NOTICE
from moor_engine.kept_session import KeptSession
from moor_engine.session import Session

from moor_mcp.annotations import READ_ONLY
from moor_mcp.refusals import engine_refusals, refuse
from moor_mcp.results import (
    AboutMemory,
    AboutResult,
    Anchor,
    DriftReport,
    Explanation,
    Flagged,
    Hit,
    KnownHere,
    Linked,
    SearchManyResult,
    SearchResult,
    Signal,
)
from moor_mcp.shown import shown

if TYPE_CHECKING:
    from moor_engine.grounding.links import Related
    from moor_engine.grounding.memories import LoadedMemory
    from moor_engine.grounding.trust import MemoryReport
    from moor_engine.memory.recall import Hit as Recalled
    from moor_engine.memory.recall_index import KeptIndex

MAX_HITS = 50
MAX_QUERIES = 20


def register(server: MCPServer, root: Path) -> None:
    # The session and the memories' trust states are kept while nothing they rest on moved;
    # the recall index stays open between calls, synced by what its watch saw change.
    answers = KeptSession(root)
    kept = _Kept(answers)

    @server.tool(annotations=READ_ONLY, structured_output=True)
    def memory_search(
        query: str, limit: int = 10, agent: str | None = None, explain: bool = False
    ) -> SearchResult:
        """Search the project's memories; best first, stale ones flagged with why, retired
        ones absent. Call memories_about for the memories bound to a given piece of code,
        memory_search_many to ask several questions at once. With `agent`, that agent's own
        memories are searched too (without it, only the shared ones). With `explain`, each
        hit says why it scored as it did (relevance, trust, confidence, pin, recency)."""
        with engine_refusals(root), answers.session() as session:
            return _search(session, query, limit, agent, kept, explain)

    @server.tool(annotations=READ_ONLY, structured_output=True)
    def memory_search_many(
        queries: list[str], limit: int = 5, agent: str | None = None
    ) -> SearchManyResult:
        """Search the memories for several questions at once: one result per query, in the
        order asked, each as memory_search gives it."""
        if not queries or len(queries) > MAX_QUERIES:
            raise refuse("usage", f"queries: 1 to {MAX_QUERIES} questions, got {len(queries)}")
        with engine_refusals(root), answers.session() as session:
            return SearchManyResult(
                results=[_search(session, q, limit, agent, kept) for q in queries]
            )

    @server.tool(annotations=READ_ONLY, structured_output=True)
    def memories_about(target: str, agent: str | None = None) -> AboutResult:
        """List the memories bound to some code — PATH#SYMBOL, PATH:LINE or PATH — including
        its enclosing and nested definitions, with trust states: ask this before editing
        code, and before memory_write, to see what is already known there. A custom anchor,
        anchor:NAME, lists the memories bound to what its command prints (run only where
        the server's environment trusts the workspace). With `agent`, that agent's own
        memories are listed too (without it, only the shared ones)."""
        from moor_engine.grounding.about import about

        with engine_refusals(root), Session.open(root) as session:
            found = about(session, target, agent)
        return AboutResult(
            target=target,
            memories=[
                AboutMemory(
                    path=item.path,
                    title=item.title,
                    state=item.state.value,
                    relation=item.relation,
                    about=item.ref,
                    why=list(item.why),
                    questions=list(item.questions),
                    since=item.since,
                    links=_linked(item.related),
                    cobound=list(item.related.cobound),
                )
                for item in found.items
            ],
            retired_left_out=found.retired,
        )

    @server.tool(annotations=READ_ONLY, structured_output=True)
    def drift_report(agent: str | None = None) -> DriftReport:
        """Report every memory that needs a look (drifted, gone, moved, …) with each anchor's
        state and why; memories_about tells which memories concern a given file, and
        memory_reaffirm accepts the code as it is now once the memory still holds. With
        `agent`, that agent's own memories are reported too (without it, only the shared
        ones)."""
        from moor_engine.agents.drift_report import drift_report as report_drift

        with engine_refusals(root), Session.open(root) as session:
            found = report_drift(session, agent)
        flagged = [
            Flagged(
                path=memory.path,
                title=memory.title,
                state=memory.state.value,
                anchors=[
                    Anchor(
                        ref=a.ref,
                        state=a.state.value,
                        detail=a.detail,
                        since=found.since.get(a.canonical) if a.canonical else None,
                    )
                    for a in memory.anchors
                ],
            )
            for memory in found.needing_a_look
        ]
        return DriftReport(memories=found.memories, needing_a_look=flagged)


def _linked(related: Related) -> list[Linked]:
    return [
        Linked(relation=link.relation, path=link.path, direction=link.direction, exists=link.exists)
        for link in related.links
    ]


class _Kept:
    """The server's `KeptIndex`, made at the first search (its module is imported then)."""

    def __init__(self, answers: KeptSession) -> None:
        self._index: KeptIndex | None = None
        self._answers = answers
        self._lock = threading.Lock()

    def get(self) -> KeptIndex:
        with self._lock:
            if self._index is None:
                from moor_engine.memory.recall_index import KeptIndex

                self._index = KeptIndex(self._answers)
            return self._index

    def memories(
        self, session: Session, reports: Sequence[MemoryReport]
    ) -> dict[str, LoadedMemory]:
        return self._answers.memories(session, reports)


def _search(
    session: Session,
    query: str,
    limit: int,
    agent: str | None,
    kept: _Kept,
    explain: bool = False,
) -> SearchResult:
    result, _status = kept.get().recall(
        session, query, limit=max(1, min(limit, MAX_HITS)), agent=agent
    )
    from moor_engine.memory.retired_here import retired_beside

    beside = retired_beside(session, [hit.report for hit in result.hits], agent)
    hits = []
    related: dict[str, Related] = {}
    read: dict[str, LoadedMemory] = {}
    if result.hits:
        from moor_engine.grounding.links import hits_relations

        references, declaring = kept.get().references(session)
        read = kept.memories(session, [hit.report for hit in result.hits])
        related = hits_relations(session, read, references, declaring, agent)
    for hit in result.hits:
        memory = shown(session, hit.report, read[hit.path].memory if hit.path in read else None)
        hits.append(
            Hit(
                path=hit.path,
                title=hit.title,
                state=hit.state.value,
                flagged=hit.flagged,
                why=list(hit.why),
                about=list(hit.refs),
                questions=list(hit.questions),
                content_hash=memory.content_hash,
                sections=memory.sections,
                text=memory.text,
                notice=RESULT_NOTICE,
                explain=_explained(hit) if explain else None,
                links=_linked(related[hit.path]),
                cobound=list(related[hit.path].cobound),
                retired_here=[
                    KnownHere(
                        path=k.path,
                        title=k.title,
                        state=k.state,
                        anchors=list(k.anchors),
                        retired_because=k.retired_because,
                    )
                    for k in beside[hit.path]
                ],
            )
        )
    return SearchResult(query=query, hits=hits)


def _explained(hit: Recalled) -> Explanation:
    return Explanation(
        score=hit.score,
        matched=list(hit.matched),
        signals=[
            Signal(signal=s.name, factor=s.factor, contribution=s.contribution, why=s.why)
            for s in hit.signals
        ],
    )
