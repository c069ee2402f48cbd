"""`moor export` and `moor import`: the local history a fresh clone cannot rebuild from git
(the journal — reasons, forgotten memories' texts — and the sealed snapshots), as versioned
JSON lines, and restoring it into a clone whose journal is empty.

The file, one JSON object a line, each with its `kind`:

* `moor-export` first: `version` (this format's, `VERSION`) and the journal schema;
* `entry`: a journal entry as it was (its seq and time), seq order;
* `snapshot`: a sealed snapshot, address order;
* `binding` (moor.lock's, per memory) and `link` (a memory's `links:`), for a reader: an
  import leaves moor.lock and the memories to git, which holds them;
* lines of a kind this moor does not know, carried through unchanged (kept by an import,
  written again by the next export, before `end`);
* `end` last: how many lines came before it, so a cut file is told from a whole one.

Every line is written one way (keys sorted, no spaces, UTF-8), so an export, imported into
a fresh clone and exported there, is the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from moor_extractors.memory import parse_memory
from moor_store.inside import NotInside, read_inside, write_inside
from moor_store.journal import ENTRY_KINDS, SCHEMA_VERSION, Entry
from moor_store.refusal import RefusalError

from moor_engine.session import Session
from moor_engine.usage import UsageError

VERSION: Final = 1
HEADER: Final = "moor-export"
MAX_FILE: Final = 1 << 30
MAX_LINE: Final = 64 << 20  # a snapshot is at most a file moor reads (max_file_size)
_KNOWN: Final = frozenset({HEADER, "entry", "snapshot", "binding", "link", "end"})
_ENTRY_FIELDS: Final = ("anchor", "memory", "address", "previous", "reason", "code", "detail")


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def export_text(session: Session) -> str:
    """The export of this clone, as text."""
    return "".join(_records(session))


def _records(session: Session) -> Iterator[str]:
    journal = session.journal
    if journal is None:
        raise UsageError(
            "there is no journal to export: it could not be opened (see above)",
            code="journal_unavailable",
        )
    lines = [_line({"kind": HEADER, "version": VERSION, "journal_schema": SCHEMA_VERSION})]
    for entry in journal.entries():
        record: dict[str, Any] = {
            "kind": "entry",
            "seq": entry.seq,
            "at": entry.at,
            "entry": entry.kind,
            "data": None if entry.data is None else dict(entry.data),
        }
        record.update({name: getattr(entry, name) for name in _ENTRY_FIELDS})
        lines.append(_line(record))
    lines.extend(
        _line({"kind": "snapshot", "address": a, "text": t}) for a, t in journal.snapshots()
    )
    for path, memory in sorted(session.lock.memories.items()):
        anchors = [
            {
                "ref": anchor.ref,
                "address": anchor.address,
                "derivation": anchor.derivation,
                "kind": anchor.kind,
                "axes": dict(anchor.axes),
            }
            for _, anchor in sorted(memory.anchors.items())
        ]
        lines.append(
            _line(
                {"kind": "binding", "memory": path, "content": memory.content, "anchors": anchors}
            )
        )
    root, cap = session.workspace.root, session.workspace.config.max_file_size
    for path in sorted(session.workspace.memory_paths()):
        try:
            parsed = parse_memory(path, read_inside(root, path, limit=cap)).memory
        except (OSError, NotInside):
            continue  # unreadable here: `moor check` says why
        if parsed is None:
            continue
        lines.extend(
            _line({"kind": "link", "memory": path, "type": kind, "to": list(targets)})
            for kind, targets in sorted(parsed.links.items())
        )
    lines.extend(journal.carried())
    lines.append(_line({"kind": "end", "lines": len(lines)}))
    yield from lines


def write_export(session: Session, output: str) -> str:
    """Write the export into the workspace file `output`; its relative path."""
    from moor_engine.agents.outputs import reserved

    rel = session.relative_arg(output)
    why = reserved(session.workspace, rel)
    if why is not None:
        raise UsageError(f"{rel}: not written: {why}", code="reserved_path", path=rel)
    write_inside(session.workspace.root, rel, export_text(session).encode("utf-8"))
    return rel


@dataclass(frozen=True)
class Imported:
    path: str
    entries: int
    snapshots: int
    carried: int
    bindings_differ: tuple[str, ...]  # memories whose moor.lock here differs from the export's


def _refuse(rel: str, code: str, message: str, line: int | None = None) -> UsageError:
    where = f"{rel}:{line}" if line is not None else rel
    return UsageError(f"{where}: {message}; nothing was imported", code=code, path=rel, line=line)


def import_file(session: Session, path: str) -> Imported:
    """Restore an export into this clone's empty journal: all of it or nothing. Every
    problem of the file is found before anything is written."""
    try:
        rel = session.relative_arg(path)
    except RefusalError as error:
        raise _refuse(path, error.code, str(error).removeprefix(f"{path} ")) from None
    try:
        data = read_inside(session.workspace.root, rel, limit=MAX_FILE)
    except FileNotFoundError:
        raise UsageError(f"{rel}: no such file", code="not_found", path=rel) from None
    except NotInside as error:
        raise _refuse(rel, error.code, str(error)) from None
    entries, snapshots, carried, bindings = _parse(rel, data)
    journal = session.journal
    if journal is None:
        raise UsageError(
            "there is no journal to import into: it could not be opened (see above)",
            code="journal_unavailable",
        )
    with session.writing("moor import"):
        journal.restore_history(entries, snapshots, carried)
    differ = tuple(
        sorted(
            memory
            for memory, content in bindings.items()
            if (mine := session.lock.memories.get(memory)) is None or mine.content != content
        )
    )
    return Imported(rel, len(entries), len(snapshots), len(carried), differ)


def _parse(
    rel: str, data: bytes
) -> tuple[list[Entry], list[tuple[str, str]], list[str], dict[str, str]]:
    if not data.endswith(b"\n"):
        raise _refuse(rel, "export_truncated", "cut short: the last line is not whole")
    raw_lines = data.split(b"\n")[:-1]
    entries: list[Entry] = []
    snapshots: list[tuple[str, str]] = []
    carried: list[str] = []
    bindings: dict[str, str] = {}
    ended = False
    for number, raw in enumerate(raw_lines, start=1):
        if len(raw) > MAX_LINE:
            raise _refuse(
                rel,
                "export_line_too_long",
                f"a line of {len(raw):,} bytes (at most {MAX_LINE:,})",
                number,
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise _refuse(
                rel, "export_not_utf8", f"not UTF-8 (byte 0x{raw[error.start]:02x})", number
            ) from None
        try:
            record = json.loads(text)
        except json.JSONDecodeError as error:
            raise _refuse(rel, "export_malformed", f"not JSON ({error.msg})", number) from None
        if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
            raise _refuse(rel, "export_malformed", "not an object with a kind", number)
        kind = record["kind"]
        if number == 1:
            _header(rel, record)
            continue
        if ended:
            raise _refuse(rel, "export_malformed", "a line after `end`", number)
        if kind == HEADER:
            raise _refuse(rel, "export_malformed", "a second header", number)
        if kind == "end":
            if record.get("lines") != number - 1:
                raise _refuse(rel, "export_truncated", "lines are missing before `end`", number)
            ended = True
        elif kind == "entry":
            entries.append(_entry(rel, record, number, len(entries) + 1))
        elif kind == "snapshot":
            address, snapshot = record.get("address"), record.get("text")
            if not isinstance(address, str) or not isinstance(snapshot, str):
                raise _refuse(rel, "export_malformed", "a snapshot needs address and text", number)
            snapshots.append((address, snapshot))
        elif kind == "binding":
            memory, content = record.get("memory"), record.get("content")
            if isinstance(memory, str) and isinstance(content, str):
                bindings[memory] = content
        elif kind not in _KNOWN:
            carried.append(text + "\n")
    if not raw_lines:
        raise _refuse(rel, "export_truncated", "empty: no header")
    if not ended:
        raise _refuse(rel, "export_truncated", "cut short: no `end` line")
    return entries, snapshots, carried, bindings


def _header(rel: str, record: dict[str, Any]) -> None:
    if record.get("kind") != HEADER:
        raise _refuse(rel, "export_malformed", "not a moor export (no header)", 1)
    version = record.get("version")
    if version != VERSION or isinstance(version, bool):
        raise _refuse(
            rel,
            "export_version",
            f"export version {version!r}, which this moor does not read (it reads {VERSION})",
            1,
        )


def _entry(rel: str, record: dict[str, Any], number: int, seq: int) -> Entry:
    if record.get("seq") != seq or isinstance(record.get("seq"), bool):
        raise _refuse(
            rel,
            "export_malformed",
            f"entry seq {record.get('seq')!r} where {seq} comes next",
            number,
        )
    kind = record.get("entry")
    if kind not in ENTRY_KINDS:
        raise _refuse(rel, "export_malformed", f"unknown journal entry kind {kind!r}", number)
    fields = {name: record.get(name) for name in _ENTRY_FIELDS}
    at, data = record.get("at"), record.get("data")
    if (
        not isinstance(at, str)
        or not isinstance(fields["anchor"], str)
        or any(v is not None and not isinstance(v, str) for v in fields.values())
        or (data is not None and not isinstance(data, dict))
    ):
        raise _refuse(rel, "export_malformed", "an entry with fields of the wrong type", number)
    return Entry(kind=kind, seq=seq, at=at, data=data, **fields)  # type: ignore[arg-type]
