"""moor's hooks in Claude Code's `.claude/settings.json` (merged by `hook_settings`).

Claude Code reads `hooks.<Event>` as a list of matcher groups, each `{"matcher": ...,
"hooks": [{"type": "command", "command": ...}]}`; moor adds one group per event it serves.
"""

from __future__ import annotations

from pathlib import Path

from moor_engine.agents.hook_settings import (
    Layout,
    SettingsChange,
    SettingsError,
)
from moor_engine.agents.hook_settings import install as _install
from moor_engine.agents.hook_settings import installed as _installed
from moor_engine.agents.hook_settings import uninstall as _uninstall
from moor_engine.agents.hook_settings import uninstalled as _uninstalled

__all__ = ["HOOKS", "LAYOUT", "MATCHERS", "SETTINGS", "SettingsChange", "SettingsError"]

SETTINGS = ".claude/settings.json"
# Event -> the command Claude Code runs for it.
HOOKS = {
    "SessionStart": "moor hooks run session-start",
    "UserPromptSubmit": "moor hooks run prompt",
    "PreToolUse": "moor hooks run pre-tool-use",
    "PostToolUse": "moor hooks run post-tool-use",
    "Stop": "moor hooks run stop",
}
# The tools whose calls a tool hook is run for (Claude Code's `matcher`, a pattern of tool
# names): the file tools, whose `tool_input.file_path` names the file (`edit_loop`).
MATCHERS = {
    "PreToolUse": "Edit|Write|MultiEdit|NotebookEdit|Read",
    "PostToolUse": "Edit|Write|MultiEdit|NotebookEdit",
}
LAYOUT = Layout("claude", SETTINGS, HOOKS, MATCHERS, entry={"timeout": 10})  # seconds


def installed(text: str | None) -> tuple[str, tuple[str, ...]]:
    return _installed(LAYOUT, text)


def uninstalled(text: str | None) -> tuple[str | None, tuple[str, ...]]:
    return _uninstalled(LAYOUT, text)


def install(root: Path) -> SettingsChange:
    return _install(LAYOUT, root)


def uninstall(root: Path) -> SettingsChange:
    return _uninstall(LAYOUT, root)
