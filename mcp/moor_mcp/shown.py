"""A memory as a tool result shows it: its text framed as untrusted data
(`moor_engine.agents.framing`, the one rendering of memory text for models, with the engine's
verdict as warnings, dated from the journal: `moor_engine.agents.since`), and what an edit of it is
based on (its content hash, its sections)."""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from moor_engine.agents.framing import frame_one, framed
from moor_engine.agents.since import since
from moor_engine.grounding.trust import MemoryReport
from moor_engine.session import Session
from moor_extractors.memory import Memory, hash_memory_text, parse_memory
from moor_extractors.memory_text import section_names
from moor_store.inside import read_inside


@dataclass(frozen=True)
class Shown:
    text: str  # framed; empty when the file cannot be read now
    content_hash: str | None = None
    sections: list[str] = field(default_factory=list)


def shown(session: Session, report: MemoryReport, read: Memory | None = None) -> Shown:
    """The memory `report` is the verdict of, framed with that verdict; `read`: the memory
    as the engine just read it (`load_memories`, by its file's stat), not parsed again. The
    same verdict and memory (the same objects: a kept verdict and the memory it read,
    `KeptSession.memories`) with the same dates are shown as last time, the file not read."""
    dates = since(session.journal, [report])
    if read is not None:
        with _lock:
            last = _last.get(report.path)
            if last is not None and last[0] is report and last[1] is read and last[2] == dates:
                _last.move_to_end(report.path)
                return last[3]
    made = _shown(session, report, read, dates)
    if read is not None:
        with _lock:
            _last[report.path] = (report, read, dates, made)
            _last.move_to_end(report.path)
            while len(_last) > _REMEMBERED:
                _last.popitem(last=False)
    return made


def _shown(
    session: Session, report: MemoryReport, read: Memory | None, dates: dict[str, str]
) -> Shown:
    path = report.path
    try:
        data = read_inside(
            session.workspace.root, path, limit=session.workspace.config.max_file_size
        )
    except OSError:
        return Shown("")
    parsed: Memory | None
    sections: tuple[str, ...]
    if read is not None and read.content_hash == hash_memory_text(_text(data)):
        parsed, sections = read, tuple(section_names(_text(data)))
    else:
        parsed, sections = (
            _parsed(path, data)
            if len(data) <= _REMEMBERED_BYTES
            else _parsed.__wrapped__(path, data)
        )
    if parsed is None:
        return Shown("")
    text = frame_one(framed(report, parsed, dates))
    return Shown(text, parsed.content_hash, list(sections))


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


# At most this many memory files are remembered, each only up to this size: a few MiB.
_REMEMBERED = 512
_REMEMBERED_BYTES = 16 * 1024
# The last showing of each memory, by path: (verdict, memory, dates, shown), at most
# `_REMEMBERED` of them, the least recently shown dropped first.
_last: OrderedDict[str, tuple[MemoryReport, Memory, dict[str, str], Shown]] = OrderedDict()
_lock = threading.Lock()


@functools.lru_cache(maxsize=_REMEMBERED)
def _parsed(path: str, data: bytes) -> tuple[Memory | None, tuple[str, ...]]:
    """A memory file's bytes parsed, remembered by the bytes: a warm server shows the same
    memories again and again (a `Memory` is immutable)."""
    parsed = parse_memory(path, data).memory
    return parsed, tuple(section_names(_text(data)))
