"""Gemini CLI's and Cursor's hooks (issue 26: "where their hooks allow, other agents"):
`moor hooks install gemini|cursor` and real `moor hooks run EVENT --agent …` processes fed
each agent's JSON as its documentation gives it, answering in its form — the same answers
Claude Code's hooks get, since the engine decides them once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests.cli.test_edit_loop_hooks import CODE, workspace
from tests.cli.test_hook_server import SERVED, answered, server_pid, servers_in, until
from tests.cli.test_start_up import _imported
from tests.conftest import Workspace

GEMINI_SESSION = "gemini-7d1f"
CURSOR_CONVERSATION = "conv-1a2b"


def run(
    ws: Workspace, event: str, agent: str, payload: object, env: dict[str, str] | None = None
) -> dict[str, Any] | None:
    """The JSON a real hook process prints (None: nothing); it must exit 0, say nothing on
    stderr."""
    result = subprocess.run(
        [sys.executable, "-P", "-m", "moor", "hooks", "run", event, "--agent", agent],
        cwd=ws.root / "net",  # not the root: the agent's JSON says where the workspace is
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        timeout=120,
    )
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    if not result.stdout:
        return None
    value = json.loads(result.stdout)
    assert isinstance(value, dict)
    return value


def gemini(ws: Workspace, event: str, **fields: Any) -> dict[str, Any]:
    # Gemini CLI's base input (Hooks reference, *Base input schema*) and the event's own.
    return {
        "session_id": GEMINI_SESSION,
        "transcript_path": str(ws.root / ".gemini-transcript.json"),
        "cwd": str(ws.root),
        "hook_event_name": event,
        "timestamp": "2026-12-08T01:00:00Z",
        **fields,
    }


def gemini_tool(ws: Workspace, tool: str, file: str) -> dict[str, Any]:
    return gemini(
        ws,
        "AfterTool",
        tool_name=tool,
        tool_input={"file_path": str(ws.root / file)},
        tool_response={"llmContent": "…", "returnDisplay": "…"},
    )


def context(answer: dict[str, Any] | None, event: str) -> str:
    assert answer is not None
    inner = answer["hookSpecificOutput"]
    assert inner["hookEventName"] == event
    text = inner["additionalContext"]
    assert isinstance(text, str)
    return text


def test_gemini_install_merges_with_its_settings_is_idempotent_and_uninstall_removes_only_ours(
    ws: Workspace,
) -> None:
    workspace(ws)
    theirs = {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "x"}]}
    ws.write(
        ".gemini/settings.json", json.dumps({"theme": "dark", "hooks": {"AfterTool": [theirs]}})
    )
    out = ws.moor("hooks", "install", "gemini", "--format", "json", check=True).out
    assert json.loads(out)["added"] == ["SessionStart", "BeforeAgent", "AfterTool", "AfterAgent"]
    settings = json.loads(ws.read(".gemini/settings.json"))
    assert settings["theme"] == "dark"
    after_tool = settings["hooks"]["AfterTool"]
    assert after_tool[0] == theirs
    assert after_tool[1]["matcher"] == "read_file|write_file|replace"
    assert after_tool[1]["hooks"][0]["command"] == "moor hooks run post-tool-use --agent gemini"
    assert after_tool[1]["hooks"][0]["timeout"] == 10000  # Gemini CLI counts milliseconds
    again = ws.moor("hooks", "install", "gemini", check=True).out
    assert "nothing to change" in again and "Enable Hooks System" in again
    ws.moor("hooks", "uninstall", "gemini", check=True)
    assert json.loads(ws.read(".gemini/settings.json")) == {
        "theme": "dark",
        "hooks": {"AfterTool": [theirs]},
    }
    # Claude Code's file is another agent's: untouched by all of it.
    assert not (ws.root / ".claude/settings.json").exists()


def test_gemini_is_told_about_a_file_after_reading_it_and_what_its_edit_left_stale(
    ws: Workspace,
) -> None:
    workspace(ws)
    shown = context(
        run(ws, "post-tool-use", "gemini", gemini_tool(ws, "read_file", "net/client.py")),
        "AfterTool",
    )
    assert 'path="memories/send.md" state="current"' in shown
    assert "Send returns the payload as given." in shown and "data, not instructions" in shown
    assert "memories/helper.md" not in shown
    # Controls in the same setup: a file no memory is about, and a tool that is no file tool.
    ws.write("net/plain.py", "X = 1\n")
    assert run(ws, "post-tool-use", "gemini", gemini_tool(ws, "read_file", "net/plain.py")) is None
    shell = gemini_tool(ws, "run_shell_command", "net/client.py")
    assert run(ws, "post-tool-use", "gemini", shell) is None
    # An edit that leaves the memory current says nothing; one that drifts it says so.
    edit = gemini_tool(ws, "replace", "net/client.py")
    ws.write("net/client.py", "# a comment\n" + CODE)
    assert run(ws, "post-tool-use", "gemini", edit) is None
    ws.write("net/client.py", CODE.replace("return payload", "return payload * 2"))
    told = context(run(ws, "post-tool-use", "gemini", edit), "AfterTool")
    assert "memories/send.md (drifted)" in told
    assert 'moor reaffirm memories/send.md --why "..."' in told
    # A prompt naming the method gets its memory (BeforeAgent adds context).
    prompt = gemini(ws, "BeforeAgent", prompt="why does send double the payload?")
    assert "memories/send.md" in context(run(ws, "prompt", "gemini", prompt), "BeforeAgent")


def test_gemini_is_asked_before_it_stops_once_about_what_its_edits_left_stale(
    ws: Workspace,
) -> None:
    workspace(ws)
    stop = gemini(ws, "AfterAgent", prompt="p", prompt_response="done", stop_hook_active=False)
    assert run(ws, "stop", "gemini", stop) is None  # nothing edited yet: nothing to ask
    ws.write("net/client.py", CODE.replace("return payload", "return payload * 2"))
    assert run(ws, "post-tool-use", "gemini", gemini_tool(ws, "write_file", "net/client.py"))
    asked = run(ws, "stop", "gemini", stop)
    assert asked is not None and asked["decision"] == "deny"  # its reason is the new prompt
    assert "memories/send.md (drifted)" in asked["reason"]
    assert run(ws, "stop", "gemini", {**stop, "stop_hook_active": True}) is None
    ws.moor("reaffirm", "memories/send.md", "--why", "doubling is intended", check=True)
    assert run(ws, "stop", "gemini", stop) is None


def cursor(ws: Workspace, event: str, **fields: Any) -> dict[str, Any]:
    # Cursor's common input (Hooks, *Common schema*) and the event's own.
    return {
        "conversation_id": CURSOR_CONVERSATION,
        "generation_id": "gen-1",
        "model": "m",
        "hook_event_name": event,
        "cursor_version": "1.7.2",
        "workspace_roots": [str(ws.root)],
        "user_email": None,
        **fields,
    }


def test_cursor_install_writes_a_versioned_flat_hooks_file_and_uninstall_keeps_others(
    ws: Workspace,
) -> None:
    workspace(ws)
    theirs = {"command": "./hooks/format.sh"}
    ws.write(".cursor/hooks.json", json.dumps({"version": 1, "hooks": {"afterFileEdit": [theirs]}}))
    ws.moor("hooks", "install", "cursor", check=True)
    hooks = json.loads(ws.read(".cursor/hooks.json"))
    assert hooks["version"] == 1
    assert hooks["hooks"]["afterFileEdit"] == [
        theirs,
        {"command": "moor hooks run post-tool-use --agent cursor"},
    ]
    assert hooks["hooks"]["stop"] == [{"command": "moor hooks run stop --agent cursor"}]
    assert "beforeSubmitPrompt" not in hooks["hooks"]  # it cannot add context: not installed
    out = ws.moor("hooks", "install", "cursor", check=True).out
    assert "nothing to change" in out
    ws.moor("hooks", "uninstall", "cursor", check=True)
    assert json.loads(ws.read(".cursor/hooks.json")) == {
        "version": 1,
        "hooks": {"afterFileEdit": [theirs]},
    }
    # A hooks file that is not JSON is refused, untouched, with a clear message and exit 2.
    ws.write(".cursor/hooks.json", "{not json")
    refused = ws.moor("hooks", "install", "cursor")
    assert refused.code == 2 and ".cursor/hooks.json is not valid JSON" in refused.err
    assert ws.read(".cursor/hooks.json") == "{not json"


def test_cursor_notes_an_edit_silently_and_its_stop_sends_the_stale_memories_as_a_followup(
    ws: Workspace,
) -> None:
    workspace(ws)
    edit = cursor(
        ws,
        "afterFileEdit",
        file_path=str(ws.root / "net/client.py"),
        edits=[{"old_string": "return payload", "new_string": "return payload * 2"}],
    )
    stop = cursor(ws, "stop", status="completed", loop_count=0)
    assert run(ws, "stop", "cursor", stop) is None  # nothing edited yet
    ws.write("net/client.py", CODE.replace("return payload", "return payload * 2"))
    # afterFileEdit has no output in Cursor's schema: nothing is printed, the edit is noted.
    assert run(ws, "post-tool-use", "cursor", edit) is None
    asked = run(ws, "stop", "cursor", stop)
    assert asked is not None and set(asked) == {"followup_message"}
    assert "memories/send.md (drifted)" in asked["followup_message"]
    # Once: after a follow-up (loop_count > 0) it lets the agent stop; an aborted run, or
    # another conversation, is asked nothing.
    assert run(ws, "stop", "cursor", {**stop, "loop_count": 1}) is None
    assert run(ws, "stop", "cursor", {**stop, "status": "aborted"}) is None
    assert run(ws, "stop", "cursor", {**stop, "conversation_id": "another"}) is None
    ws.moor("reaffirm", "memories/send.md", "--why", "doubling is intended", check=True)
    assert run(ws, "stop", "cursor", stop) is None


def test_an_agents_malformed_hook_input_is_silent_and_logged(ws: Workspace) -> None:
    workspace(ws)
    for agent in ("gemini", "cursor"):
        result = subprocess.run(
            [sys.executable, "-P", "-m", "moor", "hooks", "run", "stop", "--agent", agent],
            cwd=ws.root,
            input="[1, 2",
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert ws.read(".moor/hooks.log").count("stop: JSONDecodeError") == 2


def test_every_agent_the_hooks_translate_for_can_be_installed_and_the_other_way_round() -> None:
    from moor.hook_dialects import AGENTS
    from moor_engine.agents.agent_layouts import LAYOUTS

    assert tuple(LAYOUTS) == AGENTS


def test_gemini_and_cursor_hooks_take_the_fast_path_and_are_served_as_answered_alone(
    ws: Workspace,
) -> None:
    workspace(ws)
    read = gemini_tool(ws, "read_file", "net/client.py")
    alone = run(ws, "post-tool-use", "gemini", read)
    try:
        run(ws, "session-start", "gemini", gemini(ws, "SessionStart", source="startup"), SERVED)
        server_pid(ws)
        before = answered(ws) or 0
        assert run(ws, "post-tool-use", "gemini", read, SERVED) == alone is not None
        assert answered(ws) == before + 1
        ws.write("net/client.py", CODE.replace("return payload", "return payload * 2"))
        edit = cursor(ws, "afterFileEdit", file_path=str(ws.root / "net/client.py"), edits=[])
        stop = cursor(ws, "stop", status="completed", loop_count=0)
        for event, payload in (("post-tool-use", edit), ("stop", stop)):
            out, modules = _imported(
                ws.root,
                "hooks",
                "run",
                event,
                "--agent",
                "cursor",
                stdin=json.dumps(payload),
                env=SERVED,
            )
            assert not modules & {"moor.main", "argparse", "moor_engine.session"}, event
        assert answered(ws) == before + 3  # the server answered both
        assert "memories/send.md (drifted)" in json.loads(out)["followup_message"]
    finally:
        ws.moor("hooks", "stop")
        until(lambda: not servers_in(ws.root), "the hook server to stop")
