"""Hover on code lists the memories about it (issue 11.11).

Hovering the first line of a definition in a code file (not a memory) shows the memories
bound to it, to what encloses it and to what it holds, closest first, each with its trust
state and its first line (its title). The engine decides which and how they stand
(`moor_engine.grounding.about`, as `moor about PATH:LINE`); this module only renders. It is fast
because `about` checks only the memories about that one file and records nothing (no full
check per hover), in a session of its own off the event loop
(memories/lsp-hover-on-code-lists-memories.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from moor_engine.grounding.about import AboutResult

from moor_lsp import engine

if TYPE_CHECKING:
    from moor_lsp.server import MoorLanguageServer


def code_hover_text(result: AboutResult, uri_of: dict[str, str]) -> str:
    lines = [
        f"**moor**: {len(result.items)} memory about this code"
        if len(result.items) == 1
        else f"**moor**: {len(result.items)} memories about this code",
        "",
    ]
    for item in result.items:
        link = f"[{item.path}]({uri_of[item.path]})"
        owner = f" — agent `{item.agent}`" if item.agent is not None else ""
        lines.append(f"- `{item.state.value}` {link} ({item.relation}): {item.title}{owner}")
        for other in item.related.links:
            arrow = "→" if other.direction == "to" else "←"
            missing = " (no such memory)" if not other.exists else ""
            lines.append(f"  - {arrow} {other.relation} `{other.path}`{missing}")
        if item.related.cobound:
            shown = ", ".join(f"`{path}`" for path in item.related.cobound)
            lines.append(f"  - cobound: {shown}")
    return "\n".join(lines)


async def code_hover(server: MoorLanguageServer, params: types.HoverParams) -> types.Hover | None:
    """The hover for a position in a code file, or None (no definition starts on that
    line, or no live memory is about it)."""
    folder = server.folder_for(params.text_document.uri)
    rel = folder.relative(params.text_document.uri) if folder is not None else None
    if folder is None or rel is None or rel.endswith(".md"):
        return None
    line = params.position.line + 1
    try:
        result = await server.in_reader(
            engine.about_line, folder.root, rel, line, folder.buffers_now()
        )
    except engine.EngineProblem:
        return None
    if result is None or not result.items or result.target.start_line != line:
        return None
    text = code_hover_text(result, {item.path: folder.uri(item.path) for item in result.items})
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))
