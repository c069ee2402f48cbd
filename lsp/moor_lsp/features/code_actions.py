"""Quick fixes on moor diagnostics, and the commands they run.

* `moor.reaffirm [memory, reason]` — accept the code as it is now, with a reason. The
  code action carries only `[memory]`: a client may ask the person why and append it (VS
  Code's input box); otherwise the server asks with `window/showMessageRequest`: two
  reasons the engine prepares from what changed (`verdicts.reaffirm_prompt`), "Write my
  own reason…" and "Cancel" (memories/lsp-reaffirm-asks-for-its-reason.md). Writing one's
  own inserts a reason line in the open memory (`buffer_text.py`); the code action
  "Reaffirm with the reason written here" then runs `[memory, reason]` and removes the
  line. A dismissed question or Cancel answers `{"done": [], "refused": [], "cancelled":
  true}` and changes nothing. Forget, supersede and restore (`retire_actions.py`) ask
  through the same `_ask_reason` and `_write_own`, with their own `Question`
  (`questions.py`); their reason line names the action, and its action runs that one.
  A client that cannot be asked (no `window.showMessage`: eglot, whose question would die
  at its request timeout) is never asked: each prepared reason is an action of its own
  (`Reaffirm: <reason>`), and "Reaffirm with my own reason…" is an edit the client applies,
  putting the reason line in the buffer (`reasons_in_menu`).
* `moor.follow [memory]` — rewrite moved/renamed references in the memory, re-bind them
  (moor writes the file, not the open buffer, which the editor reloads as saved);
  `moor.follow [memory, to, from]` re-points the reference `from` (as written) to `to`, a
  candidate the engine found for code that is gone (offered for each, best first).
* `moor.bind [memory]` — record the current address of the memory's unbound anchors.
* `moor.showCode [uri, range]` — `window/showDocument` on the code a reference names.
* `moor.showDiff [memory, ref]` — the unified diff of the code of the reference (as
  written in `about:`; every anchor of the memory without one) between bound and now.
  It is saved as `.moor/diffs/<memory path, / as __>.diff`, shown with
  `window/showDocument` when the client can, and answered as
  `{"diff": text, "uri": file URI}`. Offered on drifted and moved references that were
  bound.

Nothing that writes (reaffirm, follow, bind) is offered on a memory whose open buffer has
unsaved changes, and executed there it is refused (a result with `refused`, a warning):
it would judge and write the file, not what the editor shows.

In an untrusted workspace (setting `trusted: false`) the server is read-only: the actions
that write (reaffirm, follow, bind) are not offered and their commands answer an error;
`moor.showDiff` saves no file there and answers `{"diff": text, "uri": null}` (the
client shows the text itself).

`memory` is an absolute path or a `file:` URI (its root is the innermost one holding it),
or a path relative to a root (the only one, or the one where that file exists); code
actions carry the absolute path. Each action runs
in the engine thread, journals what it did like the CLI, re-checks the workspace (so the
diagnostics are up to date when the command answers) and returns
`{"done": [...], "refused": [...], "warnings": [...]}`; a refusal is also shown as a
warning, and so is each of `warnings` (what the CLI prints after the same action on stderr,
such as a journal that was not opened, so nothing was recorded).

Actions are built from `Diagnostic.data` of the diagnostics in the request's context on a
line the requested range touches (`on_its_lines`: anywhere on the reference's line, where
Neovim's cursor and sign are); when a client sends no data, the server's own current
diagnostics are used.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from moor_engine.grounding.verdicts import reaffirm_prompt, reaffirm_verdict
from moor_extractors.reference import ANCHOR_PREFIX
from pygls.exceptions import (
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
)

from moor_lsp import diffs, engine
from moor_lsp.buffer_text import (
    REASONED,
    find_reason,
    line_edit,
    reason_head,
    reason_template,
    with_reason_line,
    without_line,
)
from moor_lsp.features import Feature
from moor_lsp.features.diagnostics import SOURCE, Diagnostics
from moor_lsp.features.retire_actions import RESTORE, RetireActions, asks_reasons, retirable
from moor_lsp.memory_buffers import MemoryBuffers
from moor_lsp.positions import code_units, from_client_character
from moor_lsp.questions import CANCEL, WRITE_OWN, Question, written_title

if TYPE_CHECKING:
    from moor_lsp.engine import MemoryView
    from moor_lsp.folder import Folder
    from moor_lsp.server import MoorLanguageServer

logger = logging.getLogger("moor_lsp")

REAFFIRM = "moor.reaffirm"
FOLLOW = "moor.follow"
BIND = "moor.bind"
SHOW_CODE = "moor.showCode"
SHOW_DIFF = "moor.showDiff"
REOBSERVE = "moor.reobserve"
REAFFIRM_STATES = frozenset({"drifted", "rewritten"})
DIFF_STATES = frozenset({"drifted", "moved"})
WRITING = frozenset({REAFFIRM, FOLLOW, BIND})
WRITTEN = written_title("reaffirm")


def on_its_lines(diagnostic: types.Range, wanted: types.Range) -> bool:
    """Whether a request for `wanted` is where the person meets the diagnostic: anywhere on
    the lines it spans, not only on its characters — Neovim asks at the cursor, which is
    often at the start of the `about:` line where the sign is, before the reference."""
    return diagnostic.start.line <= wanted.end.line and wanted.start.line <= diagnostic.end.line


def range_from_json(value: object) -> types.Range | None:
    try:
        assert isinstance(value, dict)
        start, end = value["start"], value["end"]
        return types.Range(
            start=types.Position(line=int(start["line"]), character=int(start["character"])),
            end=types.Position(line=int(end["line"]), character=int(end["character"])),
        )
    except (AssertionError, KeyError, TypeError, ValueError):
        return None


def argument(folder: Folder, rel: str) -> str:
    """A command's memory argument: its absolute path, which names its root too."""
    return str(folder.root / rel)


