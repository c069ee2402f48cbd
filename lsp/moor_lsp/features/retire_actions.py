"""Forget, supersede and restore as code actions on a memory (issue 11.11).

* `moor.forget [memory, reason]` — remove the memory and record a tombstone on its text.
* `moor.supersede [memory, by, reason]` — retire the memory: `by` says it better.
* `moor.restore [memory, reason]` — the only way back for a retired memory.

They run the engine's latch actions (`moor_engine.memory.latch_actions`, what `moor forget`,
`moor supersede` and `moor restore` run) through `engine.act`, in the engine thread, and
answer `{"done": [...], "refused": [...]}` like the other actions (`code_actions.py`).

Each needs a reason. The code actions carry the command without it (`[memory]`,
`[memory, by]`). A client that says it asks (`initializationOptions`
`{"asksReasons": true}`, which the VS Code client sends) asks the person in its own input
box and appends it. Any other gets the question reaffirm asks, from the same place
(`CodeActions._ask_reason`, memories/lsp-reaffirm-asks-for-its-reason.md): the server asks
with `window/showMessageRequest` — forget and restore with no prepared reason, only "Write
my own reason…" and "Cancel" (a reason to forget a memory, or to bring one back, is the
person's own: it is what `moor log` shows for good); supersede also with one prepared
reason stating the code both memories are about — and "Write my own reason…" inserts
`<!-- moor forget because:  -->` (`supersede by <by>`, `restore`) in the memory's buffer,
whose code action "Forget with the reason written here" (…) runs it and removes the line.
Cancel or a dismissed question changes nothing. So they are offered to a client that asks
itself, or that can take the reason line (`workspace.applyEdit`), and supersede also to
one that says it can be asked (`window.showMessage`): never where the action could only
fail for want of a reason. A reason given but blank is InvalidParams.

Offered on the first line of an open memory (the frontmatter's opening `---`; elsewhere
only a diagnostic's own actions are), whatever its diagnostics
(memories/lsp-retire-actions-take-a-reason.md): restore only on a retired memory (by
`supersede`/`supersedes:`, or forgotten and its file written back), and on the
diagnostic that says it is retired; after a forget, the client closes the memory's buffer
(a `DeleteFile` edit, `MemoryBuffers.close_deleted`) where it takes one, else it is told
not to save it; forget and supersede only on one that is not retired;
supersede once per live memory bound to some of the same code (the "already known
here" rule of the write path: shared anchors, never similarity). None is offered in an
untrusted workspace, nor on a memory whose open buffer has unsaved edits (executed there
they are refused, as follow is): they would judge and remove the file, not the buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from moor_engine.grounding.trust import State
from moor_engine.grounding.verdicts import retire_prompt
from pygls.exceptions import JsonRpcInvalidParams

from moor_lsp.features import Feature
from moor_lsp.questions import Question

if TYPE_CHECKING:
    from moor_lsp.engine import MemoryView, Snapshot
    from moor_lsp.features.code_actions import CodeActions
    from moor_lsp.folder import Folder

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


def retirable(action: str, view: MemoryView) -> bool:
    """Whether `action` (forget, supersede, restore) is offered on the memory of `view`."""
    if action == "restore":
        return view.report.state == State.RETIRED  # superseded, or forgotten and written back
    return view.report.state != State.RETIRED


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
        if wanted.start.line > HEAD_LINE:
            return []
        folder = self.server.folder_for(uri)
        if folder is None or folder.snapshot is None or not self.server.settings.trusted:
            return []
        rel = folder.relative(uri)
        view = folder.snapshot.memories.get(rel) if rel is not None else None
        buffers = self._actions().buffers
        if rel is None or view is None or buffers.unsaved(folder, rel):
            return []
        # Where the person can give a reason: the client's own input box, or the reason
        # line; a prepared reason (supersede's) also where the server can only ask.
        writes = asks_reasons(self.server.initialization_options) or buffers.can_apply
        picks = writes or self.server.capability("window.show_message") is not None
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

        actions = self._actions()
        if actions.reasons_in_menu():
            # No question where the client cannot be asked: prepared reasons are actions,
            # and writing one's own is an edit putting the reason line in the buffer.
            home = (folder, rel)
            if retirable("restore", view):
                restore = f"Restore {rel}: it holds after all…"
                offered.extend(actions.reason_line_action(home, "restore", None, restore))
            elif retirable("forget", view):
                for by in replacements(folder.snapshot, rel):
                    other = folder.snapshot.memories[by]
                    shared = sorted(_anchors(view) & _anchors(other))
                    for reason in retire_prompt("supersede", rel, by, shared).reasons:
                        offer(
                            f"Supersede {rel} by {by}: {reason}",
                            SUPERSEDE,
                            [memory, str(folder.root / by), reason],
                        )
                    own = f"Supersede {rel} by {by} with my own reason…"
                    offered.extend(actions.reason_line_action(home, "supersede", by, own))
                forget = f"Forget {rel}: it never held…"
                offered.extend(actions.reason_line_action(home, "forget", None, forget))
        elif retirable("restore", view) and writes:
            offer(f"Restore {rel}: it holds after all…", RESTORE, [memory])
        elif retirable("forget", view):
            for by in replacements(folder.snapshot, rel) if picks else []:
                offer(f"Supersede {rel} by {by}…", SUPERSEDE, [memory, str(folder.root / by)])
            if writes:
                offer(f"Forget {rel}: it never held…", FORGET, [memory])
        return offered

    async def _question(
        self, action: str, where: tuple[Folder, str], by: str | None
    ) -> Question | None:
        """What to ask for `action`'s reason (None: the memory is not one moor checked)."""
        folder, path = where
        snapshot = await folder.ready()
        view = snapshot.memories.get(path) if snapshot is not None else None
        if snapshot is None or view is None:
            return None
        other = snapshot.memories.get(by) if by is not None else None
        shared = sorted(_anchors(view) & _anchors(other)) if other is not None else []
        prompt = retire_prompt(action, path, by, shared)
        return Question(action, prompt.question, prompt.why, prompt.reasons, by)

    async def _run(self, action: str, memory: object, reason: object, by: object = None) -> object:
        actions = self._actions()
        command = f"moor.{action}"
        actions._writable(command)
        where = actions._memory(memory)
        if reason is not None and (not isinstance(reason, str) or not reason.strip()):
            raise JsonRpcInvalidParams(
                f"{command} needs a reason: a non-empty text as its last argument, or none "
                "to be asked"
            )
        replacing: list[str] = []
        named: str | None = None
        if action == "supersede":
            if not isinstance(by, str) or not by.strip():
                raise JsonRpcInvalidParams(
                    f"{SUPERSEDE} needs the replacing memory: arguments [memory, by, reason]"
                )
            by_folder, by_path = actions._memory(by)
            replacing = [str(by_folder.root / by_path)]
            # The reason line names it as the person reads it: relative to the root.
            named = by_path if by_folder.root == where[0].root else replacing[0]
        refusal = actions._unsaved(action, where)
        if refusal is not None:
            return actions._refuse(action, refusal)
        if reason is None:
            question = await self._question(action, where, named)
            if question is None:
                return actions._refuse(action, f"{where[1]} is not a memory moor has checked")
            return await actions._ask_reason(where, question)
        assert isinstance(reason, str)
        result = await actions._act_with_reason(action, where, [*replacing, reason.strip()])
        if action == "forget" and result["done"]:
            closed = await actions.buffers.close_deleted(*where)
            if closed is None or not closed.ok:
                why = f" ({closed.why})" if closed is not None else ""
                actions._warn(
                    f"{where[1]} is forgotten: close its buffer without saving it{why} "
                    f"(saved, its text is refused; `moor restore {where[1]}` brings it back)"
                )
        return result

    async def forget(self, memory: object = None, reason: object = None) -> object:
        return await self._run("forget", memory, reason)

    async def supersede(
        self, memory: object = None, by: object = None, reason: object = None
    ) -> object:
        return await self._run("supersede", memory, reason, by)

    async def restore(self, memory: object = None, reason: object = None) -> object:
        return await self._run("restore", memory, reason)
