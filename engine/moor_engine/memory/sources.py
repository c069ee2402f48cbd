"""Read-only sources: notes other tools keep (`[[sources]]` in moor.toml), listed with
whether moor binds each through a sidecar memory of its own, and bound (`bind_source`).
Their files are never written: everything here only lists, stats and reads them,
contained (`moor_store.inside`).

A sidecar `memories/sources/KIND/NAME.md` is a normal memory written by the one write path
(`memory_writes.add`). Its `about:` starts with the note file itself, a whole-file
reference, so the note's text is bound in moor.lock like any code: when the note changes,
the sidecar drifts, with no trust rule of its own. Its body quotes the note as it was bound
(so recall finds it by the note's words). Binding a note already bound is refused, naming
`moor edit` (to re-quote the note) and `moor reaffirm` (to accept its change): a sidecar is
never overwritten.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from moor_extractors.memory_text import TITLE_CHARS
from moor_extractors.model import Failure
from moor_extractors.reference import parse_reference
from moor_store.inside import NotInside, exists_inside, open_inside_dir, read_inside

from moor_engine.memory.memory_writes import Draft, add
from moor_engine.session import Session
from moor_engine.usage import UsageError
from moor_engine.workspace.config import SourceConfig
from moor_engine.written import Written

SIDECAR_FOLDER = "sources"  # under the first memory root: memories/sources/KIND/NAME.md


@dataclass
class SourceNotes:
    kind: str
    path: str
    notes: list[str] = field(default_factory=list)  # note names (file stems), sorted
    bound: list[str] = field(default_factory=list)  # those with a sidecar memory
    problem: str | None = None  # why the folder could not be listed

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "path": self.path,
            "notes": [{"name": n, "bound": n in self.bound} for n in self.notes],
            "problem": self.problem,
        }


def sidecar_path(session: Session, kind: str, name: str) -> str:
    root = session.workspace.config.memory_roots[0].rstrip("/")
    return f"{root}/{SIDECAR_FOLDER}/{kind}/{name}.md"


def list_sources(session: Session) -> list[SourceNotes]:
    return [_notes(session, spec) for spec in session.workspace.config.sources]


def _notes(session: Session, spec: SourceConfig) -> SourceNotes:
    found = SourceNotes(spec.kind, spec.path)
    root = session.workspace.root
    try:
        with open_inside_dir(root, spec.path, create=False) as folder:
            names = sorted(os.listdir(folder))
    except FileNotFoundError:
        found.problem = f"{spec.path}: no such folder"
        return found
    except (NotInside, OSError) as error:
        found.problem = f"{spec.path}: not listed: {error}"
        return found
    for entry in names:
        if not entry.endswith(".md") or entry.startswith("."):
            continue
        name = entry.removesuffix(".md")
        found.notes.append(name)
        if exists_inside(root, sidecar_path(session, spec.kind, name)):
            found.bound.append(name)
    return found


NOTE_SECTION = "The note"  # the sidecar's section quoting the note (`moor edit --section`)


def bind_source(
    session: Session,
    kind: str,
    name: str,
    about: Sequence[str],
    why: str | None = None,
    questions: Sequence[str] = (),
) -> Written:
    """Write the sidecar memory binding note `name` of source `kind` to the code `about`
    names (and to the note file itself). A kind, name or note file that cannot be bound is
    a `UsageError`; what the write path refuses (a reference naming nothing, an existing
    sidecar, a tombstoned text) comes back refused in the `Written`."""
    if not about:
        raise UsageError("source bind needs --about REF: the code the note is about")
    spec, rel = _note(session, kind, name)
    text = _note_text(session, rel)
    source = f"{spec.kind}:{name}"
    path = sidecar_path(session, spec.kind, name)
    draft = Draft(
        text=_body(source, rel, text),
        about=[rel, *about],
        title=_title(spec.kind, name, text),
        questions=list(questions) or [f"Does the {source} note still say what this code does?"],
        path=path,
        source=source,
        why=why,
        instead=(
            f"{source} is already bound; to quote the note again: moor edit {path} "
            f'--section "{NOTE_SECTION}"; to accept a change: moor reaffirm {path} --why "..."'
        ),
    )
    written = add(session, draft)
    written.action = "source bind"
    return written


def _note(session: Session, kind: str, name: str) -> tuple[SourceConfig, str]:
    """The configured source of `kind` holding note `name`, and the note file's path."""
    specs = [spec for spec in session.workspace.config.sources if spec.kind == kind]
    if not specs:
        kinds = sorted({spec.kind for spec in session.workspace.config.sources})
        configured = ", ".join(kinds) if kinds else "none: add a [[sources]] table to moor.toml"
        raise UsageError(f"no source of kind {kind!r} in moor.toml (configured: {configured})")
    if not name or "/" in name or "\\" in name or name.startswith(".") or ".." in name:
        raise UsageError(
            f"note name {name!r}: a note is named by its file stem, without '/', '..' or a "
            "leading dot" + _nearby(session, specs, name)
        )
    name = name.removesuffix(".md")
    for spec in specs:
        listed = _notes(session, spec)
        if listed.problem is not None and len(specs) == 1:
            raise UsageError(f"source {kind}: {listed.problem}")
        if name in listed.notes:
            rel = f"{spec.path}/{name}.md"
            ref = parse_reference(rel)
            if isinstance(ref, Failure) or ref.path != rel or ref.symbol or ref.anchor:
                raise UsageError(
                    f"note {rel}: its name cannot be written as a whole-file reference "
                    "(rename it without '#' or control characters)"
                )
            return spec, rel
    raise UsageError(f"no {kind} note {name!r}" + _nearby(session, specs, name))


def _nearby(session: Session, specs: list[SourceConfig], name: str) -> str:
    names = sorted({n for spec in specs for n in _notes(session, spec).notes})
    if not names:
        return f" ({', '.join(spec.path for spec in specs)} holds no notes)"
    close = difflib.get_close_matches(name, names, n=5, cutoff=0.5) or names[:10]
    return f"; notes nearby: {', '.join(close)}"


def _note_text(session: Session, rel: str) -> str:
    """The note's text, read contained: a link leading out, a FIFO, a file over the size
    cap or bytes that are not text are refused with why."""
    try:
        data = read_inside(
            session.workspace.root, rel, limit=session.workspace.config.max_file_size
        )
    except NotInside as error:
        raise UsageError(f"note {rel} refused: {error}") from None
    except OSError as error:
        raise UsageError(f"note {rel} could not be read: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"note {rel} refused: it is not UTF-8 text") from None
    if "\x00" in text:
        raise UsageError(f"note {rel} refused: it is binary (it holds NUL bytes), not text")
    if not text.strip():
        raise UsageError(f"note {rel} refused: it is empty, so there is nothing to bind")
    return text


def _title(kind: str, name: str, text: str) -> str:
    first = next(
        (line.strip().lstrip("#").strip() for line in text.splitlines() if line.strip()), ""
    )
    if len(first) > TITLE_CHARS:
        first = first[:TITLE_CHARS].rsplit(" ", 1)[0] + "…"
    title = f"{kind} note {name}"
    return f"{title}: {first}" if first and first != name else title


def _body(source: str, rel: str, text: str) -> str:
    """The sidecar's body: the note quoted line by line, so none of its headings or fences
    become the sidecar's own."""
    quoted = "\n".join(f"> {line}".rstrip() for line in text.strip("\n").splitlines())
    return (
        f"The {source} note (`{rel}`), read only, bound to the code it is about. "
        f"It drifts when the note changes.\n\n## {NOTE_SECTION}\n\n{quoted}"
    )
