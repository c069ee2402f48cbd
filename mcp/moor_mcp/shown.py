"""A memory as a tool result shows it: its text framed as untrusted data
(`moor_engine.framing`, the one rendering of memory text for models, with the engine's
reasons as warnings), and what an edit of it is based on (its content hash, its sections)."""

from __future__ import annotations

from dataclasses import dataclass, field

from moor_engine.framing import Framed, frame_one
from moor_engine.session import Session
from moor_extractors.memory import parse_memory
from moor_extractors.memory_text import section_names
from moor_store.inside import read_inside


@dataclass(frozen=True)
class Shown:
    text: str  # framed; empty when the file cannot be read now
    content_hash: str | None = None
    sections: list[str] = field(default_factory=list)


def shown(
    session: Session, path: str, state: str, refs: tuple[str, ...], why: tuple[str, ...]
) -> Shown:
    """The memory at `path` with its trust state and the engine's reasons for it."""
    try:
        data = read_inside(
            session.workspace.root, path, limit=session.workspace.config.max_file_size
        )
    except OSError:
        return Shown("")
    parsed = parse_memory(path, data).memory
    if parsed is None:
        return Shown("")
    warnings = tuple(f"{reason} — verify before relying on it" for reason in why)
    text = frame_one(Framed(path, parsed.title, state, refs, warnings, parsed.body.strip("\n")))
    return Shown(text, parsed.content_hash, section_names(data.decode("utf-8", "replace")))
