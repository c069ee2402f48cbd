"""Hover on an `about:` reference: its trust state, where moved code is now (the engine's
`moved_to`), its journal, questions and diff since bound."""

from __future__ import annotations

from datetime import UTC, datetime

from lsprotocol import types
from moor_engine.grounding.trust import AnchorReport
from moor_store.journal import Entry

from moor_lsp import engine
from moor_lsp.documents import ReferenceAt, reference_at
from moor_lsp.features import Feature
from moor_lsp.features.code_hover import code_hover
from moor_lsp.features.definition import anchor_at, locate, moved_ref
from moor_lsp.features.diagnostics import to_range

HISTORY_LIMIT = 20
DIFF_LINE_LIMIT = 200


def local_time(at: str) -> str:
    """A journal time (UTC, ISO 8601) in the server's local time with its zone shown:
    `2026-12-02 03:14 CET` (a time that cannot be read is shown as it is)."""
    try:
        moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return at
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    local = moment.astimezone()
    return f"{local:%Y-%m-%d %H:%M} {local.tzname() or local.strftime('%z')}"


def describe_entry(entry: Entry) -> str:
    """One journal entry as a line a person reads."""
    when = local_time(entry.at)
    data = dict(entry.data or {})
    if entry.kind == "open":
        what = "bound" if entry.code == "bind" else "first seen in this clone (bound in moor.lock)"
    elif entry.kind == "transition":
        what = f"**{entry.code or 'changed'}**"
        axes = data.get("axes")
        if isinstance(axes, list) and axes:
            what += f" ({', '.join(str(a) for a in axes)})"
        if data.get("moved_to"):
            what += f" → `{data['moved_to']}`"
    elif entry.kind == "still":
        what = "checked: the file changed, this code did not"
    elif entry.kind == "attempt":
        what = f"could not observe: `{entry.code}`"
        if entry.detail:
            what += f" — {entry.detail}"
    elif entry.kind == "revise" and entry.code == "reaffirm":
        what = f"**reaffirmed**: “{entry.reason}”"
    elif entry.kind == "revise" and entry.code == "follow":
        what = f"followed `{data.get('from')}` → `{data.get('to')}`"
    elif entry.kind == "revise" and entry.code == "reprobe":
        what = "re-baselined (moor's normaliser changed)"
    elif entry.kind == "revise" and entry.code == "unbind":
        what = "unbound"
    else:
        what = f"{entry.kind} {entry.code or ''}".strip()
        if entry.reason:
            what += f": “{entry.reason}”"
    return f"{when} — {what}"


def hover_text(
    at: ReferenceAt,
    anchor: AnchorReport | None,
    history: engine.History | None,
    now: str | None = None,
) -> str:
    """`now`: where the engine says the code is now (`moved_to`), as a link to it."""
    ref = at.canonical or at.entry.raw
    parts: list[str] = []
    if anchor is None:
        parts.append(f"**moor** `{ref}` — not checked yet (save the memory to check it)")
    else:
        parts.append(f"**moor** `{ref}` — **{anchor.state.value}**")
        if now is not None:
            parts.append(f"**Now at** {now}")
        if anchor.detail:
            parts.append(anchor.detail)
    if history is not None:
        entries = list(history.entries)
        if entries:
            shown = entries[-HISTORY_LIMIT:]
            lines = [f"- {describe_entry(e)}" for e in shown]
            if len(entries) > len(shown):
                lines.insert(0, f"- … {len(entries) - len(shown)} earlier entries (`moor log`)")
            parts.append("**History**\n\n" + "\n".join(lines))
        else:
            parts.append("**History**\n\nnothing journalled yet")
    if at.memory.questions:
        parts.append(
            "**When this changes, ask**\n\n" + "\n".join(f"- {q}" for q in at.memory.questions)
        )
    if history is not None and history.diff is not None:
        diff = history.diff
        if diff.diff:
            lines = diff.diff.splitlines()
            text = "\n".join(lines[:DIFF_LINE_LIMIT])
            if len(lines) > DIFF_LINE_LIMIT:
                text += f"\n… {len(lines) - DIFF_LINE_LIMIT} more lines (`moor diff`)"
            fence = "````" if "```" in text else "```"
            parts.append(f"**Since bound**\n\n{fence}diff\n{text}\n{fence}")
        elif diff.note:
            parts.append(f"**Since bound**: {diff.note}")
    return "\n\n".join(parts)


class Hover(Feature):
    name = "hover"

    def register(self) -> None:
        self.handle(types.TEXT_DOCUMENT_HOVER, self.hover, None)

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        folder = self.server.folder_for(params.text_document.uri)
        if folder is None:
            return None
        await folder.ready()
        at = reference_at(folder, params.text_document.uri, params.position)
        snapshot = folder.snapshot
        root = folder.root
        if at is None and snapshot is not None:
            return await code_hover(self.server, params)
        if at is None or snapshot is None:
            return None
        anchor = anchor_at(snapshot, at)
        history = await self.server.in_reader(
            engine.history, root, at.memory_path, at.canonical, at.entry.raw, folder.buffers_now()
        )
        now = None
        moved = moved_ref(anchor)
        if moved is not None:
            targets = await self.server.in_reader(locate, root, moved)
            now = f"`{anchor.moved_to}`" if anchor is not None else None
            if targets:
                line = targets[0].head.start_line + 1
                uri = folder.uri(targets[0].path)
                now = f"[`{moved.canonical()}`]({uri}#L{line}) (line {line})"
        formats = self.server.capability("text_document.hover.content_format") or []
        kind = (
            types.MarkupKind.Markdown
            if not formats or types.MarkupKind.Markdown in formats
            else types.MarkupKind.PlainText
        )
        return types.Hover(
            contents=types.MarkupContent(kind=kind, value=hover_text(at, anchor, history, now)),
            range=to_range(at.span, self.server.position_encoding),
        )
