"""What an agent's hooks are told: memories about the code a session or a prompt touches.

* **session start**: memories about files changed in the working tree (staged, unstaged,
  untracked) and in the last few commits, as git says (`git.py`: nothing the repository
  configures runs).
* **prompt**: memories about the files and symbols the prompt names (`prompt_names`),
  matched against the references the recall index stored for each memory, so no memory
  file is parsed to decide; a prompt starting `remember:` is written as a memory instead,
  through the one write path (`memory_writes.add`), deterministically, with no model.

Only the matched memories are checked (never the whole workspace), retired ones and
other agents' (a hook reads as no agent: `namespaces.visible`) are left out, and the
text is rendered by `framing` (untrusted data, delimited, trust beside it).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from moor_engine.framing import Framed, frame, framed
from moor_engine.git import git_all
from moor_engine.namespaces import visible
from moor_engine.prompt_names import Names, prompt_names, remembered
from moor_engine.session import Session
from moor_engine.trust import State

RECENT_COMMITS = 5
MAX_MEMORIES = 12  # a hook's context is read on every turn: the closest few, not all


@dataclass(frozen=True)
class HookAnswer:
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


def _split(ref: str) -> tuple[str, str | None]:
    path, hashed, symbol = ref.partition("#")
    return path.removeprefix("./"), (symbol if hashed and symbol else None)


def ref_matches(ref: str, names: Names) -> bool:
    """Whether a memory's reference names code the prompt names."""
    path, symbol = _split(ref)
    if path in names.paths or ref in names.refs:
        return True
    if symbol is None:
        return False
    last = symbol.rsplit(".", 1)[-1]
    return symbol in names.identifiers or last in names.identifiers


def matching(references: dict[str, list[str]], names: Names) -> list[str]:
    return sorted(
        path for path, refs in references.items() if any(ref_matches(r, names) for r in refs)
    )


def about_files(references: dict[str, list[str]], files: Collection[str]) -> list[str]:
    return sorted(
        path for path, refs in references.items() if any(_split(r)[0] in files for r in refs)
    )


def _references(session: Session) -> tuple[dict[str, list[str]], list[str]]:
    from moor_engine.recall_index import ready_index

    index, status = ready_index(session)
    try:
        return index.references(), status.declaring
    finally:
        index.close()


def framed_memories(session: Session, paths: list[str], declaring: list[str]) -> HookAnswer:
    """The memories at `paths`, checked (nothing journalled) and framed; retired left out."""
    if not paths:
        return HookAnswer("")
    wanted = set(paths)
    evaluation = session.evaluate(list(dict.fromkeys([*paths, *declaring])))
    shown: list[Framed] = []
    for report in evaluation.report.memories:
        loaded = evaluation.loaded.get(report.path)
        if report.path not in wanted or report.state is State.RETIRED:
            continue
        if loaded is None or loaded.memory is None:
            continue
        if not visible(loaded.memory.agent, None):  # a hook reads as no agent: shared only
            continue
        shown.append(framed(report, loaded.memory))
    # Memories that need a look first: the agent should verify those before relying on them.
    shown.sort(key=lambda item: (item.state == State.CURRENT.value, item.path))
    shown = shown[:MAX_MEMORIES]
    if not shown:
        return HookAnswer("")
    return HookAnswer(frame(shown), tuple(item.path for item in shown))


def session_start(session: Session) -> HookAnswer:
    references, declaring = _references(session)
    return framed_memories(session, about_files(references, changed_files(session)), declaring)


def prompt(session: Session, text: str) -> HookAnswer:
    """The answer to a prompt: a write for `remember:`, else the memories it names."""
    note = remembered(text)
    if note is not None:
        return remember(session, note)
    references, declaring = _references(session)
    return framed_memories(session, matching(references, prompt_names(text)), declaring)


def remember(session: Session, note: str) -> HookAnswer:
    """Write `note` as a new memory about the existing files and symbols it names."""
    from moor_engine.memory_writes import Draft, add

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
    lines += [f"already known here: {known.path} ({known.title})" for known in written.known_here]
    return HookAnswer("\n".join(lines), (written.path or "",))


def _about_of(session: Session, names: Names) -> list[str]:
    """The references a note names that exist now: `path#Symbol` with an existing file,
    and existing files. A name that resolves to nothing is left out, never guessed at."""
    root = session.workspace.root
    about = [ref for ref in sorted(names.refs) if (root / _split(ref)[0]).is_file()]
    named = {_split(ref)[0] for ref in about}
    about += [path for path in sorted(names.paths) if path not in named and (root / path).is_file()]
    return about
