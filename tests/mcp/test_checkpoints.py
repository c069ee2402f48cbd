"""`checkpoint_save` and `checkpoint_resume` through the SDK's client over stdio, against the
real `moor mcp` process: the files they keep, newest first, and refusals as tool errors."""

from __future__ import annotations

import json
from typing import Any

from mcp.client.session import ClientSession
from mcp.types import CallToolResult

from tests.conftest import Workspace
from tests.mcp.conftest import error_text, run, structured


def test_checkpoints_saved_over_mcp_resume_newest_first_there_and_in_the_cli(
    ws: Workspace,
) -> None:
    async def use(session: ClientSession) -> tuple[Any, Any, Any, Any]:
        fresh = structured(await session.call_tool("checkpoint_resume", {"agent": "agent-7"}))
        first = structured(
            await session.call_tool(
                "checkpoint_save",
                {
                    "agent": "agent-7",
                    "summary": "Mapped the retry code",
                    "next_steps": ["write the memory about send"],
                    "files": ["net/client.py"],
                },
            )
        )
        second = structured(
            await session.call_tool("checkpoint_save", {"agent": "agent-7", "summary": "Wrote it"})
        )
        resumed = structured(
            await session.call_tool("checkpoint_resume", {"agent": "agent-7", "limit": 5})
        )
        return fresh, first, second, resumed

    fresh, first, second, resumed = run(ws.root, use)
    assert fresh["checkpoints"] == [] and fresh["total"] == 0
    assert first["path"] != second["path"]  # a new file each time, never overwritten
    for saved in (first, second):
        on_disk = json.loads((ws.root / saved["path"]).read_text(encoding="utf-8"))
        assert on_disk["summary"] == saved["summary"] and on_disk["agent"] == "agent-7"
        assert saved["path"].startswith(".moor/checkpoints/agent-7/")
    assert [c["summary"] for c in resumed["checkpoints"]] == ["Wrote it", "Mapped the retry code"]
    assert resumed["checkpoints"][1]["next_steps"] == ["write the memory about send"]
    assert resumed["checkpoints"][1]["files"] == ["net/client.py"] and resumed["total"] == 2
    cli = ws.moor("checkpoint", "resume", "--agent", "agent-7", "--format", "json").json()
    assert [c["id"] for c in cli["checkpoints"]] == [second["id"]]


def test_a_bad_agent_name_or_limit_is_a_tool_error_and_writes_nothing(ws: Workspace) -> None:
    async def use(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("checkpoint_save", {"agent": "../up", "summary": "x"}),
            await session.call_tool("checkpoint_save", {"agent": "a", "summary": " "}),
            await session.call_tool(
                "checkpoint_save", {"agent": "a", "summary": "x", "files": ["/etc/passwd"]}
            ),
            await session.call_tool("checkpoint_resume", {"agent": "a", "limit": 0}),
            await session.call_tool("checkpoint_resume", {"agent": "a b"}),
            await session.call_tool("checkpoint_save", {"agent": "a", "summary": "fine"}),
        ]

    bad_name, empty, absolute, zero, spaced, control = run(ws.root, use)
    assert "agent '../up' is not an agent name" in error_text(bad_name)
    assert "needs a summary" in error_text(empty)
    assert "/etc/passwd" in error_text(absolute)
    assert "limit 0: between 1 and 100" in error_text(zero)
    assert "agent 'a b' is not an agent name" in error_text(spaced)
    assert structured(control)["agent"] == "a"  # the control: a good save lands
    folders = sorted(p.name for p in (ws.root / ".moor" / "checkpoints").iterdir())
    assert folders == ["a"] and len(list((ws.root / ".moor/checkpoints/a").iterdir())) == 1
