"""`moor.check`: check the whole workspace again now, as `moor check` does.

The editor's *Check workspace* command. Every memory file and every anchor is read and
observed afresh (nothing is taken from the incremental state), the check is journalled,
diagnostics are updated, and the answer summarises the trust states (worst first):
`{"memories": N, "summary": {"current": …, "drifted": …}, "attention": M}` — `attention`
counts the memories a person should look at (not current, ungrounded or retired). Every
root is checked and counted together; with several roots each problem names its root.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import TYPE_CHECKING

from moor_engine.grounding.trust import SEVERITY_ORDER, State, needs_look

from moor_lsp.features import Feature

if TYPE_CHECKING:
    from moor_lsp.engine import Snapshot
    from moor_lsp.folder import Folder

CHECK = "moor.check"


class CheckWorkspace(Feature):
    name = "check"

    def register(self) -> None:
        self.command(CHECK, self.check)

    async def check(self, *_args: object) -> object:
        folders = list(self.server.folders.values())
        snapshots = await asyncio.gather(*(self._check(folder) for folder in folders))
        states: Counter[State] = Counter()
        problems: list[str] = []
        attention = 0
        for folder, snapshot in zip(folders, snapshots, strict=True):
            if snapshot is None:
                continue
            states.update(view.report.state for view in snapshot.memories.values())
            attention += sum(needs_look(view.report) for view in snapshot.memories.values())
            where = f"{folder.root}: " if len(folders) > 1 else ""
            problems.extend(f"{where}{file}: {message}" for file, message in snapshot.problems)
        return {
            "memories": sum(states.values()),
            "summary": {state.value: states[state] for state in SEVERITY_ORDER if states[state]},
            "attention": attention,
            "problems": problems,
        }

    @staticmethod
    async def _check(folder: Folder) -> Snapshot | None:
        snapshot = await folder.recompute("asked to check the workspace", None)
        if snapshot is None:  # overtaken by a change that came meanwhile: wait for it
            snapshot = await folder.settled()
        return snapshot
