"""Hover on an `about:` reference: its trust state, where moved code is now (the engine's
`moved_to`), the last reason a person gave, the diff since bound, its journal (a run of
"checked: the file changed, this code did not" as one line), `moor log` for all of it, and
the memory's questions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from lsprotocol import types
from moor_engine.grounding.links import Related, cobound_with, own_links
from moor_engine.grounding.trust import AnchorReport
from moor_store.journal import Entry

from moor_lsp import engine
from moor_lsp.documents import ReferenceAt, reference_at
from moor_lsp.engine import Snapshot
from moor_lsp.features import Feature
from moor_lsp.features.anchor_schedule import schedule_text
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


def last_reason(entries: Sequence[Entry]) -> Entry | None:
    """The latest entry a person gave a reason for (a reaffirm, a restore, …)."""
    return next((e for e in reversed(entries) if e.kind == "revise" and e.reason), None)


def history_lines(entries: Sequence[Entry]) -> list[str]:
    """The journal as lines a person reads, oldest first; a run of checks that found the
    code unchanged (every save of its file adds one) is one line: "checked 8 times since
    …", so the entries that say something stay in view."""
    lines: list[str] = []
    run: list[Entry] = []

    def close_run() -> None:
        if len(run) == 1:
            lines.append(f"- {describe_entry(run[0])}")
        elif run:
            lines.append(
                f"- {local_time(run[-1].at)} — checked {len(run)} times since "
                f"{local_time(run[0].at)}: the file changed, this code did not"
            )
        run.clear()

    for entry in entries:
        if entry.kind == "still":
            run.append(entry)
            continue
        close_run()
        lines.append(f"- {describe_entry(entry)}")
    close_run()
    return lines


def hover_text(
    at: ReferenceAt,
    anchor: AnchorReport | None,
    history: engine.History | None,
    now: str | None = None,
    related: Related | None = None,
    schedule: str = "",
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
    if schedule:
        parts.append(schedule)
    if history is not None:
        reason = last_reason(history.entries)
        if reason is not None:
            parts.append(f"**Last reason** ({local_time(reason.at)}): “{reason.reason}”")
        if history.diff is not None:
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
        told = history_lines(history.entries)
        if told:
            shown = told[-HISTORY_LIMIT:]
            if len(told) > len(shown):
                shown.insert(0, f"- … {len(told) - len(shown)} earlier lines")
            parts.append("**History**\n\n" + "\n".join(shown))
        else:
            parts.append("**History**\n\nnothing journalled yet")
        parts.append(f"The whole journal: `moor log {at.memory_path}`")
    if related is not None and related.cobound:
        parts.append("**Also bound here**: " + ", ".join(f"`{path}`" for path in related.cobound))
    if related is not None and related.links:
        shown = [
            f"- → {link.relation} `{link.path}`" + ("" if link.exists else " (no such memory)")
            for link in related.links
        ]
        parts.append("**Links**\n\n" + "\n".join(shown))
    if at.memory.questions:
        parts.append(
            "**When this changes, ask**\n\n" + "\n".join(f"- {q}" for q in at.memory.questions)
        )
    return "\n\n".join(parts)


def _related(at: ReferenceAt, snapshot: Snapshot) -> Related:
    """The memory's own links and the memories also bound to this reference's anchor, as
    the latest snapshot knows them (`moor_engine.grounding.links`)."""
    cobound = (
        cobound_with(at.canonical, at.memory_path, snapshot.naming_reports(at.canonical))
        if at.canonical
        else []
    )
    links = own_links(at.memory, snapshot.memories.__contains__)
    return Related(links, tuple(cobound))


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
            contents=types.MarkupContent(
                kind=kind,
                value=hover_text(
                    at,
                    anchor,
                    history,
                    now,
                    _related(at, snapshot),
                    schedule_text(at.canonical, anchor, snapshot),
                ),
            ),
            range=to_range(at.span, self.server.position_encoding),
        )
