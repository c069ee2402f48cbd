"""Workspace symbols: the memories, by title (or path), found by the words of a query.

Every word of the query must appear in the memory's title or path (case-insensitive); an
empty query lists every memory of every root. Each memory's container is its trust state; a retired
memory is tagged deprecated when the client understands tags.
"""

from __future__ import annotations

from lsprotocol import types
from moor_engine.grounding.trust import State

from moor_lsp.features import Feature


class WorkspaceSymbols(Feature):
    name = "symbols"

    def register(self) -> None:
        self.handle(types.WORKSPACE_SYMBOL, self.workspace_symbol, None)

    async def workspace_symbol(
        self, params: types.WorkspaceSymbolParams
    ) -> list[types.SymbolInformation] | None:
        folders = await self.server.ready_all()
        words = params.query.lower().split()
        tags = self.server.capability("workspace.symbol.tag_support")
        start = types.Position(line=0, character=0)
        top = types.Range(start=start, end=start)
        found: list[types.SymbolInformation] = []
        for folder in sorted(folders, key=lambda f: f.root):
            snapshot = folder.snapshot
            if snapshot is None:
                continue
            for path in sorted(snapshot.memories):
                memory = snapshot.memories[path]
                uri = folder.uri(path)
                title = memory.report.title or path
                haystack = f"{title}\n{path}".lower()
                if not folder.owns(uri) or not all(word in haystack for word in words):
                    continue
                retired = memory.report.state == State.RETIRED
                found.append(
                    types.SymbolInformation(
                        name=title,
                        kind=types.SymbolKind.File,
                        location=types.Location(uri=uri, range=top),
                        container_name=f"{path} · {memory.report.state.value}",
                        tags=[types.SymbolTag.Deprecated] if retired and tags else None,
                    )
                )
        return found
