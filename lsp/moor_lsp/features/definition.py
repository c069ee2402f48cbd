"""From an `about:` reference to the code it names: go-to-definition and document links.

* `textDocument/definition` on a reference answers where the symbol is defined now (every
  definition when the name is ambiguous), or the start of the file for a whole-file
  reference; for a reference the engine reports `moved`, its new place (`moved_to`). A
  malformed reference, an `anchor:` reference, a path outside the workspace or a symbol
  that is not there answers nothing. Clients that take links get a `LocationLink` (the
  reference as origin, the definition's first line as selection).
* `textDocument/documentLink` makes each reference to an existing file a link; a symbol's
  link ends in `#L<line>` (1-based), which VS Code opens at that line.

The code is read from disk and parsed in the engine thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from moor_engine.grounding.trust import AnchorReport
from moor_extractors.model import Failure
from moor_extractors.reference import Reference, parse_reference

from moor_lsp import engine
from moor_lsp.code import read_code, safe_file
from moor_lsp.documents import ReferenceAt, memory_text, reference_at
from moor_lsp.features import Feature
from moor_lsp.features.diagnostics import to_range
from moor_lsp.positions import Span, span_in_lines


@dataclass(frozen=True)
class Target:
    path: str
    span: Span  # the whole definition (empty at the file start for a whole file)
    head: Span  # its first line


def locate(root: Path, ref: Reference) -> list[Target]:
    """Where the code `ref` names is defined now, read from disk."""
    if ref.path is None or safe_file(root, ref.path) is None:
        return []
    if ref.symbol is None:
        start = Span(0, 0, 0, 0)
        return [Target(ref.path, start, start)]
    code = read_code(root, ref.path)
    if code is None:
        return []
    return [Target(ref.path, code.span(s), code.head(s)) for s in code.named(ref.symbol)]


def moved_ref(anchor: AnchorReport | None) -> Reference | None:
    """Where the engine says the anchor's code is now, when it moved."""
    if anchor is None or anchor.moved_to is None:
        return None
    ref = parse_reference(anchor.moved_to)
    return None if isinstance(ref, Failure) else ref


def anchor_at(snapshot: engine.Snapshot, at: ReferenceAt) -> AnchorReport | None:
    """The engine's report of the reference under the cursor, from the last check."""
    memory = snapshot.memories.get(at.memory_path)
    if memory is None:
        return None
    for anchor in memory.report.anchors:
        if at.canonical is not None and anchor.canonical == at.canonical:
            return anchor
    for anchor in memory.report.anchors:
        if anchor.ref == at.entry.raw:
            return anchor
    return None


def locate_all(root: Path, refs: list[Reference]) -> list[list[Target]]:
    return [locate(root, ref) for ref in refs]


class Definition(Feature):
    name = "definition"

    def register(self) -> None:
        self.handle(types.TEXT_DOCUMENT_DEFINITION, self.definition, None)
        self.handle(
            types.TEXT_DOCUMENT_DOCUMENT_LINK,
            self.document_link,
            None,
            types.DocumentLinkOptions(resolve_provider=False),
        )

    async def definition(
        self, params: types.DefinitionParams
    ) -> list[types.Location] | list[types.LocationLink] | None:
        folder = self.server.folder_for(params.text_document.uri)
        if folder is None:
            return None
        await folder.ready()
        root = folder.root
        at = reference_at(folder, params.text_document.uri, params.position)
        if at is None or at.canonical is None:
            return None
        ref = parse_reference(at.canonical)
        if isinstance(ref, Failure):
            return None
        snapshot = folder.snapshot
        if snapshot is not None:
            # Code the engine found moved is where it is now, not where it was.
            ref = moved_ref(anchor_at(snapshot, at)) or ref
        targets = await self.server.in_reader(locate, root, ref)
        if not targets:
            return None
        encoding = self.server.position_encoding
        if self.server.capability("text_document.definition.link_support"):
            origin = to_range(at.span, encoding)
            return [
                types.LocationLink(
                    target_uri=folder.uri(t.path),
                    target_range=to_range(t.span, encoding),
                    target_selection_range=to_range(t.head, encoding),
                    origin_selection_range=origin,
                )
                for t in targets
            ]
        return [
            types.Location(uri=folder.uri(t.path), range=to_range(t.span, encoding))
            for t in targets
        ]

    async def document_link(
        self, params: types.DocumentLinkParams
    ) -> list[types.DocumentLink] | None:
        folder = self.server.folder_for(params.text_document.uri)
        if folder is None:
            return None
        await folder.ready()
        root = folder.root
        text = memory_text(folder, params.text_document.uri)
        if text is None or text.memory is None:
            return None
        spans: list[Span] = []
        refs: list[Reference] = []
        for entry in text.memory.about:
            ref = parse_reference(entry.raw)
            if isinstance(ref, Failure) or ref.path is None:
                continue
            spans.append(
                span_in_lines(
                    text.lines, entry.line, entry.column, entry.end_line, entry.end_column
                )
            )
            refs.append(ref)
        found = await self.server.in_reader(locate_all, root, refs)
        encoding = self.server.position_encoding
        tooltips = bool(self.server.capability("text_document.document_link.tooltip_support"))
        links = []
        for span, ref, targets in zip(spans, refs, found, strict=True):
            if not targets:
                continue
            target = folder.uri(targets[0].path)
            if ref.symbol is not None:
                target += f"#L{targets[0].span.start_line + 1}"
            links.append(
                types.DocumentLink(
                    range=to_range(span, encoding),
                    target=target,
                    tooltip=f"Open {ref.canonical()}" if tooltips else None,
                )
            )
        return links
