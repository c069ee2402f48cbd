"""The `moor` command's entry point: Claude Code's prompt hook, which runs on every prompt,
goes straight to `hook_commands` (which answers from the engine's kept answer when nothing
moved: `moor_engine.agents.hook_answers`); everything else is `moor.main`, whose imports (the
engine, argparse's whole tree of commands) cost ~150 ms."""

from __future__ import annotations

import sys
from pathlib import Path

# Exactly what `moor hooks install claude` writes (`claude_settings`): anything else,
# `-C` or `--help` included, is parsed by the full command line.
_PROMPT_HOOK = ["hooks", "run", "prompt"]


def main() -> int:
    if sys.argv[1:] == _PROMPT_HOOK:
        from moor.hook_commands import run_hook

        return run_hook("prompt", Path.cwd())
    from moor.main import main as full

    return full()
