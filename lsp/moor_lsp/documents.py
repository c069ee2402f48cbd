"""Reading the memory a request is about from the editor's copy of it (saved or not)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types
from moor_extractors.memory import AboutEntry, Memory, parse_memory
from moor_extractors.model import Failure
from moor_extractors.reference import parse_reference

from moor_lsp.positions import Span, from_client_character, span_in_lines, split_lines

if TYPE_CHECKING:
    from moor_lsp.folder import Folder


@dataclass(frozen=True)
class ReferenceAt:
    """The `about:` reference under a position in a memory file."""

    memory_path: str
    memory: Memory
    entry: AboutEntry
    span: Span
    canonical: str | None  # None when the reference is malformed


@dataclass(frozen=True)
class MemoryText:
    path: str
    lines: list[str]
    memory: Memory | None


def memory_text(folder: Folder, uri: str) -> MemoryText | None:
    """The memory file at `uri` as the editor has it, parsed; None if it is no memory."""
    rel = folder.relative(uri)
    snapshot = folder.snapshot
    if rel is None or snapshot is None or not is_memory(folder, rel):
        return None
    text = folder.server.workspace.get_text_document(uri).source
    parsed = parse_memory(rel, text.encode("utf-8", "surrogatepass"))
    return MemoryText(rel, split_lines(text), parsed.memory)


def is_memory(folder: Folder, rel: str) -> bool:
    """Whether root-relative `rel` is a memory file of the root (checked or not yet)."""
    snapshot = folder.snapshot
    if snapshot is not None and rel in snapshot.memories:
        return True
    from moor_engine.workspace.config import ConfigError
    from moor_engine.workspace.workspace import Workspace

    try:
        return Workspace.open(folder.root).is_memory_path(rel)
    except ConfigError:
        return False


def reference_at(folder: Folder, uri: str, position: types.Position) -> ReferenceAt | None:
    text = memory_text(folder, uri)
    if text is None or text.memory is None or position.line >= len(text.lines):
        return None
    column = from_client_character(
        text.lines[position.line], position.character, folder.server.position_encoding
    )
    for entry in text.memory.about:
        span = span_in_lines(text.lines, entry.line, entry.column, entry.end_line, entry.end_column)
        if span.contains(position.line, column):
            ref = parse_reference(entry.raw)
            canonical = None if isinstance(ref, Failure) else ref.canonical()
            return ReferenceAt(text.path, text.memory, entry, span, canonical)
    return None
