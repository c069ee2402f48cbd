"""Diagnostics on memory files: one per anchor at fault, on the exact `about:` reference.

Every memory file gets diagnostics whether it is open or not, from the root it is routed
to (the innermost one holding it). After an incremental check only the memories it names
as changed (`Snapshot.dirty`) are rebuilt. A root that is no longer served takes its
diagnostics with it: pushed as empty lists, or the client is told to pull again. The rule per client
(`pulls_diagnostics`): a client that can pull *and* be told to refresh is answered on
`textDocument/diagnostic` and `workspace/diagnostic` and told `workspace/diagnostic/refresh`
after a re-check (a workspace pull given a partial result token is held open and sent each
change: memories/lsp-workspace-pull-is-held-open.md); nothing is pushed to it. Every other
client — one that only pushes, or one that pulls without refresh support, which is then
not offered pull at all — gets `textDocument/publishDiagnostics` for exactly the URIs whose
diagnostics changed, including an empty list for a memory that became clean or was
deleted, and a memory's diagnostics again when it is opened.

Each diagnostic's `code` is the trust state (docs/memories.md, *Trust states*), its
`source` is `moor`, and its `data` carries what a code action needs (see
`diagnostic_data`). Its severity comes from the settings (`moor.severity`, see
`moor_lsp.settings`): a state set to `off` sends no diagnostic at all, and new settings
re-grade what the client was sent.

An anchor observed in an unsaved editor buffer (a *preview*) says so in its message and
carries `"preview": true` in its data: nothing that writes is offered on it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from moor_engine.grounding.severity import SEVERITY as STATE_LEVELS
from moor_engine.grounding.trust import State, needs_look
from moor_engine.grounding.verdicts import bind_verdict, follow_verdict
from moor_extractors.reference import ANCHOR_PREFIX

from moor_lsp.engine import QUIET_ANCHOR_STATES, AnchorView, MemoryView, Snapshot, Spot
from moor_lsp.features import Feature
from moor_lsp.positions import Span
from moor_lsp.settings import Settings

if TYPE_CHECKING:
    from moor_lsp.folder import Folder

SOURCE = "moor"
LEVELS: dict[str, types.DiagnosticSeverity | None] = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
    "off": None,
}
# The built-in severities (the engine's table); states the settings do not name
# (`retired`) keep theirs.
SEVERITY: dict[State, types.DiagnosticSeverity | None] = {
    state: LEVELS[level] for state, level in STATE_LEVELS.items()
}


def pulls_diagnostics(server: Any) -> bool:
    """Whether this client gets diagnostics by pulling: it can pull *and* can be told to pull
    again (`workspace.diagnostics.refreshSupport`). A client that pulls but cannot be told
    (Neovim 0.11) would keep stale diagnostics after any change it did not make, so it is not
    offered pull at all and gets every change pushed, as a client that cannot pull."""
    return bool(
        server.capability("text_document.diagnostic") is not None
        and server.capability("workspace.diagnostics.refresh_support")
    )


def severity(settings: Settings, state: State) -> types.DiagnosticSeverity | None:
    """The severity of a diagnostic for `state`, or None when it is turned off."""
    level = settings.level(state.value)
    if level is None:
        return SEVERITY.get(state, types.DiagnosticSeverity.Information)
    return LEVELS[level]


def to_range(span: Span, encoding: str) -> types.Range:
    start_line, start_character, end_line, end_character = span.client_range(encoding)
    return types.Range(
        start=types.Position(line=start_line, character=start_character),
        end=types.Position(line=end_line, character=end_character),
    )


PREVIEW_NOTE = " (unsaved changes in the editor)"


def anchor_message(view: AnchorView) -> str:
    message = _anchor_message(view)
    return message + PREVIEW_NOTE if view.preview else message


def _anchor_message(view: AnchorView) -> str:
    anchor = view.report
    ref = anchor.canonical or anchor.ref
    if anchor.state == State.DRIFTED:
        return anchor.detail or f"{ref} changed since it was bound"
    if anchor.state == State.MOVED:
        message = f"{ref} moved: now {anchor.moved_to}"
        if anchor.code == "renamed":
            message = f"{ref} was renamed: now {anchor.moved_to}"
        if anchor.axes:
            message += f" (and its {', '.join(anchor.axes)} changed)"
        return message
    if anchor.state == State.UNVERIFIED:
        return f"{ref} cannot be observed ({anchor.code}): {anchor.detail}"
    if anchor.state == State.UNBOUND:
        return f"{ref} is not bound yet: bind it to record what the code looks like now"
    if anchor.state == State.INVALID:
        return f"{anchor.ref}: {anchor.detail or 'invalid reference'}"
    return anchor.detail or f"{ref}: {anchor.state.value}"


def stalled_note(snapshot: Snapshot | None, view: AnchorView) -> str:
    """What an unverified command anchor's diagnostic adds once the cadence says it
    stalled (`moor_engine.anchors.cadence`)."""
    canonical = view.report.canonical or ""
    if snapshot is None or view.report.state != State.UNVERIFIED:
        return ""
    slot = snapshot.schedule.get(canonical.removeprefix(ANCHOR_PREFIX))
    if slot is None or not canonical.startswith(ANCHOR_PREFIX) or not slot.stalled:
        return ""
    # No count: later failures alike re-derive nothing, so a count would go stale (the hover
    # has it).
    return " — stalled: it keeps failing; moor keeps trying, backing off (hover: when next)"


def range_json(value: types.Range) -> dict[str, dict[str, int]]:
    return {
        "start": {"line": value.start.line, "character": value.start.character},
        "end": {"line": value.end.line, "character": value.end.character},
    }


def diagnostic_data(
    memory: MemoryView, anchor: AnchorView | None, uri: str, target: types.Location | None = None
) -> dict[str, Any]:
    """What code actions need, carried in `Diagnostic.data` (a JSON object)."""
    data: dict[str, Any] = {
        "memory": memory.path,
        "uri": uri,
        "state": (anchor.report.state if anchor else memory.report.state).value,
        "reaffirmable": memory.reaffirmable,
    }
    if anchor is not None:
        data.update(
            ref=anchor.report.ref,
            canonical=anchor.report.canonical,
            moved_to=anchor.report.moved_to,
            candidates=[candidate.as_json() for candidate in anchor.report.candidates],
            suggestions=list(anchor.report.suggestions),
            axes=list(anchor.report.axes),
            bound_address=anchor.report.bound_address,
            address=anchor.report.address,
            # What the engine's verdicts allow for this anchor (code actions offer by them).
            followable=follow_verdict(memory.report, anchor.report).allowed,
            bindable=bind_verdict(memory.report, anchor.report).allowed,
        )
        if anchor.preview:
            data["preview"] = True
    if target is not None:
        data["target"] = {"uri": target.uri, "range": range_json(target.range)}
    return data


class Diagnostics(Feature):
    name = "diagnostics"

    def __init__(self, server: Any) -> None:
        super().__init__(server)
        # Per root, by URI, non-empty lists (a URI is in the root it is routed to).
        self.current: dict[Path, dict[str, list[types.Diagnostic]]] = {}
        self.published: dict[str, list[types.Diagnostic]] = {}  # what the client was sent
        self._problem_uris: dict[Path, set[str]] = {}  # URIs with workspace-level problems
        self._streams: set[_Stream] = set()  # `workspace/diagnostic` requests held open
        self._closing = False

    def register(self) -> None:
        self.handle(
            types.TEXT_DOCUMENT_DIAGNOSTIC,
            self.document_diagnostic,
            types.RelatedFullDocumentDiagnosticReport(items=[]),
            types.DiagnosticOptions(
                identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=True
            ),
        )
        self.handle(
            types.WORKSPACE_DIAGNOSTIC,
            self.workspace_diagnostic,
            types.WorkspaceDiagnosticReport(items=[]),
        )

    @property
    def pull(self) -> bool:
        return pulls_diagnostics(self.server)

    async def on_open(self, uri: str) -> None:
        """A pushing client that opens a memory is sent its diagnostics again: some (eglot)
        drop what was published for a file before it was opened."""
        if self.pull:
            return
        items = self._items_for(uri)
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=items)
        )
        if items:
            self.published[uri] = items

    # --- building ----------------------------------------------------------------------

    @property
    def _related(self) -> bool:
        return bool(
            self.server.capability("text_document.publish_diagnostics.related_information")
            or self.server.capability("text_document.diagnostic.related_information")
        )

    def build(self, folder: Folder, snapshot: Snapshot) -> dict[str, list[types.Diagnostic]]:
        encoding, related = self.server.position_encoding, self._related
        by_uri: dict[str, list[types.Diagnostic]] = {}
        owns = folder.owns_relative()
        for memory in snapshot.memories.values():
            if not owns(memory.path):
                continue  # in a root nested in this one: that root's check speaks for it
            uri = folder.uri(memory.path)
            items = self.for_memory(folder, memory, uri, encoding, related)
            if items:
                by_uri[uri] = items
        problem_uris = self._problem_uris[folder.root] = set()
        for rel, message in snapshot.problems:
            problem_uris.add(folder.uri(rel))
            by_uri.setdefault(folder.uri(rel), []).append(
                types.Diagnostic(
                    range=types.Range(
                        start=types.Position(line=0, character=0),
                        end=types.Position(line=0, character=0),
                    ),
                    message=message,
                    severity=types.DiagnosticSeverity.Error,
                    code="config",
                    source=SOURCE,
                )
            )
        return by_uri

    def for_memory(
        self, folder: Folder, memory: MemoryView, uri: str, encoding: str, related: bool
    ) -> list[types.Diagnostic]:
        report = memory.report
        settings = folder.settings
        items: list[types.Diagnostic] = []
        memory_state = self._memory_level_state(memory)
        memory_severity = None if memory_state is None else severity(settings, memory_state)
        retired = report.state == State.RETIRED
        if retired and needs_look(report) and memory_severity is not None:
            # Retired text written back by hand: struck through, and a person must act.
            memory_severity = types.DiagnosticSeverity.Warning
        if memory_state is not None and memory_severity is not None:
            message = "; ".join(report.notes) or memory_state.value
            items.append(
                types.Diagnostic(
                    range=to_range(memory.span, encoding),
                    message=message,
                    severity=memory_severity,
                    code=memory_state.value,
                    source=SOURCE,
                    data={**diagnostic_data(memory, None, uri), "problem": report.code},
                    tags=[types.DiagnosticTag.Deprecated] if retired else None,
                )
            )
        if retired:
            return items  # what its code did since no longer matters: one struck-through hint
        for finding, span in memory.links:
            items.append(
                types.Diagnostic(
                    range=to_range(span, encoding),
                    message=finding.message,
                    severity=types.DiagnosticSeverity.Warning,
                    code=finding.code,
                    source=SOURCE,
                    data={
                        "memory": memory.path,
                        "uri": uri,
                        "link": finding.as_json(),
                    },
                )
            )
        for anchor in memory.anchors:
            state = anchor.report.state
            anchor_severity = severity(settings, state)
            if state in QUIET_ANCHOR_STATES or anchor_severity is None:
                continue
            target = self._target(folder, anchor.target, encoding)
            items.append(
                types.Diagnostic(
                    range=to_range(anchor.span, encoding),
                    message=anchor_message(anchor) + stalled_note(folder.snapshot, anchor),
                    severity=anchor_severity,
                    code=state.value,
                    source=SOURCE,
                    data=diagnostic_data(memory, anchor, uri, target),
                    related_information=self._related_to(anchor, target) if related else None,
                )
            )
        return items

    @staticmethod
    def _memory_level_state(memory: MemoryView) -> State | None:
        report = memory.report
        if report.state == State.RETIRED:
            return State.RETIRED
        if report.state == State.INVALID and not report.anchors:
            return State.INVALID  # the file itself: frontmatter, encoding, unreadable
        if report.code == "rewritten":
            return State.REWRITTEN
        if report.code == "ungrounded":
            return State.UNGROUNDED
        return None

    @staticmethod
    def _target(folder: Folder, spot: Spot | None, encoding: str) -> types.Location | None:
        if spot is None:
            return None
        return types.Location(uri=folder.uri(spot.path), range=to_range(spot.span, encoding))

    @staticmethod
    def _related_to(
        anchor: AnchorView, target: types.Location | None
    ) -> list[types.DiagnosticRelatedInformation] | None:
        if target is None:
            return None
        what = anchor.report.moved_to or anchor.report.canonical or anchor.report.ref
        return [types.DiagnosticRelatedInformation(location=target, message=f"{what} is here now")]

    # --- delivering --------------------------------------------------------------------

    def update(
        self, folder: Folder, snapshot: Snapshot
    ) -> tuple[dict[str, list[types.Diagnostic]], set[str]]:
        """The root's diagnostics after `snapshot`, and the URIs whose diagnostics may
        differ."""
        current = self.current.get(folder.root, {})
        if snapshot.dirty is None or snapshot.problems or self._problem_uris.get(folder.root):
            fresh = self.build(folder, snapshot)
            return fresh, set(current) | set(fresh)
        encoding, related = self.server.position_encoding, self._related
        fresh = dict(current)
        touched = set()
        owns = folder.owns_relative()
        for path in snapshot.dirty:
            if not owns(path):
                continue
            uri = folder.uri(path)
            touched.add(uri)
            memory = snapshot.memories.get(path)
            items = (
                [] if memory is None else self.for_memory(folder, memory, uri, encoding, related)
            )
            if items:
                fresh[uri] = items
            else:
                fresh.pop(uri, None)
        return fresh, touched

    async def on_snapshot(self, folder: Folder, snapshot: Snapshot) -> None:
        fresh, touched = self.update(folder, snapshot)
        current = self.current.get(folder.root, {})
        changed = any(fresh.get(uri) != current.get(uri) for uri in touched)
        self.current[folder.root] = fresh
        dropped = {uri for uri in self.published if uri not in fresh and folder.owns(uri)}
        self._deliver(touched | dropped, changed)

    async def on_glance(self, folder: Folder, snapshot: Snapshot) -> None:
        await self.on_snapshot(folder, snapshot)  # its `dirty` is exactly what it holds

    def _deliver(self, touched: set[str], changed: bool) -> None:
        """Tell the client: a pulling one to pull again (and a held workspace pull what
        changed), a pushed one what changed."""
        if self.pull:
            if changed:
                for stream in self._streams:
                    stream.wake(touched)
            if changed and self.server.capability("workspace.diagnostics.refresh_support"):
                self.server.workspace_diagnostic_refresh(None)
            return
        for uri in sorted(touched):
            items = self._items_for(uri)
            if self.published.get(uri, []) == items:
                continue
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=items)
            )
            if items:
                self.published[uri] = items
            else:
                self.published.pop(uri, None)

    async def on_folder_removed(self, folder: Folder) -> None:
        """A removed root's diagnostics go: pushed as empty, or the client told to pull."""
        gone = self.current.pop(folder.root, {})
        self._problem_uris.pop(folder.root, None)
        self._deliver(set(gone), bool(gone))

    async def on_settings(self, folder: Folder, settings: Settings) -> None:
        if folder.snapshot is not None:  # re-grade everything
            await self.on_snapshot(folder, dataclasses.replace(folder.snapshot, dirty=None))

    @staticmethod
    def result_id(uri: str, items: list[types.Diagnostic]) -> str:
        """Names one list of diagnostics: equal lists, equal ids (attrs reprs are stable)."""
        return hashlib.sha256(f"{uri}\n{items!r}".encode()).hexdigest()[:16]

    async def document_diagnostic(
        self, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        folder = self.server.folder_for(params.text_document.uri)
        if folder is not None:
            await folder.ready_for(folder.relative(params.text_document.uri))
        uri = params.text_document.uri
        items = self._items_for(uri)
        result_id = self.result_id(uri, items)
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)

    def _items_for(self, uri: str) -> list[types.Diagnostic]:
        """The diagnostics of `uri` from the root it is routed to (none outside every
        root)."""
        folder = self.server.folder_for(uri)
        if folder is None:
            return []
        current = self.current.get(folder.root, {})
        items = current.get(uri)
        if items is not None:
            return items
        rel = folder.relative(uri)  # the client may spell the URI differently
        if rel is None:
            return []
        return current.get(folder.uri(rel), [])

    async def workspace_diagnostic(
        self, params: types.WorkspaceDiagnosticParams
    ) -> types.WorkspaceDiagnosticReport:
        """Every memory's diagnostics. Given a partial result token, the request is held
        open and every later change is sent as a partial result, until the client cancels
        it or the server shuts down: a refresh makes VS Code pull again only the documents
        it has open, and it pulls the workspace again only 2 s after each answer, so a
        memory not open (`moor bind` from a terminal) kept its old diagnostics that long."""
        folders = await self.server.ready_all()
        everywhere = {
            uri: items
            for folder in folders
            for uri, items in self.current.get(folder.root, {}).items()
            if folder.owns(uri)
        }
        held = {p.uri: p.value for p in params.previous_result_ids}
        # Every URI the client holds results for is answered: those now clean get [].
        uris = sorted(set(everywhere) | set(held))
        report = types.WorkspaceDiagnosticReport(
            items=self._reports(uris, held, everywhere.get, unchanged=True)
        )
        token = params.partial_result_token
        if token is None or self._closing:
            return report
        # Partial results: the first is the whole report, the final answer is empty.
        self.server.progress(types.ProgressParams(token=token, value=report))
        stream = _Stream()
        self._streams.add(stream)
        try:
            while not self._closing:
                touched = await stream.changes()
                items = self._reports(sorted(touched), held, self._items_for, unchanged=False)
                if items and not self._closing:
                    partial = types.WorkspaceDiagnosticReportPartialResult(items=items)
                    self.server.progress(types.ProgressParams(token=token, value=partial))
        finally:
            self._streams.discard(stream)
        return types.WorkspaceDiagnosticReport(items=[])

    def _reports(
        self,
        uris: list[str],
        held: dict[str, str],
        items_of: Callable[[str], list[types.Diagnostic] | None],
        *,
        unchanged: bool,
    ) -> list[
        types.WorkspaceFullDocumentDiagnosticReport
        | types.WorkspaceUnchangedDocumentDiagnosticReport
    ]:
        """The report of each URI against the result ids the client `held` (updated to what
        it is sent); `unchanged`: also say so of those it holds already."""
        reports: list[
            types.WorkspaceFullDocumentDiagnosticReport
            | types.WorkspaceUnchangedDocumentDiagnosticReport
        ] = []
        for uri in uris:
            items = items_of(uri) or []
            result_id = self.result_id(uri, items)
            if held.get(uri) == result_id:
                if unchanged:
                    reports.append(
                        types.WorkspaceUnchangedDocumentDiagnosticReport(
                            uri=uri, result_id=result_id, version=None
                        )
                    )
                continue
            held[uri] = result_id
            reports.append(
                types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri, items=items, result_id=result_id, version=None
                )
            )
        return reports

    async def on_shutdown(self) -> None:
        """Held workspace pulls are answered (empty: everything went as partial results)."""
        self._closing = True
        for stream in self._streams:
            stream.wake(set())


class _Stream:
    """One held `workspace/diagnostic` request: the URIs changed since it last sent."""

    def __init__(self) -> None:
        self.touched: set[str] = set()
        self.event = asyncio.Event()

    def wake(self, touched: set[str]) -> None:
        self.touched |= touched
        self.event.set()

    async def changes(self) -> set[str]:
        await self.event.wait()
        self.event.clear()
        touched, self.touched = self.touched, set()
        return touched
