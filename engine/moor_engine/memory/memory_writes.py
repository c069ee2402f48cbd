"""The one write path for memories: add, edit, supersede, forget, restore (ARCHITECTURE.md,
"The path of one write").

Every surface (CLI, editor, MCP) calls these; each returns a structured `Written` and
renders nothing. One action is one unit under the workspace write lock: it validates, then
decides every file's new bytes (the memory, moor.lock) and its journal entries, and
`Session.commit` writes them through the intent record (`moor_store.intent`).

* **add** validates each reference (it must name code that exists now: the did-you-mean
  suggestions when it does not), refuses a text whose value is tombstoned and a path that
  exists (naming `moor edit`), writes `memories/<slug>.md` exclusively, and binds it.
* **edit** replaces one section and carries the content hash it was based on: a file that
  changed since is a conflict, never overwritten.
* **supersede**, **forget** and **restore** (`latch_actions.py`) set and lift the latches
  (`latch.py`), with the same `Written` results.

Every write returns the live memories already bound to the same anchors ("already known
here"): found by canonical reference, never by similarity, never merged.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from moor_extractors.memory import CONFIDENCE_LEVELS, Memory, parse_memory
from moor_extractors.memory_text import (
    NewMemory,
    compose,
    replace_section,
    section_names,
    slug,
    title_of,
)
from moor_extractors.model import Failure
from moor_extractors.reference import Reference, parse_reference, resolve_path
from moor_store.inside import NotInside, exists_inside, read_inside
from moor_store.intent import Change
from moor_store.journal import NewEntry
from moor_store.lockfile import LockedMemory, format_lock

from moor_engine.agents.framing import neutralise
from moor_engine.anchors.machine import is_custom
from moor_engine.grounding.check import locked_anchor_from
from moor_engine.grounding.memories import (
    LoadedMemory,
    load_memories,
    loaded_lock_content,
    lock_content,
)
from moor_engine.grounding.observe import Found
from moor_engine.grounding.places import place_seal
from moor_engine.grounding.suggest import suggestions
from moor_engine.grounding.trust import State
from moor_engine.memory import namespaces, retired_text
from moor_engine.memory.latch import (
    Latches,
    latch_declared,
    read_latches,
    stamp,
)
from moor_engine.memory.retired_here import Retired
from moor_engine.session import Session
from moor_engine.usage import UsageError
from moor_engine.workspace.git import git
from moor_engine.written import Known, Refusal, Written

# Called after every write that changed a memory file, with the session and the result:
# where an index of memories (recall) keeps itself up to date.
AFTER_WRITE: list[Callable[[Session, Written], None]] = []


def after_write(session: Session, written: Written) -> Written:
    if written.ok and written.path is not None:
        for hook in AFTER_WRITE:
            hook(session, written)
    return written


# --- add ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Draft:
    """What a person or an agent asks to be written as a new memory."""

    text: str
    about: Sequence[str] = ()
    title: str | None = None
    confidence: str = "unverified"
    author: str | None = None
    agent: str | None = None
    questions: Sequence[str] = ()
    supersedes: Sequence[str] = ()
    # A sidecar (`moor source bind`, `sources.py`): its fixed path, its `source:` key, the
    # reason journalled with it, and why an existing file at the path is refused.
    path: str | None = None
    source: str | None = None
    why: str | None = None
    instead: str | None = None


def add(session: Session, draft: Draft) -> Written:
    """Write a new memory and bind it, as one unit; refusals write nothing."""
    if not draft.text.strip():
        raise UsageError('a memory needs some text: moor add "..."')
    if draft.confidence not in CONFIDENCE_LEVELS:
        raise UsageError(f"--confidence must be one of: {', '.join(CONFIDENCE_LEVELS)}")
    namespaces.reader(draft.agent)  # an invalid `agent:` would make the memory invisible
    with session.writing("moor add"):
        return after_write(session, _add(session, draft))


def _add(session: Session, draft: Draft) -> Written:
    written = Written("add")
    refs = _references(session, draft.about, written)
    supersedes = [memory_arg(session, p, "--supersedes", written) for p in draft.supersedes]
    if written.refused:
        return written
    founds = _observe(session, refs, written)
    title, body = title_of(draft.text)
    if draft.title and draft.title.strip():
        title, body = " ".join(draft.title.split()), draft.text.strip()
    path = draft.path or f"{session.workspace.config.memory_roots[0].rstrip('/')}/{slug(title)}.md"
    written.path = path
    questions = list(draft.questions) or [_default_question(refs)]
    author = draft.author or _author(session)
    text = compose(
        NewMemory(
            title=title,
            body=body,
            about=[ref.canonical() for ref in refs],
            confidence=draft.confidence,
            created=stamp(),
            questions=questions,
            author=author,
            agent=draft.agent,
            supersedes=[p for p in supersedes if p is not None],
            source=draft.source,
        )
    )
    data = text.encode("utf-8")
    memory = _parsed(path, data, written)
    if memory is None or written.refused:
        return written
    latches = read_latches(session.lock, session.journal)
    _refuse_retired(session, path, memory, latches, written)
    if exists_inside(session.workspace.root, path):
        written.refused.append(_exists(session, path, draft.agent, draft.instead))
    if written.refused:
        return written
    change = Change("moor add")
    anchors = {
        canonical: locked_anchor_from(ref, found) for canonical, (ref, found) in founds.items()
    }
    entries = [
        NewEntry("open", canonical, memory=path, address=found.address, code="bind")
        for canonical, (_ref, found) in founds.items()
    ]
    for canonical, (_ref, found) in founds.items():
        _seal(session, found, change, canonical)
    lock = session.lock.with_memory(LockedMemory(path, memory.content_hash, anchors))
    lock, retiring = latch_declared(session.workspace.root, lock, latches, [(path, memory)])
    entries += retiring
    written.done.extend(f"{e.memory}: retired ({e.detail})" for e in retiring)
    entries.append(
        NewEntry(
            "revise",
            f"memory:{path}",
            memory=path,
            reason=draft.why,
            code="add",
            detail=f"written by {draft.agent or author}",
            data={"hash": memory.content_hash},
        )
    )
    change.create(path, data)
    change.write("moor.lock", session.lock_bytes, format_lock(lock).encode("utf-8"))
    change.entries = entries
    try:
        session.commit(change)
    except FileExistsError:  # created by hand since it was looked at
        written.refused.append(_exists(session, path, draft.agent, draft.instead))
        return written
    session.lock = lock
    session.observer.flush()
    written.content_hash = memory.content_hash
    written.done.insert(0, f"{path}: written and bound to {len(anchors)} anchor(s)")
    written.known_here = known_here(session, path, set(anchors), draft.agent)
    return written


def _default_question(refs: list[Reference]) -> str:
    if not refs:
        return "What would make this stop being true?"
    names = ", ".join(ref.canonical() for ref in refs)
    return f"Does this still hold now that {names} changed?"


def _author(session: Session) -> str | None:
    name = git(session.workspace.root, "config", "user.name")
    if name is not None and name.strip():
        return name.decode("utf-8", "replace").strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return None


def _references(session: Session, raws: Sequence[str], written: Written) -> list[Reference]:
    """Each `--about`, parsed and contained (duplicates of one anchor kept once)."""
    refs: dict[str, Reference] = {}
    for raw in raws:
        ref = parse_reference(raw.strip())
        if isinstance(ref, Failure):
            written.refused.append(Refusal(ref.code, f"--about {raw}: {ref.detail}", ref=raw))
            continue
        if ref.path is None:
            if ref.canonical() in session.lock.closed:
                written.refused.append(
                    Refusal("anchor_closed", f"--about {raw}: the anchor is closed", ref=raw)
                )
            elif ref.anchor not in session.workspace.config.anchors:
                written.refused.append(
                    Refusal(
                        "undeclared_anchor",
                        f"--about {raw}: no [anchors.{ref.anchor}] is declared in moor.toml",
                        ref=raw,
                    )
                )
            else:
                refs.setdefault(ref.canonical(), ref)
            continue
        contained = resolve_path(session.workspace.root, ref.path)
        if isinstance(contained, Failure):
            written.refused.append(
                Refusal(contained.code, f"--about {raw}: {contained.detail}", ref=raw)
            )
            continue
        refs.setdefault(ref.canonical(), ref)
    return list(refs.values())


def _observe(
    session: Session, refs: list[Reference], written: Written
) -> dict[str, tuple[Reference, Found]]:
    """Each reference's code as it is now; a reference that names nothing is refused, with
    the references close to it."""
    founds: dict[str, tuple[Reference, Found]] = {}
    for ref in refs:
        observation = session.observer.observe(ref)
        if isinstance(observation, Found):
            founds[ref.canonical()] = (ref, observation)
        elif isinstance(observation, Failure):
            written.refused.append(
                Refusal(
                    observation.code,
                    f"--about {ref.canonical()}: cannot be observed: {observation.detail}",
                    ref=ref.canonical(),
                )
            )
        elif ref.path is None:
            written.refused.append(
                Refusal(
                    "not_found",
                    f"--about {ref.canonical()}: its command observes nothing (it printed null)",
                    ref=ref.canonical(),
                )
            )
        else:
            near = suggestions(session.workspace, session.observer, ref)
            message = f"--about {ref.canonical()}: it names nothing that exists"
            if near:
                message += f"; did you mean {', '.join(near)}?"
            written.refused.append(
                Refusal("not_found", message, ref=ref.canonical(), suggestions=tuple(near))
            )
    return founds


def _seal(session: Session, found: Found, change: Change, canonical: str) -> None:
    if is_custom(canonical):  # a command anchor: its facts, not a file
        change.seals.extend(session.commands.seals(found.address) if session.commands else [])
        return
    view = session.observer.view(found.path)
    if view is not None and not isinstance(view, Failure):
        change.seals.append((found.address, view.source_text(found.site)))
        change.seals.extend(place_seal(view, found, canonical))


def _parsed(path: str, data: bytes, written: Written) -> Memory | None:
    parsed = parse_memory(path, data)
    if parsed.memory is None:
        written.refused.append(
            Refusal(
                "would_not_parse",
                f"{path}: the memory would not parse: "
                + "; ".join(p.message for p in parsed.problems),
                path=path,
            )
        )
    return parsed.memory


def _refuse_retired(
    session: Session, path: str, memory: Memory, latches: Latches, written: Written
) -> None:
    refused = retired_text.refusal(session, path, memory, latches)
    if refused is not None:
        written.refused.append(refused)


def _exists(session: Session, path: str, agent: str | None, instead: str | None = None) -> Refusal:
    """A new memory's path is taken. The file is there for anyone to see, but the memory's
    hash and the edit that would change it are told only to a writer who may read it.
    `instead` words what to do for a caller with its own alternative (`moor source bind`)."""
    current = None
    readable = False
    try:
        parsed = parse_memory(path, read_inside(session.workspace.root, path))
        current = parsed.memory.content_hash if parsed.memory is not None else None
        readable = namespaces.sees(parsed.memory, agent)
    except OSError:
        pass
    if not readable:
        return Refusal(
            "exists",
            f"{path} exists: a new memory never overwrites one; give another --title",
            path=path,
        )
    edit = f'moor edit {path} --section NAME --text "..." --base-hash {current or "HASH"}'
    return Refusal(
        "exists",
        f"{path} exists: {instead}"
        if instead is not None
        else f"{path} exists: a new memory never overwrites one; edit it instead, or give "
        "another --title",
        path=path,
        instead=edit,
        current_hash=current,
    )


def relative_arg(session: Session, arg: str, what: str, written: Written) -> str | None:
    """A command-line path as a workspace-relative one, or None with the refusal added."""
    try:
        return session.relative_arg(arg)
    except UsageError as error:
        written.refused.append(Refusal("outside_workspace", f"{what} {arg}: {error}"))
    except NotInside as error:  # a path no file can have: its message names it, shortened
        written.refused.append(Refusal(error.code, f"{what}: {error}"))
    return None


def memory_arg(session: Session, arg: str, what: str, written: Written) -> str | None:
    """A command-line memory path as a workspace-relative one, refused unless it is an
    existing memory file."""
    rel = relative_arg(session, arg, what, written)
    if rel is None:
        return None
    if not session.workspace.is_memory_path(rel) or not exists_inside(session.workspace.root, rel):
        written.refused.append(
            Refusal(
                "not_a_memory",
                f"{what} {arg}: no memory file there (under "
                f"{', '.join(session.workspace.config.memory_roots)})",
                path=rel,
            )
        )
        return None
    return rel


# --- what is already known here -------------------------------------------------------------


def known_here(
    session: Session, path: str, anchors: set[str], agent: str | None = None
) -> list[Known]:
    """Memories bound in moor.lock to any of `anchors`, by canonical reference: live ones
    with their trust state now, then retired ones — superseded, a forgotten text written
    back, and forgotten ones this clone's journal kept — each with why it was retired, so a
    paraphrase of a retired claim is shown its sibling. Only those visible to the writing
    `agent` (`namespaces.visible`; no agent named, as an edit or a retirement: shared ones
    only)."""
    if not anchors:
        return []
    sharing = {
        other: sorted(anchors.intersection(locked.anchors))
        for other, locked in session.lock.memories.items()
        if other != path
    }
    sharing = {
        other: shared
        for other, shared in sharing.items()
        if shared and exists_inside(session.workspace.root, other)
    }
    known: list[Known] = []
    if sharing:
        evaluation = session.checker.evaluate(sorted(sharing))
        known = [
            Known(
                m.path,
                m.title,
                m.state.value,
                tuple(sharing[m.path]),
                m.notes[0] if m.state == State.RETIRED and m.notes else "",
            )
            for m in evaluation.report.memories
            if m.state != State.INVALID
            and namespaces.sees(_memory(evaluation.loaded.get(m.path)), agent)
        ]
        known.sort(key=lambda k: k.state == State.RETIRED.value)  # live ones first
    return known + Retired(session, agent).here(path, anchors, superseded=False)


def _memory(loaded: LoadedMemory | None) -> Memory | None:
    return None if loaded is None else loaded.memory


# --- edit -----------------------------------------------------------------------------------


def edit(
    session: Session, path: str, section: str, text: str, base_hash: str, why: str | None = None
) -> Written:
    """Replace what is under one heading of a memory, if the memory is still the text whose
    content hash is `base_hash`; a conflict otherwise."""
    written = Written("edit")
    rel = memory_arg(session, path, "edit", written)
    if rel is None:
        return written
    with session.writing("moor edit"):
        return after_write(session, _edit(session, rel, section, text, base_hash, why, written))


def _removed_meanwhile(path: str) -> Refusal:
    """The memory was there when the edit was asked for, and gone once the edit could write
    (a `forget`, or a person, removed it while the edit waited for the write lock)."""
    return Refusal(
        "not_found",
        f"{path} was removed while this edit waited (forgotten, or deleted); nothing was "
        "written; its log says whether it was forgotten, and why",
        path=path,
    )


def _edit(
    session: Session,
    path: str,
    section: str,
    text: str,
    base_hash: str,
    why: str | None,
    written: Written,
) -> Written:
    written.path = path
    try:
        original = read_inside(
            session.workspace.root, path, limit=session.workspace.config.max_file_size
        )
    except FileNotFoundError:
        written.refused.append(_removed_meanwhile(path))
        return written
    loaded = load_memories(session.workspace, [path], None)[path]
    if loaded.memory is None:
        written.refused.append(
            Refusal(
                "invalid",
                f"{path} is invalid: "
                + "; ".join(p.message for p in loaded.problems)
                + "; fix it by hand",
                path=path,
            )
        )
        return written
    current = loaded.memory.content_hash
    if base_hash.strip() != current:
        written.refused.append(
            Refusal(
                "conflict",
                f"{path} changed since {base_hash.strip() or '(no hash)'}: it is {current} now; "
                "re-read it, then edit again with --base-hash of what you read",
                path=path,
                current_hash=current,
            )
        )
        return written
    decoded = original.decode("utf-8")
    new_text = replace_section(decoded, _as_written(decoded, section), text)
    if new_text is None:
        names = ", ".join(repr(n) for n in section_names(decoded)) or "none"
        written.refused.append(
            Refusal(
                "no_such_section",
                f"{path} has no section {section!r} (sections: {names})",
                path=path,
            )
        )
        return written
    data = new_text.encode("utf-8")
    memory = _parsed(path, data, written)
    if memory is None:
        return written
    latches = read_latches(session.lock, session.journal)
    _refuse_retired(session, path, memory, latches, written)
    if written.refused:
        return written
    change = Change("moor edit")
    lock = session.lock
    old = lock.memories.get(path)
    if old is not None and old.content == loaded_lock_content(
        session.workspace, loaded, old.anchors
    ):
        # It was reviewed as it was: the edit made through moor is the new reviewed text.
        reparsed = LoadedMemory(path, memory, entries=loaded.entries)
        entries_of = [
            (item.entry, item.ref.canonical() if item.ref is not None else None)
            for item in reparsed.entries
        ]
        content = lock_content(new_text, memory, entries_of, old.anchors)
        lock = lock.with_memory(replace(old, content=content))
    entries = [
        NewEntry(
            "revise",
            f"memory:{path}",
            memory=path,
            reason=why,
            code="edit",
            detail=f"section {section!r} rewritten",
            data={"before": current, "after": memory.content_hash},
        )
    ]
    lock, more = latch_declared(session.workspace.root, lock, latches, [(path, memory)])
    entries += more
    try:
        now = read_inside(session.workspace.root, path)
    except FileNotFoundError:
        written.refused.append(_removed_meanwhile(path))
        return written
    if now != original:
        written.refused.append(
            Refusal(
                "conflict",
                f"{path} changed while it was being edited; nothing was written",
                path=path,
            )
        )
        return written
    change.write(path, original, data)
    change.write("moor.lock", session.lock_bytes, format_lock(lock).encode("utf-8"))
    change.entries = entries
    session.commit(change)
    session.lock = lock
    written.content_hash = memory.content_hash
    written.done.append(f"{path}: section {section!r} rewritten")
    anchors = {i.ref.canonical() for i in loaded.entries if i.ref is not None}
    written.known_here = known_here(session, path, anchors)
    return written


def _as_written(text: str, name: str) -> str:
    """The heading `name` names, also as a model is shown it: a heading that forges a
    delimiter reaches a model broken (`framing.neutralise`), and an edit names it so."""
    for heading in section_names(text):
        if heading != name and neutralise(heading) == name:
            return heading
    return name


def sections_of(session: Session, path: str) -> tuple[str, str | None, list[str]]:
    """A memory's path, content hash and section names: what an edit is based on."""
    written = Written("edit")
    rel = memory_arg(session, path, "edit", written)
    if rel is None:
        refusal = written.refused[0]
        raise UsageError(refusal.message, code=refusal.code, path=refusal.path)
    data = read_inside(session.workspace.root, rel, limit=session.workspace.config.max_file_size)
    parsed = parse_memory(rel, data)
    content_hash = parsed.memory.content_hash if parsed.memory is not None else None
    return rel, content_hash, section_names(data.decode("utf-8", "replace"))
