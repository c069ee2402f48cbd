"""The tools that write memories: the engine's one write path (`memory_writes`,
`latch_actions`, `actions.reaffirm`), each call one unit under the workspace write lock.
A refusal writes nothing and comes back as an error result whose structured content is the
`WriteResult` with `ok` false (`refusals.written_result`, and `refusals.call_refused` for a
refusal raised before the engine wrote: the engine's, the arguments')."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult
from moor_engine.session import Session
from pydantic import Field

from moor_mcp.annotations import ADDITIVE, ADDITIVE_ONCE, REMOVES, REWRITES
from moor_mcp.refusals import engine_refusals, written_result
from moor_mcp.results import WriteResult

Answer = Annotated[CallToolResult, WriteResult]

# Each write tool's action (`WriteResult.action`): a refusal of a call that never reached
# the engine's write (bad arguments, a busy write lock) still answers a `WriteResult`.
ACTIONS = {
    "memory_write": "add",
    "memory_edit": "edit",
    "memory_supersede": "supersede",
    "memory_forget": "forget",
    "memory_restore": "restore",
    "memory_reaffirm": "reaffirm",
    "memory_follow": "follow",
    "memory_pin": "pin",
    "memory_unpin": "unpin",
}


def register(server: MCPServer, root: Path) -> None:
    @server.tool(annotations=ADDITIVE_ONCE, structured_output=True)
    def memory_write(
        text: str,
        about: list[str],
        ctx: Context,
        title: str | None = None,
        confidence: str = "inferred",
        questions: tuple[str, ...] = (),
        supersedes: tuple[str, ...] = (),
        agent: str | None = None,
    ) -> Answer:
        """Write a new memory about code and bind it: `about` lists the code it is about
        (PATH#SYMBOL or PATH; each must exist now, else did-you-mean suggestions). Ask
        memories_about first; the result's known_here lists memories already bound to the
        same code (retired ones last, each with why). Never overwrites: change an existing
        memory with memory_edit, and replace a wrong one by writing the right one with
        supersedes (or memory_supersede). Refused for text that was forgotten
        (memory_forget) or superseded, citing when and why, and the successor. With
        `agent`, the memory is that agent's own (`agent:`); without it, it is shared."""
        from moor_engine.memory.memory_writes import Draft, add

        draft = Draft(
            text=text,
            about=about,
            title=title,
            confidence=confidence,
            author=_client_name(ctx),
            agent=agent,
            questions=questions,
            supersedes=supersedes,
        )
        with engine_refusals(root), Session.open(root) as session:
            return written_result("memory_write", add(session, draft))

    @server.tool(annotations=REWRITES, structured_output=True)
    def memory_edit(path: str, section: str, text: str, based_on: str) -> Answer:
        """Edit one section of a memory (the text under one heading: the title, or any
        `##` section such as "When this changes, ask"), only if the memory is still what you
        read: `based_on` is its content_hash from memory_search or an earlier write. A memory
        changed since is a conflict, refused with its hash now. For a memory that was wrong,
        prefer memory_supersede."""
        from moor_engine.memory.memory_writes import edit

        with engine_refusals(root), Session.open(root) as session:
            return written_result("memory_edit", edit(session, path, section, text, based_on))

    @server.tool(annotations=ADDITIVE_ONCE, structured_output=True)
    def memory_supersede(old: str, by: str, why: str) -> Answer:
        """Retire memory `old` because memory `by` says it better: memory_search no longer
        returns it. A latch: only memory_restore brings it back."""
        from moor_engine.memory.latch_actions import supersede

        with engine_refusals(root), Session.open(root) as session:
            return written_result("memory_supersede", supersede(session, old, by, why))

    @server.tool(annotations=REMOVES, structured_output=True)
    def memory_forget(path: str, why: str) -> Answer:
        """Forget a memory that never held: its file is removed and its text is refused by
        memory_write from now on, citing `why`. For one that was true once and is outdated,
        use memory_supersede; memory_restore undoes either."""
        from moor_engine.memory.latch_actions import forget

        with engine_refusals(root), Session.open(root) as session:
            return written_result("memory_forget", forget(session, path, why))

    @server.tool(annotations=ADDITIVE_ONCE, structured_output=True)
    def memory_restore(path: str, why: str) -> Answer:
        """Restore a memory: the only way back from memory_supersede (un-retire) and
        memory_forget (lift the tombstone, and write the file again from this clone's
        journal)."""
        from moor_engine.memory.latch_actions import restore

        with engine_refusals(root), Session.open(root) as session:
            return written_result("memory_restore", restore(session, path, why))

    @server.tool(annotations=ADDITIVE, structured_output=True)
    def memory_reaffirm(path: str, why: str) -> Answer:
        """Reaffirm a memory once you have checked it still holds for the code as it is now
        (drift_report lists the ones that need it): every anchor is bound to the code now,
        with `why` journalled. All or nothing: a gone or moved anchor refuses it."""
        from moor_engine.grounding.actions import reaffirm

        with engine_refusals(root), Session.open(root) as session:
            return written_result("memory_reaffirm", reaffirm(session, path, why))

    def memory_follow(**arguments: Any) -> Answer:
        """Follow a memory's moved references: re-point them to where the code is now and
        re-bind them (what memory_reaffirm asks for first when an anchor moved). For a gone
        reference, name its new place: `from` the reference as written, `to` PATH#SYMBOL
        (drift_report and the edit hook list the candidates). Whatever changed on the way
        shows as drifted until memory_reaffirm accepts it."""
        from moor_engine.grounding.actions import follow

        path, to, source = arguments["path"], arguments.get("to"), arguments.get("from")
        why = arguments.get("why")
        with engine_refusals(root), Session.open(root) as session:
            return written_result("memory_follow", follow(session, path, to, source, why))

    # `from` is the argument's name on the wire, and no Python parameter can have it: the
    # signature the SDK reads names it `source`, aliased, and the call passes it by alias.
    memory_follow.__signature__ = _FOLLOW  # type: ignore[attr-defined]
    server.tool(annotations=REWRITES, structured_output=True)(memory_follow)

    @server.tool(annotations=ADDITIVE_ONCE, structured_output=True)
    def memory_pin(path: str, why: str) -> Answer:
        """Pin a memory: always in `moor context` and ranked up in memory_search. Changes
        only its `pinned:`, so a memory that was current stays current; memory_unpin undoes
        it."""
        from moor_engine.memory.pins import pin

        with engine_refusals(root), Session.open(root) as session:
            return written_result("memory_pin", pin(session, path, True, why))

    @server.tool(annotations=ADDITIVE_ONCE, structured_output=True)
    def memory_unpin(path: str, why: str) -> Answer:
        """Unpin a memory pinned by memory_pin (or by hand, `pinned: true`)."""
        from moor_engine.memory.pins import pin

        with engine_refusals(root), Session.open(root) as session:
            return written_result("memory_unpin", pin(session, path, False, why))


def _optional(name: str, annotation: object) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation
    )


_FOLLOW = inspect.Signature(
    [
        inspect.Parameter("path", inspect.Parameter.KEYWORD_ONLY, annotation=str),
        _optional("to", str | None),
        _optional("source", Annotated[str | None, Field(alias="from")]),
        _optional("why", str | None),
    ],
    return_annotation=Answer,
)


def _client_name(ctx: Context) -> str | None:
    """The MCP client's own name (its `clientInfo`): the memory's `author:` provenance
    (`agent:` names a namespace; an MCP write is shared unless the agent asks)."""
    params = ctx.request_context.session.client_params
    if params is None or not params.client_info.name.strip():
        return None
    return f"mcp:{params.client_info.name.strip()}"