class CodeActions(Feature):
    name = "code_actions"

    def __init__(self, server: MoorLanguageServer) -> None:
        super().__init__(server)
        self.buffers = MemoryBuffers(self.server)

    def register(self) -> None:
        self.handle(
            types.TEXT_DOCUMENT_CODE_ACTION,
            self.code_action,
            None,
            types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
        )
        self.command(REAFFIRM, self.reaffirm)
        self.command(FOLLOW, self.follow)
        self.command(BIND, self.bind)
        self.command(SHOW_CODE, self.show_code)
        self.command(SHOW_DIFF, self.show_diff)
        self.command(REOBSERVE, self.reobserve)

    # --- offering ----------------------------------------------------------------------

    async def code_action(
        self, params: types.CodeActionParams
    ) -> list[types.CodeAction | types.Command] | None:
        wanted = params.context.only
        if wanted and not any(
            kind == types.CodeActionKind.QuickFix or types.CodeActionKind.QuickFix.startswith(kind)
            for kind in wanted
        ):
            return None
        folder = self.server.folder_for(params.text_document.uri)
        if folder is not None:
            await folder.ready()
        diagnostics = [
            d
            for d in params.context.diagnostics
            if d.source == SOURCE
            and isinstance(d.data, dict)
            and on_its_lines(d.range, params.range)
        ]
        if not diagnostics:
            diagnostics = self._own_diagnostics(params.text_document.uri, params.range)
        actions: list[types.CodeAction] = []
        seen: set[tuple[str, str]] = set()
        written = self._written_reason(params.text_document.uri)
        if written is not None:
            actions.append(written)
        for diagnostic in diagnostics:
            for action in self.actions_for(diagnostic):
                key = (action.title, repr(action.command))
                if key not in seen:
                    seen.add(key)
                    actions.append(action)
        actions.extend(self._retiring(params.text_document.uri, params.range))
        if not actions:
            return None
        if self.server.capability("text_document.code_action.code_action_literal_support"):
            return list(actions)
        return [a.command for a in actions if a.command is not None]

    def _written_reason(self, uri: str) -> types.CodeAction | None:
        """The action running what the buffer's reason line names (`WRITTEN` for a
        reaffirm, "Forget with the reason written here", …) once a reason is written there;
        it removes the line (it applies to the buffer, so it is offered although the buffer
        differs from the file)."""
        folder = self.server.folder_for(uri)
        if folder is None or folder.snapshot is None or not self.server.settings.trusted:
            return None
        rel = folder.relative(uri)
        view = folder.snapshot.memories.get(rel) if rel is not None else None
        buffer = self.buffers.buffer_text(folder, rel) if rel is not None else None
        found = find_reason(buffer) if buffer is not None else None
        if rel is None or view is None or found is None or not found.reason:
            return None
        if not (view.reaffirmable if found.action == "reaffirm" else retirable(found.action, view)):
            return None
        if self.buffers.unsaved(folder, rel, reason_line=True):
            return None
        disk = self.buffers.disk_text(folder, rel)
        if disk is None or find_reason(disk) is not None:
            return None  # saved with the line in it: refused when run (see `_unsaved`)
        by = [argument(folder, found.by)] if found.by is not None else []
        title = written_title(found.action, found.by)
        return types.CodeAction(
            title=title,
            kind=types.CodeActionKind.QuickFix,
            is_preferred=True,
            command=types.Command(
                title=title,
                command=f"moor.{found.action}",
                arguments=[argument(folder, rel), *by, found.reason],
            ),
        )

    def _retiring(self, uri: str, wanted: types.Range) -> list[types.CodeAction]:
        for feature in self.server.features:
            if isinstance(feature, RetireActions):
                return feature.offers(uri, wanted)
        return []

    def _own_diagnostics(self, uri: str, wanted: types.Range) -> list[types.Diagnostic]:
        for feature in self.server.features:
            if isinstance(feature, Diagnostics):
                return [d for d in feature._items_for(uri) if on_its_lines(d.range, wanted)]
        return []

    def actions_for(self, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
        data = diagnostic.data
        if not isinstance(data, dict) or not isinstance(data.get("memory"), str):
            return []
        memory: str = data["memory"]
        home = self._where(data)
        target_memory = self._argument(data)
        state = data.get("state")
        if not isinstance(state, str):
            return []  # not one of moor's diagnostics (a client may send anything back)
        actions: list[types.CodeAction] = []

        def action(title: str, command: str, arguments: list[Any], preferred: bool = False) -> None:
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=preferred or None,
                    command=types.Command(title=title, command=command, arguments=arguments),
                )
            )

        if data.get("followable") and data.get("moved_to"):
            action(
                f"Follow the move: now {data['moved_to']}", FOLLOW, [target_memory], preferred=True
            )
        candidates = data.get("candidates")
        if state == "gone" and isinstance(candidates, list) and isinstance(data.get("ref"), str):
            for candidate in candidates:
                if isinstance(candidate, dict) and isinstance(candidate.get("ref"), str):
                    similarity = candidate.get("similarity")
                    how = (
                        f" ({round(similarity * 100)} % similar)"
                        if isinstance(similarity, int | float)
                        else ""
                    )
                    action(
                        f"Follow to {candidate['ref']}{how}",
                        FOLLOW,
                        [target_memory, candidate["ref"], data["ref"]],
                    )
        own_line: list[types.CodeAction] = []
        if state in REAFFIRM_STATES and data.get("reaffirmable"):
            view = self._view(home)
            if not self.reasons_in_menu() or view is None:
                action(
                    "Reaffirm: the memory still holds for the code as it is now…",
                    REAFFIRM,
                    [target_memory],
                )
            else:
                for reason in reaffirm_prompt(view.report).reasons:
                    action(f"Reaffirm: {reason}", REAFFIRM, [target_memory, reason])
                own_line = self.reason_line_action(
                    home, "reaffirm", None, "Reaffirm with my own reason (a line to write it on)…"
                )
                for own in own_line:
                    own.diagnostics = [diagnostic]
        if state == "retired" and home is not None:
            # Restore where the diagnostic says it is retired (or forgotten and written back).
            restore = f"Restore {home[1]}: it holds after all…"
            if self.reasons_in_menu():
                for own in self.reason_line_action(home, "restore", None, restore):
                    own.diagnostics = [diagnostic]
                    own_line.append(own)
            elif asks_reasons(self.server.initialization_options) or self.buffers.can_apply:
                action(restore, RESTORE, [target_memory])
        suggested = data.get("suggestions")
        uri = data.get("uri")
        if state == "gone" and isinstance(suggested, list) and isinstance(uri, str):
            for suggestion in suggested:
                if isinstance(suggestion, str):
                    edit = self._replacement(uri, diagnostic.range, suggestion, data.get("ref"))
                    if edit is not None:
                        actions.append(
                            types.CodeAction(
                                title=f"Change to {suggestion}",
                                kind=types.CodeActionKind.QuickFix,
                                diagnostics=[diagnostic],
                                edit=edit,
                            )
                        )
        canonical = data.get("canonical")
        if isinstance(canonical, str) and home is not None and _scheduled(home[0], canonical):
            action("Re-observe now", REOBSERVE, [target_memory, canonical])
        if data.get("bindable"):
            action(f"Bind {memory} to the code as it is now", BIND, [target_memory], preferred=True)
        if not self.server.settings.trusted or data.get("preview"):
            # Read-only, or seen in an unsaved buffer (an action would judge the file on
            # disk, not what the editor shows): only what writes nothing is offered.
            actions.clear()
        elif home is not None and self.buffers.unsaved(*home):
            # The memory's buffer differs from its file: keep only edits of the buffer.
            actions[:] = [a for a in actions if a.command is None]
        else:
            actions.extend(own_line)
        ref = data.get("ref")
        if state in DIFF_STATES and isinstance(ref, str) and data.get("bound_address"):
            action("Show diff since bound", SHOW_DIFF, [target_memory, ref])
        target = data.get("target")
        if isinstance(target, dict) and isinstance(target.get("uri"), str):
            where = data.get("moved_to") or data.get("canonical") or "the code"
            action(f"Open {where}", SHOW_CODE, [target["uri"], target.get("range")])
        return actions

    def _replacement(
        self, uri: str, where: types.Range, reference: str, written: object
    ) -> types.WorkspaceEdit | None:
        """An edit writing `reference` over the one at `where`, quoted as that one is."""
        try:
            lines = self.server.workspace.get_text_document(uri).lines
        except Exception:  # a document the client never opened and the disk lacks
            return None
        if where.start.line != where.end.line or where.start.line >= len(lines):
            return None
        line = lines[where.start.line]
        start = from_client_character(line, where.start.character, self.server.position_encoding)
        end = from_client_character(line, where.end.character, self.server.position_encoding)
        folder = self.server.folder_for(uri)
        rel = folder.relative(uri) if folder is not None else None
        if (
            folder is not None
            and rel is not None
            and self.buffers.unsaved(folder, rel)
            and line[start:end].strip("'\"") != written
        ):
            return None  # the unsaved buffer no longer has the reference there
        quote = line[start : start + 1]
        if quote == "'":
            text = "'" + reference.replace("'", "''") + "'"
        elif quote == '"' or ": " in reference or " #" in reference:
            text = json.dumps(reference, ensure_ascii=False)
        else:
            text = reference
        return types.WorkspaceEdit(changes={uri: [types.TextEdit(range=where, new_text=text)]})

    # --- executing ---------------------------------------------------------------------

    def _where(self, data: dict[str, Any]) -> tuple[Folder, str] | None:
        """The root of a diagnostic's memory (its `uri` names it) and its path there."""
        uri = data.get("uri")
        folder = self.server.folder_for(uri) if isinstance(uri, str) else None
        return None if folder is None else (folder, data["memory"])

    def _argument(self, data: dict[str, Any]) -> str:
        where = self._where(data)
        return argument(*where) if where is not None else data["memory"]

    def _view(self, home: tuple[Folder, str] | None) -> MemoryView | None:
        if home is None or home[0].snapshot is None:
            return None
        return home[0].snapshot.memories.get(home[1])

    def reasons_in_menu(self) -> bool:
        """Whether reasons are offered as code actions instead of asked: for a client
        that does not say it can be asked (`window.showMessage`) nor asks itself. eglot
        (1.9, and 29's) says neither, and a question there dies with the request that
        raised it at eglot's request timeout (10 s), the person's next keys landing in the
        memory (memories/lsp-reasons-in-the-menu-where-the-client-cannot-be-asked.md)."""
        return (
            not asks_reasons(self.server.initialization_options)
            and self.server.capability("window.show_message") is None
        )

    def reason_line_action(
        self, home: tuple[Folder, str] | None, action: str, by: str | None, title: str
    ) -> list[types.CodeAction]:
        """The code action whose edit puts `action`'s reason line into the memory's open
        buffer, for the person to write the reason on (then "… with the reason written
        here"): an edit the client applies itself, no request waiting on the person."""
        if home is None:
            return []
        folder, path = home
        current = self.buffers.buffer_text(folder, path)
        document = self.buffers.document(folder, path)
        if current is None or document is None:
            return []
        found = find_reason(current)
        if found is not None:
            current = without_line(current, found.line)
        text, _line = with_reason_line(current, reason_template(action, by))
        change = line_edit(
            self.buffers.buffer_text(folder, path) or "", text, self.server.position_encoding
        )
        if change is None:
            return []
        edit = types.TextEdit(
            range=types.Range(
                start=types.Position(line=change.start_line, character=0),
                end=types.Position(line=change.end_line, character=change.end_character),
            ),
            new_text=change.text,
        )
        return [
            types.CodeAction(
                title=title,
                kind=types.CodeActionKind.QuickFix,
                edit=types.WorkspaceEdit(changes={document.uri: [edit]}),
            )
        ]

    def _memory(self, value: object) -> tuple[Folder, str]:
        """The root of a command's memory argument and its path there."""
        try:
            return self.server.locate(value)
        except ValueError as error:
            raise JsonRpcInvalidParams(str(error)) from None

    def _writable(self, command: str) -> None:
        if not self.server.settings.trusted:
            raise JsonRpcInvalidRequest(
                f"{command} is not available: the workspace is not trusted, so moor is "
                "read-only here (it would write moor.lock and the journal)"
            )

    def _refuse(self, action: str, why: str) -> dict[str, Any]:
        """A refusal a person reads (a warning), answered as a result: not an error."""
        logger.info("moor %s refused: %s", action, why)
        self.server.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Warning, message=f"moor {action} refused: {why}"
            )
        )
        return {"done": [], "refused": [why]}

    def _unsaved(self, action: str, where: tuple[Folder, str]) -> str | None:
        """Why `action` may not run on the memory now because of its open buffer, if it
        may not."""
        folder, path = where
        if action in REASONED:
            disk = self.buffers.disk_text(folder, path)
            saved = find_reason(disk) if disk is not None else None
            if saved is not None:
                return (
                    f"{path} was saved with the reason line ({saved.head} …) in it: "
                    f"delete that line and save, then {action} again (it would otherwise "
                    "become part of the memory's text)"
                )
        if self.buffers.unsaved(folder, path, reason_line=action in REASONED):
            return (
                f"{path} has unsaved changes: save it first (moor {action} judges and "
                "writes the file on disk, not the editor's buffer)"
            )
        return None

    async def _act(self, action: str, where: tuple[Folder, str], args: list[str]) -> dict[str, Any]:
        folder, memory = where
        try:
            acted = await self.server.in_engine(engine.act, folder.root, action, memory, args)
        except engine.EngineProblem as problem:
            raise JsonRpcInvalidParams(str(problem)) from problem
        written = acted.written
        for told in acted.told:  # as the CLI prints them, e.g. that nothing was recorded
            self._warn(f"moor {action}: {told}")
        refused = [refusal.message for refusal in written.refused]
        if refused:
            logger.info("moor %s refused: %s", action, "; ".join(refused))
            self.server.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"moor {action} refused: " + "; ".join(refused),
                )
            )
        # An action writes the memory (follow), moor.lock and the journal, nothing else.
        if await folder.recompute(f"{action} {memory}", [memory, "moor.lock"]) is None:
            await folder.settled()  # overtaken by a change that came meanwhile
        # `refused` as the person reads it; `written`: the same write result, with each
        # refusal's code, as `moor ACTION --format json` and MCP's write tools answer it.
        return {
            "done": written.done,
            "refused": refused,
            "warnings": list(acted.told),
            "written": written.as_json(),
        }

    async def reaffirm(self, memory: object = None, reason: object = None) -> object:
        self._writable(REAFFIRM)
        where = self._memory(memory)
        if reason is not None and (not isinstance(reason, str) or not reason.strip()):
            raise JsonRpcInvalidParams(
                f"{REAFFIRM} needs a reason: arguments [memory, reason] (why the memory "
                "still holds for the code as it is now), or [memory] to be asked"
            )
        refusal = self._unsaved("reaffirm", where)
        if refusal is not None:
            return self._refuse("reaffirm", refusal)
        if reason is None:
            return await self._ask_reaffirm_reason(where)
        assert isinstance(reason, str)
        return await self._act_with_reason("reaffirm", where, [reason.strip()])

    async def _act_with_reason(
        self, action: str, where: tuple[Folder, str], args: list[str]
    ) -> dict[str, Any]:
        """Run `action`, whose last argument is its reason; once done, the buffer's reason
        line has served and is removed, so the buffer reads as the file (as it was, for a
        forgotten memory) again."""
        folder, path = where
        result = await self._act(action, where, args)
        buffer = self.buffers.buffer_text(folder, path)
        found = find_reason(buffer) if buffer is not None else None
        if result["done"] and buffer is not None and found is not None:
            removed = await self.buffers.apply(
                folder, path, without_line(buffer, found.line), f"moor: {action} {path}"
            )
            if not removed.ok:
                self._warn(
                    f"moor {action} done, but the editor kept the reason line "
                    f"({removed.why}): delete it without saving it"
                )
        return result

    def _warn(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        logger.info("%s", message)
        self.server.window_show_message(types.ShowMessageParams(type=kind, message=message))

    async def _ask_reaffirm_reason(self, where: tuple[Folder, str]) -> object:
        """Ask the person why the memory still holds, with the reasons the engine prepares
        from what changed, unless it cannot be reaffirmed."""
        folder, path = where
        snapshot = await folder.ready()
        view = snapshot.memories.get(path) if snapshot is not None else None
        if view is None:
            return self._refuse("reaffirm", f"{path} is not a memory moor has checked")
        if not view.reaffirmable:
            why = reaffirm_verdict(view.report).why or (
                "its code is seen in an unsaved editor buffer: save it first"
            )
            return self._refuse("reaffirm", f"{path}: cannot reaffirm: {why}")
        prompt = reaffirm_prompt(view.report)
        question = Question(
            "reaffirm",
            f"Reaffirm {path}: {prompt.changed}. Why does it still hold?",
            f"{path} still holds",
            tuple(prompt.reasons),
        )
        return await self._ask_reason(where, question)

    def _needs_reason(self, action: str) -> JsonRpcInvalidParams:
        return JsonRpcInvalidParams(
            f"moor.{action} needs a reason: give it as the command's last argument (this "
            "client could not be asked for one)"
        )

    async def _ask_reason(self, where: tuple[Folder, str], question: Question) -> object:
        """Ask the person for the reason of `question.action` (`window/showMessageRequest`):
        a prepared reason runs it, "Write my own reason…" puts the reason line in the
        buffer, "Cancel" or a dismissed question changes nothing."""
        folder, path = where
        action = question.action
        choices = [*question.reasons]
        if self.buffers.can_apply:
            choices.append(WRITE_OWN)
        if not choices:  # no reason to pick and nowhere to write one
            raise self._needs_reason(action)
        choices.append(CANCEL)
        try:
            answer = await self.server.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Info,
                    message=question.message,
                    actions=[types.MessageActionItem(title=choice) for choice in choices],
                )
            )
        except JsonRpcMethodNotFound:  # the client cannot ask
            logger.info("the client cannot ask for a reason (no window/showMessageRequest)")
            if self.buffers.can_apply:
                return await self._write_own(where, question)  # it can take a reason line
            raise self._needs_reason(action) from None
        except Exception as error:  # e.g. the person quit the question (Emacs: C-g)
            logger.info("the question for a reason was answered with an error: %s", error)
            answer = None
        title = answer.title if isinstance(answer, types.MessageActionItem) else None
        if title is not None and title in question.reasons:
            by = [argument(folder, question.by)] if question.by is not None else []
            return await self._act_with_reason(action, where, [*by, title])
        if title == WRITE_OWN:
            return await self._write_own(where, question)
        logger.info("%s %s: cancelled (%s)", action, path, title or "dismissed")
        return {"done": [], "refused": [], "cancelled": True}

    async def _write_own(self, where: tuple[Folder, str], question: Question) -> object:
        """Insert the reason line for `question.action` into the memory's buffer, for the
        person to complete (in place of another action's line left there)."""
        folder, path = where
        action, by = question.action, question.by
        current = self.buffers.buffer_text(folder, path)
        if current is None:
            current = self.buffers.disk_text(folder, path)
        if current is None:
            return self._refuse(action, f"{path} cannot be read")
        found = find_reason(current)
        if found is not None and (found.action, found.by) == (action, by):
            line = found.line
        else:
            if found is not None:
                current = without_line(current, found.line)
            text, line = with_reason_line(current, reason_template(action, by))
            applied = await self.buffers.apply(folder, path, text, f"moor: why {question.why}?")
            if not applied.ok:
                return self._refuse(
                    action,
                    f"the editor did not insert the reason line into {path} ({applied.why}): "
                    f'run `moor {action} {path}{" --by " + by if by else ""} --why "..."` '
                    "instead",
                )
        told = (
            f"Write why {question.why} after “because:” on line {line + 1}, then run the "
            f"code action “{written_title(action, by)}” there (do not save the line)."
        )
        self._warn(told, types.MessageType.Info)
        if self.server.capability("window.show_document.support"):
            at = types.Position(
                line=line,
                character=code_units(reason_head(action, by) + " ", self.server.position_encoding),
            )
            try:
                await self.server.window_show_document_async(
                    types.ShowDocumentParams(
                        uri=folder.uri(path),
                        take_focus=True,
                        selection=types.Range(start=at, end=at),
                    )
                )
            except Exception as error:  # showing the line is a nicety
                logger.info("could not show the reason line: %s", error)
        return {"done": [], "refused": [], "next": told}

    async def follow(
        self, memory: object = None, to: object = None, source: object = None
    ) -> object:
        self._writable(FOLLOW)
        where = self._memory(memory)
        if to is None:
            args: list[str] = []
        elif isinstance(to, str) and isinstance(source, str):
            args = [to, source]
        else:
            raise JsonRpcInvalidParams(
                f"{FOLLOW} needs [memory] or [memory, to, from]: the new place and the "
                "reference (as written in about:) that goes there"
            )
        refusal = self._unsaved("follow", where)
        if refusal is not None:
            return self._refuse("follow", refusal)
        # The file only, never the buffer too: the buffer holds the file (else refused
        # above), so the editor reloads it and it stays unmodified
        # (memories/lsp-memory-edits-go-through-the-buffer.md).
        return await self._act("follow", where, args)

    async def bind(self, memory: object = None) -> object:
        self._writable(BIND)
        where = self._memory(memory)
        refusal = self._unsaved("bind", where)
        if refusal is not None:
            return self._refuse("bind", refusal)
        return await self._act("bind", where, [])

    async def reobserve(self, memory: object = None, anchor: object = None) -> object:
        """Observe a command anchor now, outside its cadence, and re-check."""
        self._writable(REOBSERVE)
        folder, _path = self._memory(memory)
        if not isinstance(anchor, str) or not anchor.startswith(ANCHOR_PREFIX):
            raise JsonRpcInvalidParams(f"{REOBSERVE} needs [memory, anchor:NAME]")
        evaluator = folder.evaluator
        name = anchor.removeprefix(ANCHOR_PREFIX)
        if evaluator is None or not await self.server.in_engine(
            evaluator.live.cadence.now_due, name
        ):
            return self._refuse(
                "re-observe",
                f"{anchor} is not observed on a cadence here (the workspace's commands may "
                "not run, or the anchor is closed, undeclared or used by no memory)",
            )
        await folder.observe_now(f"re-observe {anchor}")
        return {"done": [anchor], "refused": [], "warnings": []}

    async def show_code(self, uri: object = None, where: object = None) -> object:
        if not isinstance(uri, str):
            raise JsonRpcInvalidParams(f"{SHOW_CODE} needs [uri, range]")
        selection = range_from_json(where)
        if not self.server.capability("window.show_document.support"):
            return {"uri": uri, "range": where}
        result = await self.server.window_show_document_async(
            types.ShowDocumentParams(uri=uri, take_focus=True, selection=selection)
        )
        # Some clients answer `null`: nothing says the document was shown.
        return {"success": bool(result is not None and result.success)}

    async def show_diff(self, memory: object = None, ref: object = None) -> object:
        folder, path = self._memory(memory)
        if ref is not None and not isinstance(ref, str):
            raise JsonRpcInvalidParams(
                f"{SHOW_DIFF} needs [memory, ref]: ref is a reference as written in about:"
            )
        save = self.server.settings.trusted
        try:
            found = await self.server.in_engine(
                diffs.diff_since_bound, folder.root, path, ref, save, folder.buffers
            )
        except engine.EngineProblem as problem:
            raise JsonRpcInvalidParams(str(problem)) from problem
        if found.file is None:
            return {"diff": found.text, "uri": None}
        uri = found.file.as_uri()
        if self.server.capability("window.show_document.support"):
            await self.server.window_show_document_async(
                types.ShowDocumentParams(uri=uri, take_focus=True)
            )
        return {"diff": found.text, "uri": uri}


def _scheduled(folder: Folder, canonical: str) -> bool:
    """Whether the folder's cadence observes this command anchor (it can be re-observed)."""
    snapshot = folder.snapshot
    name = canonical.removeprefix(ANCHOR_PREFIX)
    return canonical != name and snapshot is not None and name in snapshot.schedule
