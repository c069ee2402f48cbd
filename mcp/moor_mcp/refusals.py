"""How a refusal reaches an agent: a tool result with `isError`, never a protocol error.

A request moor cannot take (bad input, a path outside the workspace, a busy write lock)
raises the SDK's `ToolError` with moor's message. A write the engine refused (`Written`
with `refused`) is returned as an error result that carries both forms: its text is the
refusal to read, one line each, and then the refusals as one JSON line; its structured
content is the same `WriteResult` a success returns, with `ok` false, so a program reads
`refused[].code` without parsing text. (The SDK's `ToolError` carries text only, and a
client validates structured content against the output schema only when a result is not
an error, so the error result keeps the one schema.)
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from moor_engine.config import ConfigError
from moor_engine.memory_writes import Refusal, Written
from moor_engine.session import UsageError
from moor_store.inside import NotInside
from moor_store.journal import JournalError
from moor_store.lockfile import LockError
from moor_store.writelock import WriteBusy

from moor_mcp.results import KnownHere, Refused, WriteResult

_ENGINE_REFUSALS = (UsageError, ConfigError, LockError, JournalError, WriteBusy, NotInside)


@contextlib.contextmanager
def engine_refusals() -> Iterator[None]:
    """The engine's refusals of a request as tool errors with its message."""
    try:
        yield
    except _ENGINE_REFUSALS as error:
        raise ToolError(str(error)) from None


def written_result(tool: str, written: Written) -> CallToolResult:
    """A write's answer: structured content for a success, an error result for a refusal."""
    result = WriteResult(
        action=written.action,
        ok=written.ok,
        path=written.path,
        content_hash=written.content_hash,
        done=list(written.done),
        known_here=[
            KnownHere(path=k.path, title=k.title, state=k.state, anchors=list(k.anchors))
            for k in written.known_here
        ],
        refused=[_refused(refusal) for refusal in written.refused],
    )
    structured = result.model_dump(mode="json")
    if result.ok:
        return CallToolResult(
            content=[TextContent(type="text", text=result.model_dump_json())],
            structured_content=structured,
        )
    lines = [f"moor refused {tool}: nothing was written"]
    for refusal in result.refused:
        lines.append(f"- {refusal.message}")
        if refusal.instead:
            lines.append(f"  instead: {refusal.instead}")
    lines.append(json.dumps({"refused": structured["refused"]}, ensure_ascii=False))
    return CallToolResult(
        content=[TextContent(type="text", text="\n".join(lines))],
        structured_content=structured,
        is_error=True,
    )


def _refused(refusal: Refusal) -> Refused:
    return Refused(
        code=refusal.code,
        message=refusal.message,
        path=refusal.path,
        ref=refusal.ref,
        suggestions=list(refusal.suggestions),
        instead=_instead(refusal),
        current_hash=refusal.current_hash,
    )


def _instead(refusal: Refusal) -> str | None:
    """The engine's alternative, named as this surface's tool (the engine names commands)."""
    if refusal.code == "exists" and refusal.path is not None:
        based_on = refusal.current_hash or "<its content_hash>"
        return f'memory_edit(path="{refusal.path}", section=..., text=..., based_on="{based_on}")'
    if refusal.code == "forgotten" and refusal.path is not None:
        return f'memory_restore(path="{refusal.path}", why=...), if it should hold after all'
    if refusal.code == "conflict" and refusal.current_hash is not None:
        return f'read {refusal.path} again, then memory_edit with based_on="{refusal.current_hash}"'
    return refusal.instead
