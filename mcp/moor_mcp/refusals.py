"""How a refusal reaches an agent: an error result (`isError`) in one shape for every tool,
never a protocol error, a traceback or a Python repr.

Every refusal is a list of `results.Refused` — a stable `code`, the `message`, and where
known the `path` (the workspace's own) and `line`, with `ref`, `suggestions`, `instead`
and `current_hash` where a write's refusal has them — whatever refused:

- a write the engine refused (`Written.refused`: `not_found`, `exists`, `conflict`, …);
- a request the engine refused outright: each of its refusals carries its own code
  (`UsageError.code`: `usage`, `not_found`, `agent_invalid`, …; `config_invalid`,
  `lock_invalid`, `journal_unusable`, `journal_busy`, `write_busy`, and `NotInside.code`:
  `outside_workspace`, `not_a_file`, …);
- arguments that fail the tool's input schema (`invalid_argument`, one per argument, by
  name only: the value is the caller's own), a tool that does not exist (`unknown_tool`);
- a crash (`internal_error`): nothing of the exception reaches the client, the server's
  log has the traceback.

The result's content is two text blocks: the refusal for a model to read (`moor refused
TOOL`, one line each, with what to do instead), then `{"refused": [...]}` as JSON for a
program. A write tool's error result also carries structured content: the `WriteResult`
a success returns, with `ok` false and the same `refused[]`. Other tools' error results
carry none: their output schema has no place for a refusal, and a client may validate an
error's structured content against it (the TypeScript SDK does whenever it is present),
so content outside the schema would turn a refusal into that client's protocol error.

Tools raise `Refusing` (`engine_refusals`, `refuse`) or return `written_result`;
`server.MoorServer.call_tool` renders everything else that stops a call (`call_refused`).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator, Mapping
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, ContentBlock, TextContent
from moor_engine.written import Refusal, Written
from moor_store.refusal import RefusalError
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from moor_mcp.results import KnownHere, Refused, WriteResult

INTERNAL_ERROR = (
    "moor could not answer: an internal error stopped it (the server's log has the details); "
    "what was asked may be fine, try again or report it"
)

_log = logging.getLogger("moor_mcp")


class Refusing(ToolError):
    """A tool's refusal of one call, raised inside the tool and rendered by `call_refused`."""

    def __init__(self, refused: list[Refused]) -> None:
        super().__init__("; ".join(r.message for r in refused))
        self.refused = refused


def refusal(
    code: str, message: str, *, path: str | None = None, line: int | None = None
) -> Refused:
    """One refusal that is not a write's (no reference, suggestion or hash)."""
    return Refused(
        code=code,
        message=message,
        path=path,
        line=line,
        ref=None,
        suggestions=[],
        instead=None,
        current_hash=None,
    )


def refuse(code: str, message: str, *, path: str | None = None) -> Refusing:
    """A tool's own refusal of its arguments, to raise."""
    return Refusing([refusal(code, message, path=path)])


@contextlib.contextmanager
def engine_refusals(root: Path) -> Iterator[None]:
    """The engine's refusals of a request, raised as `Refusing` with their code, message,
    path and line."""
    try:
        yield
    except RefusalError as error:
        raise Refusing([engine_refusal(root, error)]) from None


def engine_refusal(root: Path, error: RefusalError) -> Refused:
    refused = refusal(
        error.code, str(error), path=_workspace_path(root, error.path), line=error.line
    )
    close = getattr(error, "suggestions", ())  # the engine's did-you-mean (`UsageError`)
    return refused.model_copy(update={"suggestions": list(close)}) if close else refused


def written_result(tool: str, written: Written) -> CallToolResult:
    """A write's answer: structured content for a success, an error result for a refusal."""
    result = WriteResult(
        action=written.action,
        ok=written.ok,
        path=written.path,
        content_hash=written.content_hash,
        done=list(written.done),
        known_here=[
            KnownHere(
                path=k.path,
                title=k.title,
                state=k.state,
                anchors=list(k.anchors),
                retired_because=k.retired_because or None,
            )
            for k in written.known_here
        ],
        refused=[_refused(given) for given in written.refused],
    )
    if not result.ok:
        return refused_result(tool, result.refused, result)
    return CallToolResult(
        content=[TextContent(type="text", text=result.model_dump_json())],
        structured_content=result.model_dump(mode="json"),
    )


