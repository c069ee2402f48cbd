"""The `anchors` tool: every anchor the workspace knows, as `moor anchors` lists it. It
runs nothing (a declared command runs only in a check of a trusted workspace)."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer
from moor_engine.session import Session

from moor_mcp.annotations import READ_ONLY
from moor_mcp.refusals import engine_refusals, refuse
from moor_mcp.results import AnchorRow, AnchorsResult

KINDS = ("command", "symbol", "section", "file")


def register(server: MCPServer, root: Path) -> None:
    @server.tool(annotations=READ_ONLY, structured_output=True)
    def anchors(kind: str | None = None) -> AnchorsResult:
        """List every anchor: the commands declared in moor.toml (custom anchors, with
        whether their observations are reproducible and their streak) and the code moor.lock
        binds, each with its kind, the memories bound to it and this clone's last look.
        `kind` keeps one kind: command, symbol, section or file."""
        from moor_engine.anchors.listing import list_anchors

        if kind is not None and kind not in KINDS:
            raise refuse("usage", f"kind: one of {', '.join(KINDS)}, got {kind!r}")
        with engine_refusals(root), Session.open(root) as session:
            rows = list_anchors(session)
        return AnchorsResult(
            anchors=[
                AnchorRow.model_validate(row) for row in rows if kind is None or row.kind == kind
            ]
        )
