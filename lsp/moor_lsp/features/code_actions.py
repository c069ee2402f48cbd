"""Quick fixes on moor diagnostics, and the commands they run.

* `moor.reaffirm [memory, reason]` — accept the code as it is now, with a reason. The
  code action carries only `[memory]`: the client asks the person why and appends it.
* `moor.follow [memory]` — rewrite moved/renamed references in the memory, re-bind them;
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

In an untrusted workspace (setting `trusted: false`) the server is read-only: the actions
that write (reaffirm, follow, bind) are not offered and their commands answer an error;
`moor.showDiff` saves no file there and answers `{"diff": text, "uri": null}` (the
client shows the text itself).

`memory` is an absolute path or a `file:` URI (its root is the innermost one holding it),
or a path relative to a root (the only one, or the one where that file exists); code
actions carry the absolute path. Each action runs
in the engine thread, journals what it did like the CLI, re-checks the workspace (so the
diagnostics are up to date when the command answers) and returns
`{"done": [...], "refused": [...]}`; a refusal is also shown as a warning.

Actions are built from `Diagnostic.data` of the diagnostics in the request's context whose
range overlaps the requested range (touching counts: a cursor at the end of a reference is
on it); when a client sends no data, the server's own current diagnostics are used.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest

from moor_lsp import diffs, engine
from moor_lsp.features import Feature
from moor_lsp.features.diagnostics import SOURCE, Diagnostics
from moor_lsp.positions import from_client_character

if TYPE_CHECKING:
    from moor_lsp.folder import Folder

REAFFIRM = "moor.reaffirm"
FOLLOW = "moor.follow"
BIND = "moor.bind"
SHOW_CODE = "moor.showCode"
SHOW_DIFF = "moor.showDiff"
REAFFIRM_STATES = frozenset({"drifted", "rewritten"})
DIFF_STATES = frozenset({"drifted", "moved"})


def overlaps(a: types.Range, b: types.Range) -> bool:
    def key(position: types.Position) -> tuple[int, int]:
        return (position.line, position.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


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


class CodeActions(Feature):
    name = "code_actions"

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
            if d.source == SOURCE and isinstance(d.data, dict) and overlaps(d.range, params.range)
        ]
        if not diagnostics:
            diagnostics = self._own_diagnostics(params.text_document.uri, params.range)
        actions: list[types.CodeAction] = []
        seen: set[tuple[str, str]] = set()
        for diagnostic in diagnostics:
            for action in self.actions_for(diagnostic):
                key = (action.title, repr(action.command))
                if key not in seen:
                    seen.add(key)
                    actions.append(action)
        if not actions:
            return None
        if self.server.capability("text_document.code_action.code_action_literal_support"):
            return list(actions)
        return [a.command for a in actions if a.command is not None]

    def _own_diagnostics(self, uri: str, wanted: types.Range) -> list[types.Diagnostic]:
        for feature in self.server.features:
            if isinstance(feature, Diagnostics):
                return [d for d in feature._items_for(uri) if overlaps(d.range, wanted)]
        return []

    def actions_for(self, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
        data = diagnostic.data
        if not isinstance(data, dict) or not isinstance(data.get("memory"), str):
            return []
        memory: str = data["memory"]
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

        if state == "moved" and data.get("moved_to"):
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
        if state in REAFFIRM_STATES and data.get("reaffirmable"):
            action(
                "Reaffirm: the memory still holds for the code as it is now…",
                REAFFIRM,
                [target_memory],
            )
        suggested = data.get("suggestions")
        uri = data.get("uri")
        if state == "gone" and isinstance(suggested, list) and isinstance(uri, str):
            for suggestion in suggested:
                if isinstance(suggestion, str):
                    edit = self._replacement(uri, diagnostic.range, suggestion)
                    if edit is not None:
                        actions.append(
                            types.CodeAction(
                                title=f"Change to {suggestion}",
                                kind=types.CodeActionKind.QuickFix,
                                diagnostics=[diagnostic],
                                edit=edit,
                            )
                        )
        if state == "unbound":
            action(f"Bind {memory} to the code as it is now", BIND, [target_memory], preferred=True)
        if not self.server.settings.trusted or data.get("preview"):
            # Read-only, or seen in an unsaved buffer (an action would judge the file on
            # disk, not what the editor shows): only what writes nothing is offered.
            actions.clear()
        ref = data.get("ref")
        if state in DIFF_STATES and isinstance(ref, str) and data.get("bound_address"):
            action("Show diff since bound", SHOW_DIFF, [target_memory, ref])
        target = data.get("target")
        if isinstance(target, dict) and isinstance(target.get("uri"), str):
            where = data.get("moved_to") or data.get("canonical") or "the code"
            action(f"Open {where}", SHOW_CODE, [target["uri"], target.get("range")])
        return actions

    def _replacement(
        self, uri: str, where: types.Range, reference: str
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
        quote = line[start : start + 1]
        if quote == "'":
            text = "'" + reference.replace("'", "''") + "'"
        elif quote == '"' or ": " in reference or " #" in reference:
            text = json.dumps(reference, ensure_ascii=False)
        else:
            text = reference
        return types.WorkspaceEdit(changes={uri: [types.TextEdit(range=where, new_text=text)]})

    # --- executing ---------------------------------------------------------------------

    def _argument(self, data: dict[str, Any]) -> str:
        """A command's memory argument: its absolute path, which names its root too."""
        folder = self.server.folder_for(data["uri"]) if isinstance(data.get("uri"), str) else None
        return str(folder.root / data["memory"]) if folder is not None else data["memory"]

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

    async def _act(
        self, action: str, where: tuple[Folder, str], args: list[str]
    ) -> dict[str, list[str]]:
        folder, memory = where
        try:
            outcome = await self.server.in_engine(engine.act, folder.root, action, memory, args)
        except engine.EngineProblem as problem:
            raise JsonRpcInvalidParams(str(problem)) from problem
        if outcome.refused:
            self.server.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"moor {action} refused: " + "; ".join(outcome.refused),
                )
            )
        # An action writes the memory (follow), moor.lock and the journal, nothing else.
        if await folder.recompute(f"{action} {memory}", [memory, "moor.lock"]) is None:
            await folder.settled()  # overtaken by a change that came meanwhile
        return {"done": outcome.done, "refused": outcome.refused}

    async def reaffirm(self, memory: object = None, reason: object = None) -> object:
        self._writable(REAFFIRM)
        path = self._memory(memory)
        if not isinstance(reason, str) or not reason.strip():
            raise JsonRpcInvalidParams(
                f"{REAFFIRM} needs a reason: arguments [memory, reason] (why the memory "
                "still holds for the code as it is now)"
            )
        return await self._act("reaffirm", path, [reason.strip()])

    async def follow(
        self, memory: object = None, to: object = None, source: object = None
    ) -> object:
        self._writable(FOLLOW)
        if to is None:
            return await self._act("follow", self._memory(memory), [])
        if not isinstance(to, str) or not isinstance(source, str):
            raise JsonRpcInvalidParams(
                f"{FOLLOW} needs [memory] or [memory, to, from]: the new place and the "
                "reference (as written in about:) that goes there"
            )
        return await self._act("follow", self._memory(memory), [to, source])

    async def bind(self, memory: object = None) -> object:
        self._writable(BIND)
        return await self._act("bind", self._memory(memory), [])

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
