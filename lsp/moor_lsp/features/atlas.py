"""`moor.atlas`: the atlas's data (`moor_engine.grounding.atlas`, what `moor atlas` renders)
for the editor's *moor: Show atlas* view, from the live check's latest evaluation.

Its one optional argument is a URI in the root wanted (a file or the folder); without it,
the first root. The answer is the atlas JSON (`"version": 1`), or null when no evaluation
has finished. The view asks again whenever moor's diagnostics change, so it follows the
states as the language server sees them.
"""

from __future__ import annotations

from moor_lsp import engine
from moor_lsp.features import Feature

ATLAS = "moor.atlas"


class AtlasView(Feature):
    name = "atlas"

    def register(self) -> None:
        self.command(ATLAS, self.atlas)

    async def atlas(self, uri: object = None) -> object:
        folders = list(self.server.folders.values())
        folder = (
            self.server.folder_for(uri)
            if isinstance(uri, str)
            else (folders[0] if folders else None)
        )
        if folder is None:
            return None
        if await folder.ready() is None or folder.evaluator is None:
            return None
        return await self.server.in_engine(engine.atlas_data, folder.evaluator)
