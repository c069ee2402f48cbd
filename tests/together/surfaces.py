"""The three surfaces that write, each a real process driven as its users drive it: an editor
through the language server's protocol, an agent through the MCP SDK's client, people
through the `moor` command. Each driver gets everything ready (processes started and
initialised, the editor's code actions fetched), says so, waits for the one start signal,
then runs its actions at once and records when each started and ended (`time.monotonic`:
CLOCK_MONOTONIC, one clock for every process on the machine)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.lsp.raw import RawServer

WAIT_S = 60.0  # each answer comes within this, even on a loaded 2-core box


@dataclass
class Action:
    """One write, as asked (`surface`, `what`, `memory`, `reason`) and as it went."""

    surface: str  # "lsp" | "mcp" | "cli"
    what: str  # reaffirm, follow, write, supersede, add, forget
    memory: str  # the memory it writes (a new one: the code it is about, until written)
    reason: str | None = None
    about: str | None = None  # a new memory's reference
    by: str | None = None  # supersede: the memory that replaces `memory`
    start: float = 0.0
    end: float = 0.0
    ok: bool = False
    answer: str = ""  # what the surface answered, for a failure's message
    written: str | None = None  # a new memory's path, as the surface reported it


@dataclass
class Gate:
    """All ready, then one start signal: every driver sets its `ready` event and waits on
    `go`; `release` sets `go` once every driver is ready."""

    names: tuple[str, ...]
    ready: dict[str, asyncio.Event] = field(default_factory=dict)
    go: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.ready = {name: asyncio.Event() for name in self.names}

    async def arrive(self, name: str) -> None:
        self.ready[name].set()
        await self.go.wait()

    async def release(self) -> float:
        await asyncio.wait_for(
            asyncio.gather(*(event.wait() for event in self.ready.values())), WAIT_S
        )
        self.go.set()
        return time.monotonic()


async def timed(action: Action, call: Awaitable[None]) -> None:
    """Await `call` (made, not yet started), recording when it started and ended."""
    action.start = time.monotonic()
    try:
        await call
    finally:
        action.end = time.monotonic()


# --- the editor ---------------------------------------------------------------------------


# An editor that takes code actions as such (the server would send bare commands otherwise).
# An editor that can be asked (`window.showMessage`, as VS Code and Neovim): one Reaffirm
# action, whose reason the editor supplies; a client that cannot be asked gets one action
# per prepared reason instead.
CAPABILITIES = {
    "textDocument": {
        "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}
    },
    "window": {"showMessage": {"messageActionItem": {"additionalPropertiesSupport": False}}},
}


async def editor(root: Path, actions: list[Action], gate: Gate) -> str:
    """`moor lsp` on `root`: each memory's diagnostic, its code action (Reaffirm / Follow),
    then every command at once. Returns the server's log once it has exited."""
    server = RawServer(root, command=[sys.executable, "-P", "-m", "moor", "lsp"])
    try:
        await server.start(CAPABILITIES)
        commands = [await _editor_command(server, root, action) for action in actions]
        await gate.arrive("lsp")
        await asyncio.gather(
            *(
                timed(action, _execute(server, action, command))
                for action, command in zip(actions, commands, strict=True)
            )
        )
        assert await server.exit(shutdown=True) == 0
        return await server.log()
    finally:
        await server.kill()


async def _editor_command(server: RawServer, root: Path, action: Action) -> dict[str, Any]:
    code = {"reaffirm": "drifted", "follow": "moved"}[action.what]
    uri = (root / action.memory).as_uri()
    diagnostic = await _published(server, uri, code)
    offered = await server.result(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": diagnostic["range"],
            "context": {"diagnostics": [diagnostic]},
        },
    )
    title = {"reaffirm": "Reaffirm", "follow": "Follow the move"}[action.what]
    chosen = [a for a in offered or [] if a["title"].startswith(title)]
    assert len(chosen) == 1, (action.memory, [a["title"] for a in offered or []])
    command: dict[str, Any] = chosen[0]["command"]
    if action.what == "reaffirm":  # the reason an editor's input box supplies
        command = {**command, "arguments": [*command["arguments"], action.reason]}
    return command


