"""`moor hooks install|uninstall AGENT` and `moor hooks run EVENT [--agent AGENT]`.

A hook run reads the agent's JSON on stdin — Claude Code's by default (`cwd`, `prompt`,
`tool_input`, ...), Gemini CLI's or Cursor's with `--agent`, translated by `hook_dialects`
— and prints the answer in that agent's form (Claude Code's
`hookSpecificOutput.additionalContext`; a Stop hook with something to ask prints
`decision: block` and the question as its `reason`). It is
fail-silent: whatever goes wrong, it exits 0 with nothing on stdout and one line in
`.moor/hooks.log`, so a broken workspace never blocks a prompt. The engine is imported
only once the run has begun, inside that guard. What is shown is decided by
`moor_engine.agents.agent_hooks` and `edit_loop`.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

from moor.hook_dialects import AGENTS, CLAUDE_EVENTS, incoming, outgoing
from moor.hook_reply import hook_answer, log_line

# Not `typing.TYPE_CHECKING`: every prompt hook imports this module, and `typing` alone costs
# a few milliseconds of it (mypy reads any name TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

EXIT_OK, EXIT_USAGE = 0, 2
# The hooks the workspace's hook server answers (a session start starts it).
_SERVED = ("prompt", "pre-tool-use", "post-tool-use", "stop")


def add_parsers(commands: Any) -> None:
    # Imported here: a prompt hook imports this module, never argparse.
    from moor.arguments import add_format

    hooks = commands.add_parser(
        "hooks", help="hooks for Claude Code, Gemini CLI and Cursor: install, uninstall, run"
    )
    actions = hooks.add_subparsers(dest="hooks_action", required=True, metavar="ACTION")
    for name, text in (("install", "write"), ("uninstall", "remove")):
        action = actions.add_parser(
            name,
            help=f"{text} moor's hooks in the agent's settings (.claude/settings.json, "
            ".gemini/settings.json, .cursor/hooks.json)",
        )
        action.add_argument("agent", choices=AGENTS)
        add_format(action)
    run = actions.add_parser("run", help="run a hook (the agent calls this, JSON on stdin)")
    run.add_argument("event", choices=tuple(CLAUDE_EVENTS))
    run.add_argument(
        "--agent", choices=AGENTS, default="claude", help="whose hook JSON (default: claude)"
    )
    add_format(
        actions.add_parser(
            "status", help="whether this workspace's hook server runs, and since when"
        )
    )
    add_format(actions.add_parser("stop", help="stop this workspace's hook server"))
    actions.add_parser("serve", help="serve the hooks of this workspace (a hook starts it)")


def cmd_hooks(args: argparse.Namespace, start: Path) -> int:
    if args.hooks_action == "run":
        return run_hook(args.event, start, args.agent)
    if args.hooks_action == "serve":
        from moor.hook_server import main_serve

        return main_serve(start)
    if args.hooks_action in ("status", "stop"):
        return _server(args.hooks_action, start, args.format)
    return _settings(args.hooks_action, args.agent, start, args.format)


def _server(action: str, start: Path, output: str) -> int:
    from moor_engine.workspace.workspace import Workspace

    from moor import hook_client

    root = Workspace.open(start).root
    account = hook_client.status(root) if action == "status" else hook_client.stop(root)
    if output == "json":
        keys = ("pid", "since", "answered")
        served = {key: account.get(key) for key in keys} if account is not None else None
        print(json.dumps({"root": str(root), "running": account is not None, "server": served}))
        return EXIT_OK
    if account is None:
        print(f"{root}: no hook server runs")
        return EXIT_OK
    verb = "stopped" if action == "stop" else "runs"
    print(
        f"{root}: the hook server {verb}: pid {account.get('pid')}, since "
        f"{account.get('since')}, {account.get('answered')} hook(s) answered"
    )
    return EXIT_OK


def _settings(action: str, agent: str, start: Path, output: str) -> int:
    from moor_engine.agents import hook_settings
    from moor_engine.agents.agent_layouts import LAYOUTS
    from moor_engine.workspace.workspace import Workspace

    root = Workspace.open(start).root
    layout = LAYOUTS[agent]
    try:
        if action == "install":
            change = hook_settings.install(layout, root)
        else:
            change = hook_settings.uninstall(layout, root)
            from moor import hook_client

            hook_client.stop(root)  # nothing is left serving hooks that are gone
    except hook_settings.SettingsError as error:
        print(f"moor: {error}", file=sys.stderr)
        return EXIT_USAGE
    events = change.added or change.removed
    if output == "json":
        answer = {
            "path": change.path,
            "changed": change.changed,
            "added": list(change.added),
            "removed": list(change.removed),
        }
        print(json.dumps(answer, ensure_ascii=False))
        return EXIT_OK
    if not change.changed:
        print(f"{change.path}: nothing to change (moor's hooks are already {action}ed)")
    else:
        verb = "added to" if action == "install" else "removed from"
        print(f"{change.path}: moor's {', '.join(events)} hooks {verb} it")
    if action == "install" and layout.notice:
        print(f"note: {layout.notice}")
    return EXIT_OK


def run_hook(event: str, start: Path, agent: str = "claude") -> int:
    """Answer one hook of `agent`: a prompt by the workspace's hook server when one answers
    (`hook_server`), else in this process; a hook answered here then starts the server
    for the hooks after it (`hook_client.start`, in the background)."""
    where = start
    unserved = False
    try:
        from moor import hook_client

        translated = incoming(agent, event, _payload(sys.stdin.read()))
        if translated is None:
            return EXIT_OK  # a tool or an event moor does not answer for this agent
        asked, payload = translated
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and cwd and Path(cwd).is_dir():
            where = Path(cwd)
        context = None
        wait = hook_client.hook_wait()
        if asked in _SERVED and hook_client.enabled():
            context = hook_client.served(where, asked, payload, wait)
        if context is None:
            unserved = True
            context = hook_answer(asked, where, payload)
    except BaseException as error:  # fail-silent: a hook must never block the agent
        log_line(where, f"{event}: {type(error).__name__}: {error}")
        return EXIT_OK  # nothing to serve here, so no server is started either
    output = outgoing(agent, event, context)
    if output is not None:
        with contextlib.suppress(OSError):  # the agent stopped reading: nothing to tell it
            sys.stdout.write(json.dumps(output) + "\n")
            sys.stdout.flush()
    if unserved:
        hook_client.start(where, wait)
    return EXIT_OK


def _payload(text: str) -> dict[str, object]:
    if not text.strip():
        return {}
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("the hook input is not a JSON object")
    return value
