"""`moor symbols PATH`: every reference that names a definition of one file exactly."""

from __future__ import annotations

from moor_extractors.languages import language_for_path
from moor_extractors.model import Failure
from moor_extractors.reference import resolve_path
from moor_extractors.resolve import SymbolRef, references
from moor_extractors.symbols import parse_source
from moor_store.inside import NotInside, read_inside

from moor_engine.session import Session
from moor_engine.usage import UsageError


def file_symbols(session: Session, arg: str) -> tuple[str, list[SymbolRef]]:
    """The workspace-relative path of `arg` and its referenceable symbols; UsageError for a
    path that is missing, unreadable, not text, outside the workspace or in no grammar."""
    rel = session.relative_arg(arg)
    if (session.workspace.root / rel).is_dir():
        raise UsageError(f"{rel or '.'}: a folder; name one file")
    language = language_for_path(rel)
    if language is None:
        raise UsageError(f"{rel}: no grammar for this file, so it has no symbols to name")
    path = resolve_path(session.workspace.root, rel)
    if isinstance(path, Failure):
        raise UsageError(f"{rel}: {path.detail}")
    limit = session.workspace.config.max_file_size
    try:
        source = read_inside(session.workspace.root, rel, limit=limit)
    except FileNotFoundError as error:
        raise UsageError(f"{rel}: no such file") from error
    except NotInside as error:
        raise UsageError(error.message) from error
    except OSError as error:
        raise UsageError(f"{rel}: {error.strerror or error}") from error
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{rel}: not UTF-8 text") from error
    return rel, references(parse_source(language, source), rel)