def refused_result(
    tool: str, refused: list[Refused], written: WriteResult | None = None
) -> CallToolResult:
    """The one shape of a refusal: text to read, the refusals as JSON, and for a write tool
    its `WriteResult` (with `ok` false) as structured content."""
    crashed = any(r.code == "internal_error" for r in refused)
    lines = [f"moor refused {tool}" + (": nothing was written" if written and not crashed else "")]
    for each in refused:
        lines.append(f"- {each.message}")
        if each.instead:
            lines.append(f"  instead: {each.instead}")
    as_json = [each.model_dump(mode="json") for each in refused]
    content: list[ContentBlock] = [
        TextContent(type="text", text="\n".join(lines)),
        TextContent(type="text", text=json.dumps({"refused": as_json}, ensure_ascii=False)),
    ]
    if written is None:
        return CallToolResult(content=content, is_error=True)
    structured = written.model_copy(update={"ok": False, "refused": refused})
    return CallToolResult(
        content=content, structured_content=structured.model_dump(mode="json"), is_error=True
    )


def call_refused(tool: str, error: ToolError, writes: Mapping[str, str]) -> CallToolResult:
    """What a call that raised `error` answers (the SDK raises a `ToolError` around whatever
    stopped it: a tool's `Refusing`, arguments that fail validation, a crash). `writes`
    names each write tool's action, whose error result carries its `WriteResult`."""
    cause = error.__cause__
    if isinstance(cause, Refusing):
        refused = cause.refused
    elif isinstance(error, Refusing):
        refused = error.refused
    elif isinstance(error, UnexpectedToolError):
        _log.error("tool %r crashed", tool, exc_info=cause or error)
        refused = [refusal("internal_error", INTERNAL_ERROR)]
    elif isinstance(cause, ValidationError):
        refused = [_invalid(detail) for detail in cause.errors(include_url=False)]
    else:  # a ToolError nobody here raised: its message is moor's or the SDK's own words
        refused = [refusal("usage", str(cause or error))]
    _log.info("tool %r refused: %s", tool, ", ".join(r.code for r in refused))
    action = writes.get(tool)
    if action is None:
        return refused_result(tool, refused)
    return refused_result(tool, refused, unwritten(action))


def unknown_tool(tool: str, known: list[str]) -> CallToolResult:
    message = f"there is no tool named {tool}; the tools are: {', '.join(sorted(known))}"
    return refused_result(tool, [refusal("unknown_tool", message)])


def unwritten(action: str) -> WriteResult:
    """A write tool's answer when nothing was attempted."""
    return WriteResult(
        action=action,
        ok=False,
        path=None,
        content_hash=None,
        done=[],
        known_here=[],
        refused=[],
    )


def _invalid(detail: ErrorDetails) -> Refused:
    """One argument that failed the input schema: its name and pydantic's reason, never the
    value (pydantic's own text quotes it as a Python repr)."""
    where = ".".join(str(part) for part in detail["loc"]) or "arguments"
    return refusal("invalid_argument", f"{where}: {detail['msg']}")


def _workspace_path(root: Path, path: str | Path | None) -> str | None:
    """A path as the workspace names it (relative to its root) when it is inside."""
    if path is None:
        return None
    if isinstance(path, str):
        return path
    for base in (root, root.resolve()):
        with contextlib.suppress(ValueError):
            return path.relative_to(base).as_posix()
    return path.as_posix()


def _refused(given: Refusal) -> Refused:
    return Refused(
        code=given.code,
        message=given.message,
        path=given.path,
        line=None,
        ref=given.ref,
        suggestions=list(given.suggestions),
        instead=_instead(given),
        current_hash=given.current_hash,
    )


def _instead(refusal: Refusal) -> str | None:
    """The engine's alternative, named as this surface's tool (the engine names commands)."""
    if refusal.code == "exists" and refusal.path is not None:
        based_on = refusal.current_hash or "<its content_hash>"
        return f'memory_edit(path="{refusal.path}", section=..., text=..., based_on="{based_on}")'
    if refusal.code in ("forgotten", "superseded") and refusal.path is not None:
        return f'memory_restore(path="{refusal.path}", why=...), if it should hold after all'
    if refusal.code == "conflict" and refusal.current_hash is not None:
        return f'read {refusal.path} again, then memory_edit with based_on="{refusal.current_hash}"'
    return refusal.instead
