"""The hook JSON of each agent moor serves, translated to the one the engine answers
(Claude Code's: `session_id`, `cwd`, `prompt`, `tool_name`, `tool_input.file_path`,
`stop_hook_active`) and its answer translated back. Only a translation: what is said is
decided once, by the engine, for every agent (`hook_reply.hook_answer`). Which of an
agent's events are installed, and why, is `moor_engine.agents.agent_layouts`.

Imported by every hook, before the engine: nothing heavy here.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing`: every hook imports this module
if TYPE_CHECKING:
    from typing import Any

AGENTS = ("claude", "gemini", "cursor")
# Claude Code's name of each of moor's events.
CLAUDE_EVENTS = {
    "session-start": "SessionStart",
    "prompt": "UserPromptSubmit",
    "pre-tool-use": "PreToolUse",
    "post-tool-use": "PostToolUse",
    "stop": "Stop",
}
# Gemini CLI's file tools, as the Claude Code tools the edit loop knows (Gemini CLI's
# own mapping, *Migration from Claude Code*). A read is answered as Claude Code's
# PreToolUse: Gemini CLI's BeforeTool cannot add context, its AfterTool can.
_GEMINI_TOOLS = {"read_file": "Read", "write_file": "Write", "replace": "Edit"}
_GEMINI_EVENTS = {"session-start": "SessionStart", "prompt": "BeforeAgent"}


def incoming(agent: str, event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """moor's event and the payload as the engine reads it; None: nothing to answer (a tool
    or an event moor does not serve for that agent)."""
    if agent == "gemini":
        return _from_gemini(event, payload)
    if agent == "cursor":
        return _from_cursor(event, payload)
    return event, payload


def _from_gemini(event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    if event != "post-tool-use":
        return event, payload  # its SessionStart, BeforeAgent, AfterAgent carry the same keys
    tool = _GEMINI_TOOLS.get(str(payload.get("tool_name")))
    if tool is None:
        return None
    return ("pre-tool-use" if tool == "Read" else event), {**payload, "tool_name": tool}


def _from_cursor(event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    raw = payload.get("workspace_roots")
    roots = [root for root in raw if isinstance(root, str)] if isinstance(raw, list) else []
    session = {"session_id": payload.get("conversation_id")}
    if event == "post-tool-use":  # afterFileEdit
        file = payload.get("file_path")
        if not isinstance(file, str) or not file:
            return None
        inside = [root for root in roots if file.startswith(root.rstrip("/") + "/")]
        cwd = (inside or roots or [""])[0]
        tool = {"tool_name": "Edit", "tool_input": {"file_path": file}}
        return event, {**session, "cwd": cwd, **tool}
    if event == "stop":
        if payload.get("status", "completed") != "completed":
            return None  # aborted or failed: the person stopped it, nothing to send after
        loops = payload.get("loop_count")
        asked = isinstance(loops, int) and not isinstance(loops, bool) and loops > 0
        return event, {**session, "cwd": roots[0] if roots else "", "stop_hook_active": asked}
    return None


def outgoing(agent: str, event: str, answer: str) -> dict[str, object] | None:
    """What the agent reads on stdout for moor's `answer` to its `event` (the event it was
    installed for); None: print nothing."""
    if not answer:
        return None
    if agent == "cursor":
        # Cursor's afterFileEdit has no output; its stop sends `followup_message` as the
        # next user message.
        return {"followup_message": answer} if event == "stop" else None
    if event == "stop":  # Claude Code blocks with `reason`; Gemini CLI's AfterAgent denies
        return {"decision": "deny" if agent == "gemini" else "block", "reason": answer}
    gemini = _GEMINI_EVENTS.get(event, "AfterTool")
    name = gemini if agent == "gemini" else CLAUDE_EVENTS[event]
    return {"hookSpecificOutput": {"hookEventName": name, "additionalContext": answer}}