async def _published(server: RawServer, uri: str, code: str) -> dict[str, Any]:
    """The diagnostic with `code` the server published for `uri`, once it has."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while True:
        for message in reversed(server.notifications):
            params = message.get("params") or {}
            if message["method"] == "textDocument/publishDiagnostics" and params["uri"] == uri:
                found = [d for d in params["diagnostics"] if d.get("code") == code]
                if found:
                    return dict(found[0])
                break  # the latest publication for this memory lacks it: wait for the next
        if loop.time() > deadline:
            raise AssertionError(f"{uri}: the server never published a {code} diagnostic")
        await asyncio.sleep(0.05)


async def _execute(server: RawServer, action: Action, command: dict[str, Any]) -> None:
    answer = await server.request(
        "workspace/executeCommand",
        {"command": command["command"], "arguments": command["arguments"]},
        timeout=WAIT_S,
    )
    action.answer = json.dumps(answer)
    result = answer.get("result")
    action.ok = isinstance(result, dict) and bool(result["done"]) and not result["refused"]


# --- the agent ----------------------------------------------------------------------------


async def agent(root: Path, actions: list[Action], gate: Gate) -> None:
    """`moor mcp` on `root` through the SDK's client: one session, every tool call at once."""
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "moor", "mcp"], cwd=root, env={**os.environ}
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await gate.arrive("mcp")
        await asyncio.gather(*(timed(action, _call(session, action)) for action in actions))


def _tool_call(action: Action) -> tuple[str, dict[str, Any]]:
    if action.what == "reaffirm":
        return "memory_reaffirm", {"path": action.memory, "why": action.reason}
    if action.what == "supersede":
        return "memory_supersede", {"old": action.memory, "by": action.by, "why": action.reason}
    assert action.what == "write"
    return "memory_write", {"text": action.reason, "about": [action.about]}


async def _call(session: ClientSession, action: Action) -> None:
    tool, arguments = _tool_call(action)
    result = await session.call_tool(tool, arguments)
    content = result.structured_content or {}
    action.answer = json.dumps({"error": result.is_error, "content": content})
    action.ok = not result.is_error and bool(content.get("ok"))
    action.written = content.get("path")


# --- people at terminals ------------------------------------------------------------------

# The real `moor` entry point (`moor.main.main`, what `python -m moor` runs) with its own
# arguments, started before the signal so that every process is past its imports and at
# the gate when it comes: it says "ready", waits for a line on stdin, then runs and writes
# when it started and ended, and its exit status, to the file named first.
GATED = """
import json, sys, time
from moor.main import main
timing, args = sys.argv[1], sys.argv[2:]
print("ready", flush=True)
sys.stdin.readline()
start = time.monotonic()
try:
    code = main(args)
except SystemExit as exit:
    code = exit.code if isinstance(exit.code, int) else 1
end = time.monotonic()
sys.stdout.flush()
with open(timing, "w", encoding="utf-8") as f:
    json.dump({"start": start, "end": end, "code": code}, f)
sys.exit(code)
"""


def _arguments(action: Action) -> list[str]:
    if action.what == "add":
        assert action.reason is not None and action.about is not None
        return ["add", action.reason, "--about", action.about, "--format", "json"]
    assert action.what in ("reaffirm", "forget") and action.reason is not None
    return [action.what, action.memory, "--why", action.reason]


async def terminals(root: Path, timings: Path, actions: list[Action], gate: Gate) -> None:
    """One `moor` process per action, all started, all ready, then all let go at once."""
    processes = []
    for index, action in enumerate(actions):
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            GATED,
            str(timings / f"cli-{index}.json"),
            *_arguments(action),
            cwd=root,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
        )
        processes.append(process)
    try:
        for process in processes:
            assert process.stdout is not None
            line = await asyncio.wait_for(process.stdout.readline(), WAIT_S)
            assert line == b"ready\n", line
        await gate.arrive("cli")
        for process in processes:
            assert process.stdin is not None
            process.stdin.write(b"go\n")
        await asyncio.gather(*(p.stdin.drain() for p in processes if p.stdin is not None))
        answers = await asyncio.wait_for(
            asyncio.gather(*(p.communicate() for p in processes)), WAIT_S
        )
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
                await process.wait()
    for index, (action, (out, err)) in enumerate(zip(actions, answers, strict=True)):
        timing = json.loads((timings / f"cli-{index}.json").read_text(encoding="utf-8"))
        action.start, action.end = timing["start"], timing["end"]
        text = out.decode("utf-8", "replace")
        action.answer = f"exit {timing['code']}\n{text}\n{err.decode('utf-8', 'replace')}"
        action.ok = timing["code"] == 0
        if action.what == "add" and action.ok:
            action.written = json.loads(text)["path"]
