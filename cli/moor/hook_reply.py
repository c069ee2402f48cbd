"""What a hook answers, in whichever process answers it — its own (`hook_commands.run_hook`)
or the workspace's hook server (`hook_server`) — and where a silent hook's failure is
logged. A module of its own so that neither of those imports the other for it."""

from __future__ import annotations

import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # not `typing`: every hook imports this module first
    from moor_engine.session import Session

LOG = ".moor/hooks.log"
_LOG_KEEP = 200  # lines: the log is for a person looking into a silent hook, not history


def hook_answer(event: str, where: Path, payload: dict[str, object]) -> str:
    prompt = payload.get("prompt")
    kept = None
    if event == "prompt":
        if not isinstance(prompt, str):
            raise ValueError('the hook input has no "prompt" text')
        # The engine's last answer, if nothing it read has moved: no engine import at all.
        from moor_engine.agents.hook_answers import lookup

        cached, kept = lookup(where, prompt)
        if cached is not None:
            return cached[0]
    if event == "stop" and payload.get("stop_hook_active") is True:
        return ""  # it was asked once and went on: asking again would never let it stop
    from moor_engine.agents import agent_hooks
    from moor_engine.session import Session

    with Session.open(where) as session:
        if event in TOOL_EVENTS:
            return _edit_loop(event, session, payload)
        if event == "session-start" or not isinstance(prompt, str):
            return agent_hooks.session_start(session, payload).context
        return agent_hooks.prompt(session, prompt, kept).context


TOOL_EVENTS = ("pre-tool-use", "post-tool-use", "stop")


def _edit_loop(event: str, session: Session, payload: dict[str, object]) -> str:
    from moor_engine.agents import edit_loop

    if event == "pre-tool-use":
        return edit_loop.before_tool(session, payload)
    if event == "post-tool-use":
        return edit_loop.stale_text(
            edit_loop.after_edit(session, payload),
            "moor: this edit left memories about the code it changed not current:",
        )
    return edit_loop.stale_text(
        edit_loop.unrepaired(session, payload),
        "moor: before you stop: your edits this session left these memories not current, "
        "and they are not repaired yet:",
    )


def log_line(where: Path, line: str) -> None:
    """One line in `.moor/hooks.log` of the workspace (if there is one); never raises."""
    try:
        from moor_engine.workspace.workspace import find_root
        from moor_store.inside import read_inside, write_inside

        root = find_root(where.resolve())  # not Workspace.open: its config may be the failure
        try:
            old = read_inside(root, LOG).decode("utf-8", "replace").splitlines()
        except FileNotFoundError:
            old = []
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        lines = [*old[-(_LOG_KEEP - 1) :], f"{stamp} {' '.join(line.split())}"]
        write_inside(root, LOG, ("\n".join(lines) + "\n").encode("utf-8"))
    except BaseException:  # nowhere to log to (no workspace): silence is the contract
        return
