"""The tools that keep an agent's place: save a checkpoint, resume from the newest
(`moor_engine.memory.checkpoints`, as `moor checkpoint`)."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer
from moor_engine.memory import checkpoints

from moor_mcp.annotations import ADDITIVE, READ_ONLY
from moor_mcp.refusals import engine_refusals
from moor_mcp.results import Checkpoint, ResumeResult


def register(server: MCPServer, root: Path) -> None:
    @server.tool(annotations=ADDITIVE, structured_output=True)
    def checkpoint_save(
        agent: str,
        summary: str,
        next_steps: tuple[str, ...] = (),
        files: tuple[str, ...] = (),
    ) -> Checkpoint:
        """Save a checkpoint of your work under your agent name (a-z 0-9 . _ -): what
        was done and where it stands, the next steps, the files in play. A new file each
        time, never overwritten; checkpoint_resume reads the newest back. Knowledge about
        the code belongs in a memory (memory_write), not here."""
        with engine_refusals(root):
            saved = checkpoints.save(root, agent, summary, next_steps, files)
        return Checkpoint.model_validate(saved)

    @server.tool(annotations=READ_ONLY, structured_output=True)
    def checkpoint_resume(agent: str, limit: int = 1) -> ResumeResult:
        """Resume from your newest checkpoints (saved by checkpoint_save), newest first:
        an empty list when the agent has none. Their text is an agent's note: verify it
        against the code and memories_about."""
        with engine_refusals(root):
            resumed = checkpoints.resume(root, agent, limit)
        return ResumeResult.model_validate(resumed)
