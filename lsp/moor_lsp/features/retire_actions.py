"""Forget, supersede and restore as code actions on a memory (issue 11.11).

* `moor.forget [memory, reason]` — remove the memory and record a tombstone on its text.
* `moor.supersede [memory, by, reason]` — retire the memory: `by` says it better.
* `moor.restore [memory, reason]` — the only way back for a retired memory.

They run the engine's latch actions (`moor_engine.latch_actions`, what `moor forget`,
`moor supersede` and `moor restore` run) through `engine.act`, in the engine thread, and
answer `{"done": [...], "refused": [...]}` like the other actions (`code_actions.py`).

Each needs a reason. The code actions carry the command without it (`[memory]`,
`[memory, by]`): a client asks the person and appends it (VS Code's input box, as for
reaffirm); a command run without one answers InvalidParams naming the missing reason. So
they are offered only to a client that says it asks (`initializationOptions`
`{"asksReasons": true}`, which the VS Code client sends): in any other client an offered
action would only fail. There, `moor forget|supersede|restore` or the command with its
reason (`workspace/executeCommand`) does it.

Offered on the first line of an open memory (the frontmatter's opening `---`; elsewhere
only a diagnostic's own actions are), whatever its diagnostics
(memories/lsp-retire-actions-take-a-reason.md): restore only on a memory retired by
`supersede`/`supersedes:`; forget and supersede only on one that is not retired;
supersede once per live memory bound to some of the same code (the "already known
here" rule of the write path: shared anchors, never similarity). None is offered in an
untrusted workspace, nor on a memory whose open buffer has unsaved edits (executed there
they are refused, as follow is): they would judge and remove the file, not the buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from moor_engine.trust import State
from pygls.exceptions import JsonRpcInvalidParams

from moor_lsp.features import Feature

if TYPE_CHECKING:
    from moor_lsp.engine import MemoryView, Snapshot
    from moor_lsp.features.code_actions import CodeActions

FORGET = "moor.forget"
SUPERSEDE = "moor.supersede"
RESTORE = "moor.restore"
RETIRING = frozenset({FORGET, SUPERSEDE, RESTORE})
# Where they are offered: the memory's first line (its frontmatter's `---`), so that
# everywhere else only a diagnostic's own actions are (tests/lsp/test_actions.py).
HEAD_LINE = 0


def asks_reasons(options: object) -> bool:
    """Whether the client said it asks the person for a command's reason."""
    return isinstance(options, dict) and options.get("asksReasons") is True


def _anchors(view: MemoryView) -> set[str]:
    return {a.canonical for a in view.report.anchors if a.canonical}


def _superseded(view: MemoryView) -> bool:
    return view.report.state == State.RETIRED and view.report.code != "tombstoned"


def replacements(snapshot: Snapshot, path: str) -> list[str]:
    """The live memories bound to some of the code `path` is about, by path."""
    view = snapshot.memories.get(path)
    if view is None:
        return []
    mine = _anchors(view)
    return sorted(
        other.path
        for other in snapshot.memories.values()
        if other.path != path and other.report.state != State.RETIRED and mine & _anchors(other)
    )


class RetireActions(Feature):
    name = "retire_actions"

    def register(self) -> None:
        self.command(FORGET, self.forget)
        self.command(SUPERSEDE, self.supersede)
        self.command(RESTORE, self.restore)

    def _actions(self) -> CodeActions:
        from moor_lsp.features.code_actions import CodeActions

        for feature in self.server.features:
            if isinstance(feature, CodeActions):
                return feature
        raise RuntimeError("the code actions feature is not running")

    def offers(self, uri: str, wanted: types.Range) -> list[types.CodeAction]:
        """The latch actions for the memory open at `uri` when `wanted` touches its first
        line (none when it is not a memory)."""
        if wanted.start.line > HEAD_LINE or not asks_reasons(self.server.initialization_options):
            return []
        folder = self.server.folder_for(uri)
        if folder is None or folder.snapshot is None or not self.server.settings.trusted:
            return []
        rel = folder.relative(uri)
        view = folder.snapshot.memories.get(rel) if rel is not None else None
        if rel is None or view is None or self._actions().buffers.unsaved(folder, rel):
            return []
        memory = str(folder.root / rel)
        offered: list[types.CodeAction] = []

        def offer(title: str, command: str, arguments: list[Any]) -> None:
            offered.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    command=types.Command(title=title, command=command, arguments=arguments),
                )
            )

        if _superseded(view):
            offer(f"Restore {rel}: it holds after all…", RESTORE, [memory])
        elif view.report.state != State.RETIRED:
            for by in replacements(folder.snapshot, rel):
                offer(f"Supersede {rel} by {by}…", SUPERSEDE, [memory, str(folder.root / by)])
            offer(f"Forget {rel}: it never held…", FORGET, [memory])
        return offered

    @staticmethod
    def _reason(command: str, reason: object, shape: str) -> str:
        if not isinstance(reason, str) or not reason.strip():
            raise JsonRpcInvalidParams(f"{command} needs a reason: arguments {shape}")
        return reason.strip()

    async def _run(self, action: str, memory: object, args: list[str]) -> object:
        actions = self._actions()
        actions._writable(f"moor.{action}")
        where = actions._memory(memory)
        refusal = actions._unsaved(action, where)
        if refusal is not None:
            return actions._refuse(action, refusal)
        return await actions._act(action, where, args)

    async def forget(self, memory: object = None, reason: object = None) -> object:
        why = self._reason(FORGET, reason, "[memory, reason] (why it never held)")
        return await self._run("forget", memory, [why])

    async def supersede(
        self, memory: object = None, by: object = None, reason: object = None
    ) -> object:
        if not isinstance(by, str) or not by.strip():
            raise JsonRpcInvalidParams(
                f"{SUPERSEDE} needs the replacing memory: arguments [memory, by, reason]"
            )
        why = self._reason(SUPERSEDE, reason, "[memory, by, reason] (why by says it better)")
        by_folder, by_path = self._actions()._memory(by)
        return await self._run("supersede", memory, [str(by_folder.root / by_path), why])

    async def restore(self, memory: object = None, reason: object = None) -> object:
        why = self._reason(RESTORE, reason, "[memory, reason] (why it holds after all)")
        return await self._run("restore", memory, [why])
