"""The tools that read the journal: what changed since a cursor (`moor_engine.memory.changes`) and
one memory's history (`moor_engine.memory.history.memory_log`, as `moor log`)."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer
from moor_engine.memory.changes import DEFAULT_LIMIT
from moor_engine.session import Session

from moor_mcp.annotations import READ_ONLY
from moor_mcp.refusals import engine_refusals
from moor_mcp.results import ChangesResult, HistoryResult


def register(server: MCPServer, root: Path) -> None:
    @server.tool(annotations=READ_ONLY, structured_output=True)
    def changes_since(
        cursor: int = 0, limit: int = DEFAULT_LIMIT, agent: str | None = None
    ) -> ChangesResult:
        """Return what the journal recorded after `cursor` (0: from the start), oldest
        first: code that moved or drifted, memories written, edited, reaffirmed, retired,
        forgotten, restored — each with the memories it concerns. Pass next_cursor back to
        get what follows; memory_history gives one memory's whole journal. With `agent`,
        that agent's own memories' entries are included (without it, only the shared
        ones')."""
        from moor_engine.memory.changes import changes_since as since

        with engine_refusals(root), Session.open(root) as session:
            found = since(session, cursor, limit, agent)
        return ChangesResult.model_validate(found)

    @server.tool(annotations=READ_ONLY, structured_output=True)
    def memory_history(path: str, agent: str | None = None) -> HistoryResult:
        """Return one memory's journal, oldest first: what was observed of each anchor it
        is bound to and what was done to it (written, edited, reaffirmed, retired,
        forgotten, restored) with the reasons given — also for a forgotten memory;
        changes_since reads every memory's.
        Another agent's memory is not found; with `agent`, that agent's own are."""
        from moor_engine.memory.history import reader_log

        with engine_refusals(root), Session.open(root) as session:
            rel, entries = reader_log(session, path, agent)
        return HistoryResult.model_validate({"path": rel, "entries": entries})
