"""`moor.check`: check the whole workspace again now, as `moor check` does.

The editor's *Check workspace* command. Every memory file and every anchor is read and
observed afresh (nothing is taken from the incremental state), the check is journalled,
diagnostics are updated, and the answer summarises the trust states (worst first):
`{"memories": N, "summary": {"current": …, "drifted": …}, "attention": M}` — `attention`
counts the memories a person should look at (not current, ungrounded or retired).
"""

from __future__ import annotations

from collections import Counter

from moor_engine.trust import SEVERITY_ORDER, needs_look

from moor_lsp.features import Feature

CHECK = "moor.check"


class CheckWorkspace(Feature):
    name = "check"

    def register(self) -> None:
        self.command(CHECK, self.check)

    async def check(self, *_args: object) -> object:
        snapshot = await self.server.recompute("asked to check the workspace", None)
        if snapshot is None:  # overtaken by a change that came meanwhile: wait for it
            snapshot = await self.server.settled()
        if snapshot is None:
            return {"memories": 0, "summary": {}, "attention": 0, "problems": []}
        states = Counter(view.report.state for view in snapshot.memories.values())
        return {
            "memories": len(snapshot.memories),
            "summary": {state.value: states[state] for state in SEVERITY_ORDER if states[state]},
            "attention": sum(needs_look(view.report) for view in snapshot.memories.values()),
            "problems": [f"{where}: {message}" for where, message in snapshot.problems],
        }
