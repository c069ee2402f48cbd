"""What an agent's hooks are told: memories about the code a session or a prompt touches.

* **session start**: memories about files changed in the working tree (staged, unstaged,
  untracked) and in the last few commits, as git says (`git.py`: nothing the repository
  configures runs).
* **prompt**: memories about the files and symbols the prompt names (`prompt_names`),
  matched against the references the recall index stored for each memory, so no memory
  file is parsed to decide; a prompt starting `remember:` is written as a memory instead,
  through the one write path (`memory_writes.add`), deterministically, with no model.

Only the matched memories are checked (never the whole workspace), retired ones and
other agents' (a hook reads as no agent: `namespaces.visible`) are left out — a retired one
is named, with why, beside each shown memory on the same code (`retired_here`) — and the
text is rendered by `framing` (untrusted data, delimited, trust beside it, dated from the
journal where it can be: `since.py`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass

from moor_extractors.reference import Reference, parse_reference
from moor_store.inside import NotInside

from moor_engine.agents import hook_answers
from moor_engine.agents.framing import Framed, frame, framed
from moor_engine.agents.hook_answers import shown_first
from moor_engine.agents.prompt_names import (
    Names,
    about_files,
    matching,
    prompt_names,
    remembered,
    split_ref,
)
from moor_engine.agents.since import since
from moor_engine.grounding.trust import MemoryReport, State
from moor_engine.memory.namespaces import visible
from moor_engine.memory.retired_here import Retired, beside
from moor_engine.session import Session
from moor_engine.workspace.git import git_all

RECENT_COMMITS = 5
_KEPT_STATES = frozenset({State.CURRENT, State.DRIFTED})


@dataclass(frozen=True)
class HookAnswer:
    """What a hook gives the agent: the framed memories, and which they are."""

    context: str  # what the agent is given ("" when nothing matched)
    memories: tuple[str, ...] = ()


def changed_files(session: Session) -> set[str]:
    """Workspace-relative files changed in the working tree and the recent commits."""
    root = session.workspace.root
    outputs = git_all(
        root,
        ("diff", "--name-only", "-z", "HEAD"),
        ("ls-files", "--others", "--exclude-standard", "-z"),
        ("log", f"-{RECENT_COMMITS}", "--name-only", "-z", "--format="),
        ("rev-parse", "--show-prefix"),
    )
    prefix = (outputs[3] or b"").decode("utf-8", "replace").strip()
    found: set[str] = set()
    for out in outputs[:3]:
        for name in (out or b"").split(b"\0"):
            text = name.decode("utf-8", "replace").strip()
            # git names paths from the repository's top; the workspace may be below it.
            if text and text.startswith(prefix):
                found.add(text[len(prefix) :])
    return found


def references_of(session: Session) -> tuple[dict[str, list[str]], list[str]]:
    """Every memory's stored references (by memory path) and the memories that declare
    `supersedes:`, from the recall index: no memory file is parsed to know them."""
    from moor_engine.memory.recall_index import kept_index, ready_index

    kept = kept_index(session.workspace.root)
    if kept is not None:  # a hook server: synced by what its watch saw change
        return kept.references(session)
    index, status = ready_index(session)
    try:
        return index.references(), status.declaring
    finally:
        index.close()


def framed_memories(session: Session, paths: list[str], declaring: list[str]) -> HookAnswer:
    """The memories at `paths`, checked (nothing journalled) and framed; retired left out."""
    answer, _verdicts = _framed(session, paths, declaring)
    return answer


Verdicts = dict[str, tuple[Framed | None, tuple[str, ...] | None]]


def _framed(
    session: Session, paths: list[str], declaring: list[str]
) -> tuple[HookAnswer, Verdicts]:
    """The answer, and per memory what the hook shows of it (None: nothing) with the files
    that verdict rests on (None: more than files, so it is not kept: `hook_answers`)."""
    if not paths:
        return HookAnswer(""), {}
    wanted = set(paths)
    evaluation = session.evaluate(list(dict.fromkeys([*paths, *declaring])))
    dates = since(session.journal, (r for r in evaluation.report.memories if r.path in wanted))
    shown: list[Framed] = []
    verdicts: Verdicts = {}
    beside = RetiredBeside(session)
    for report in evaluation.report.memories:
        loaded = evaluation.loaded.get(report.path)
        if report.path not in wanted:
            continue
        if loaded is None or loaded.memory is None:
            verdicts[report.path] = (None, None)
            continue
        # Retired, or another agent's (a hook reads as no agent: shared only): not shown.
        if report.state is State.RETIRED or not visible(loaded.memory.agent, None):
            verdicts[report.path] = (None, ())
            continue
        item = framed(report, loaded.memory, dates, beside.of(report))
        shown.append(item)
        verdicts[report.path] = (item, _resting_on(report, dates))
    chosen = shown_first(shown)
    if not chosen:
        return HookAnswer(""), verdicts
    return HookAnswer(frame(chosen), tuple(item.path for item in chosen)), verdicts


class RetiredBeside:
    """The retired memories on a shown memory's code, worded for a hook; the latches are
    read once, on the first memory shown (a hook reads as no agent)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._retired: Retired | None = None

    def of(self, report: MemoryReport) -> list[str]:
        if self._retired is None:
            self._retired = Retired(self._session, None)
        anchors = {anchor.canonical for anchor in report.anchors if anchor.canonical}
        return [beside(known) for known in self._retired.here(report.path, anchors)]


