"""The `moor` command's entry point. Two command lines are answered before `moor.main` and
the engine are imported (their imports, the engine and argparse's whole tree of commands,
cost ~150 ms, 5 times the interpreter's own start-up): `moor --version`, which imports only
`distribution` of the engine, and Claude Code's hooks that run on every prompt and every
tool call (prompt, pre-tool-use, post-tool-use, stop; Gemini CLI's and Cursor's too), which
go straight to `hook_commands`
(which asks the workspace's hook server, or answers from the engine's kept answer when
nothing moved: `moor_engine.agents.hook_answers`). `moor recall` is parsed by its own
arguments alone (`recall_commands.plain_recall`) and run as the full command line runs it
(`guard`).

`run` is the process's entry (the console script, `python -m moor`): after a one-shot
answer — a hook, a recall — it flushes the output and ends the process without the
interpreter's teardown, which would free and collect, one by one, every object the engine
made, ~4 % of a first-mention hook's instructions at 1,000 memories. `main` alone (the
tests' in-process runs) never ends the process."""

from __future__ import annotations

import os
import sys

# Exactly what `moor hooks install AGENT` writes (`agent_layouts`): anything else,
# `-C` or `--help` included, is parsed by the full command line.
_FAST = ("prompt", "pre-tool-use", "post-tool-use", "stop")
_HOOKS: dict[tuple[str, ...], str] = {("hooks", "run", event): "claude" for event in _FAST} | {
    ("hooks", "run", event, "--agent", agent): agent
    for event in _FAST
    for agent in ("gemini", "cursor")
}
# Exactly `moor --version`; with anything else argparse decides (`--version` ends the
# parse where it stands, so `moor --version check` prints it too: the full parser does).
_VERSION = ["--version"]
# `moor recall …` (agents run it one-shot, once per question): its own arguments parsed
# alone; whatever they cannot say alike (help, a mistake) goes to the full command line.
_RECALL = ["recall"]


def main() -> int:
    if sys.argv[1:] == _VERSION:
        from moor_engine.workspace.distribution import version

        print(f"moor {version()}")
        return 0
    if tuple(sys.argv[1:]) in _HOOKS:
        from pathlib import Path

        from moor.one_shot import collecting_less

        with collecting_less():  # a short process: its imports are not garbage
            from moor.hook_commands import run_hook

            return run_hook(sys.argv[3], Path.cwd(), _HOOKS[tuple(sys.argv[1:])])
    if sys.argv[1:2] == _RECALL:
        from moor.one_shot import collecting_less

        with collecting_less():
            from moor.guard import run_guarded
            from moor.recall_commands import cmd_recall, plain_recall

            args = plain_recall(sys.argv[2:])
            if args is not None:
                return run_guarded(cmd_recall, args)
    from moor.main import main as full

    return full()


def run() -> None:
    """The `moor` process: `main`, and its exit code; after a one-shot answer, without the
    interpreter's teardown (this module's docstring)."""
    code = main()
    if tuple(sys.argv[1:]) in _HOOKS or sys.argv[1:2] == _RECALL:
        _end_now(code)
    sys.exit(code)


def _end_now(code: int) -> None:
    """End the process with `code` once its output is written; when writing it fails (a
    closed pipe), the interpreter's own exit reports it as it always has."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)
