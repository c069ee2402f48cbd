"""Which hooks moor installs for each agent it serves, and where (`hook_settings` merges
them). What each agent's hooks can carry was read from its own documentation (listed in
docs/agents.md, *Other agents*); an event that cannot carry what moor says is not installed.

* **Claude Code** (`claude_settings`): every event the edit loop uses.
* **Gemini CLI** (`.gemini/settings.json`, timeouts in milliseconds): SessionStart and
  BeforeAgent add context as Claude Code's do; BeforeTool cannot add context, so the
  memories about a file come with AfterTool on `read_file` (appended to what the agent read,
  before it edits), and the drift an edit made with AfterTool on `write_file|replace`;
  AfterAgent asks before the agent stops (`decision: deny` sends `reason` as a new prompt).
* **Cursor** (`.cursor/hooks.json`): afterFileEdit has no output, so it only notes what the
  edit left stale; `stop` asks about it with `followup_message`. beforeReadFile answers only
  a permission and beforeSubmitPrompt cannot add context: neither is installed.
"""

from __future__ import annotations

from moor_engine.agents import claude_settings
from moor_engine.agents.hook_settings import Layout

GEMINI = Layout(
    "gemini",
    ".gemini/settings.json",
    {
        "SessionStart": "moor hooks run session-start --agent gemini",
        "BeforeAgent": "moor hooks run prompt --agent gemini",
        "AfterTool": "moor hooks run post-tool-use --agent gemini",
        "AfterAgent": "moor hooks run stop --agent gemini",
    },
    {"AfterTool": "read_file|write_file|replace"},
    entry={"timeout": 10000},  # milliseconds
    # A person's switch, in their own settings: moor does not turn it on for them.
    notice="Gemini CLI runs hooks only while its hooks system is on "
    "(/settings, Advanced: Enable Hooks System; `tools.enableHooks`)",
)
CURSOR = Layout(
    "cursor",
    ".cursor/hooks.json",
    {
        "afterFileEdit": "moor hooks run post-tool-use --agent cursor",
        "stop": "moor hooks run stop --agent cursor",
    },
    grouped=False,
    top={"version": 1},
)
LAYOUTS = {"claude": claude_settings.LAYOUT, "gemini": GEMINI, "cursor": CURSOR}
AGENTS = tuple(LAYOUTS)