def _resting_on(report: MemoryReport, dates: Mapping[str, str]) -> tuple[str, ...] | None:
    """The files a current or drifted memory's verdict was read from; None for any other
    verdict (a moved or gone anchor was searched for across the workspace), and for a
    drifted anchor the journal does not date yet: a journalling check may date it without
    touching a file, and the date stays only while the anchor's files do."""
    if report.state not in _KEPT_STATES:
        return None
    files: set[str] = set()
    for anchor in report.anchors:
        if anchor.state not in _KEPT_STATES or anchor.canonical is None:
            return None
        if anchor.state is State.DRIFTED and anchor.canonical not in dates:
            return None
        reference = parse_reference(anchor.canonical)
        if not isinstance(reference, Reference) or reference.path is None:
            return None
        files.add(reference.path)
    return tuple(sorted(files))


def session_start(session: Session, payload: Mapping[str, object] | None = None) -> HookAnswer:
    """The memories about the files changed lately; after a compaction (`source` is
    `compact`), with the memories this session's tool hooks touched before it, so the new
    context keeps them (Claude Code's PreCompact hook can add nothing to a context)."""
    references, declaring = references_of(session)
    paths = about_files(references, changed_files(session))
    if payload is not None and payload.get("source") == "compact":
        from moor_engine.agents import hook_sessions

        noted = hook_sessions.touched(session.workspace.root, payload.get("session_id"))
        on_disk = set(session.workspace.memory_paths())
        paths = sorted({*paths, *(path for path in noted if path in on_disk)})
    return framed_memories(session, paths, declaring)


def prompt(session: Session, text: str, kept: hook_answers.Kept | None = None) -> HookAnswer:
    """The answer to a prompt: a write for `remember:`, else the memories it names (and the
    answer is kept for the next prompt, with what vouches for it: `hook_answers`).

    `kept`: the last kept answer, whose workspace keys still hold. Then no memory was
    added, removed or edited since, so the references kept with it are the ones the recall
    index would give: the index is not brought up to date, nor the workspace walked."""
    note = remembered(text)
    if note is not None:
        return remember(session, note)
    root = session.workspace.root
    now = time.time_ns()  # taken first: whatever changes from here on never vouches
    if kept is not None and kept.root == root:
        # Every key was stored outside the racy window of its answer, which was earlier:
        # each is what `workspace_keys` would store now.
        workspace: hook_answers.Keys | None = kept.workspace
        references, declaring = kept.references, kept.declaring
    else:
        kept = None
        workspace = hook_answers.workspace_keys(
            root, session.workspace.config.memory_roots, session.workspace.memory_paths(), now
        )
        references, declaring = references_of(session)
    answer, verdicts = _framed(session, matching(references, prompt_names(text)), declaring)
    if workspace is not None:
        keeping: dict[str, tuple[Framed | None, hook_answers.Keys]] = {}
        for path, (item, files) in verdicts.items():
            keys = None if files is None else hook_answers.file_keys(root, files, now)
            if keys is not None:
                keeping[path] = (item, keys)
        with contextlib.suppress(OSError, NotInside):  # a cache: failing to keep it is no error
            hook_answers.keep(
                root,
                workspace,
                hook_answers.code_keys(now)
                if kept is None
                else hook_answers.kept_code_keys(kept, now),
                references,
                declaring,
                keeping,
                kept,
            )
    return answer


def remember(session: Session, note: str) -> HookAnswer:
    """Write `note` as a new memory about the existing files and symbols it names."""
    from moor_engine.memory.memory_writes import Draft, add

    if not note:
        return HookAnswer("moor: nothing to remember: write the memory after `remember:`")
    about = _about_of(session, prompt_names(note))
    written = add(session, Draft(text=note, about=about))
    if not written.ok:
        reasons = "; ".join(refusal.message for refusal in written.refused)
        return HookAnswer(f"moor: not remembered: {reasons}")
    lines = [f"moor: remembered as {written.path}"]
    if about:
        lines.append(f"about: {', '.join(about)}")
    lines += [
        f"already known here: {known.path} ({known.title})"
        + (f" - {known.retired_because}" if known.retired_because else "")
        for known in written.known_here
    ]
    return HookAnswer("\n".join(lines), (written.path or "",))


def _about_of(session: Session, names: Names) -> list[str]:
    """The references a note names that exist now: `path#Symbol` with an existing file,
    and existing files. A name that resolves to nothing is left out, never guessed at."""
    root = session.workspace.root
    about = [ref for ref in sorted(names.refs) if (root / split_ref(ref)[0]).is_file()]
    named = {split_ref(ref)[0] for ref in about}
    about += [path for path in sorted(names.paths) if path not in named and (root / path).is_file()]
    return about
