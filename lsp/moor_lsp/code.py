"""Reading the code a memory is about: a workspace file's definitions, by qualified name.

Completion, go-to-definition and code lenses need the same few things: whether a
workspace-relative path is safe to read (no escape from the workspace, SECURITY.md), which
language moor parses it as, and its definition sites. Everything here is plain data and
runs in the engine thread (tree-sitter work stays off the event loop).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from moor_extractors.languages import language_for_path
from moor_extractors.model import DefinitionSite, Failure
from moor_extractors.reference import is_markdown_path, normalise_path, resolve_path
from moor_extractors.resolve import SymbolRef, group_of, references, resolve
from moor_extractors.symbols import ParsedFile, parse_source
from moor_store.inside import read_inside

from moor_lsp.positions import Span, span_of_bytes

_WHITESPACE = re.compile(r"\s+")
MAX_BYTES = 4 * 1024 * 1024  # larger files are not parsed for the editor


def symbol_key(path: str, qname: str) -> str:
    """A qualified name as a canonical reference spells it (Markdown breadcrumbs have
    single spaces around `>`)."""
    if not is_markdown_path(path):
        return qname
    return " > ".join(_WHITESPACE.sub(" ", level).strip() for level in qname.split(">"))


@dataclass(frozen=True)
class CodeFile:
    """One workspace file's definitions, as the editor needs them."""

    path: str
    source: bytes
    parsed: ParsedFile

    @property
    def sites(self) -> tuple[DefinitionSite, ...]:
        return self.parsed.sites()

    def symbols(self) -> list[SymbolRef]:
        """Every symbol that names a definition exactly (what `moor symbols` prints)."""
        return references(self.parsed, self.path)

    def span(self, site: DefinitionSite) -> Span:
        return span_of_bytes(self.source, site.start_byte, site.end_byte)

    def head_text(self, site: DefinitionSite) -> str:
        """The definition's first line of source."""
        end = self.source.find(b"\n", site.start_byte, site.end_byte)
        stop = end if end >= 0 else site.end_byte
        return self.source[site.start_byte : stop].decode("utf-8", "replace")

    def head(self, site: DefinitionSite) -> Span:
        """The definition's first line (where a lens or a cursor goes)."""
        whole = self.span(site)
        return Span(
            whole.start_line,
            whole.start_column,
            whole.start_line,
            len(whole.start_text),
            whole.start_text,
            whole.start_text,
        )

    def named(self, symbol: str) -> list[DefinitionSite]:
        """The definitions `symbol` names (when it is ambiguous: every candidate)."""
        sites = self.sites

        def same(qname: str) -> list[int]:
            return [i for i, s in enumerate(sites) if symbol_key(self.path, s.qname) == qname]

        def parse() -> ParsedFile:
            return self.parsed

        meaning = resolve(
            symbol,
            sites,
            self.parsed.language,
            same,
            lambda indexes: group_of(self.parsed.spec, [sites[i] for i in indexes], parse),
            lambda index: self.head_text(sites[index]),
        )
        return [] if meaning is None else [sites[i] for i in meaning.indexes]


def safe_file(root: Path, rel: str) -> Path | None:
    """The file at workspace-relative `rel`, or None if it escapes the workspace, is not
    a regular file, or is refused for any other reason."""
    normal = normalise_path(rel)
    if isinstance(normal, Failure):
        return None
    path = resolve_path(root, normal)
    if isinstance(path, Failure) or not path.is_file():
        return None
    return path


def read_code(root: Path, rel: str, source: bytes | None = None) -> CodeFile | None:
    """The definitions of the file at `rel` (its text given, or read from disk); None when
    moor does not parse its language or it cannot be read."""
    language = language_for_path(rel)
    if language is None:
        return None
    if source is None:
        if safe_file(root, rel) is None:
            return None
        try:  # inside the workspace only, never blocking; over MAX_BYTES is refused
            source = read_inside(root, rel, limit=MAX_BYTES)
        except OSError:
            return None
    if len(source) > MAX_BYTES:
        return None
    return CodeFile(rel, source, parse_source(language, source))
