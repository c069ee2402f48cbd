"""What each kind of tool may do, as MCP tool annotations (hints a client shows or acts on).

A hint left out defaults to the unsafe side in MCP (a tool that is not read-only is taken
to be destructive), so every write says both. Idempotent means what MCP says: the same
call again has no further effect — a repeated write, supersede, forget or restore is
refused and writes nothing, while a repeated reaffirm, edit or checkpoint journals or
saves again.
"""

from __future__ import annotations

from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
# A write whose repetition is refused: what it did stays as it was.
ADDITIVE_ONCE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
# A write that adds again each time it is made (a journal entry, a checkpoint file).
ADDITIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
# Replaces a memory's text: what it said before is not kept by moor (git may have it).
REWRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
# Removes a memory's file (its text stays in this clone's journal; restore writes it again).
REMOVES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
