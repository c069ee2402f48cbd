"""`moor check --changed-since REV`: the memories a change since REV could have affected.

For a pull request: what the branch changed, as `git diff REV...` sees it (from the merge
base of REV and HEAD, so what REV's branch did since is not this change's), plus what is
not committed yet: staged, unstaged and untracked files. A rename counts for both of its
paths. A memory is selected when its own file changed, when its entry in moor.lock
changed, or when a file one of its references names (or a file under a folder it names)
changed; a deleted file is a changed one, so a memory whose code was deleted is reported
`gone`. A changed moor.toml can change how every file is read: every memory is selected.

Everything here runs git through `git.py` (nothing the repository configures runs).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from moor_store.lockfile import LockError, parse_lock

from moor_engine.grounding.memories import load_memories
from moor_engine.session import Session
from moor_engine.usage import UsageError
from moor_engine.workspace.git import git, git_all
from moor_engine.workspace.roots import CONFIG_FILE, LOCK_FILE


@dataclass(frozen=True)
class ChangedSince:
    revision: str  # as given
    base: str  # the merge base of it and HEAD, the commit the diff starts from
    files: frozenset[str]  # workspace-relative paths that changed since `base`


def changed_files(session: Session, revision: str) -> ChangedSince:
    """The files changed between `revision`'s merge base with HEAD and the worktree;
    UsageError (exit 2) when git cannot say."""
    root = session.workspace.root
    given = f"--changed-since {revision}"
    if not revision or revision.startswith("-"):
        raise UsageError(f"{given}: not a revision (a commit, branch or tag)", code="bad_revision")
    if git(root, "rev-parse", "--is-inside-work-tree") is None:
        raise UsageError(
            f"{given}: {root} is not in a git repository, so there is no diff to follow",
            code="not_a_repository",
        )
    commit = git(
        root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"
    )
    if commit is None:
        raise UsageError(
            f"{given}: git knows no commit by that name here (in CI, fetch it first: "
            "a shallow clone has only the newest commit)",
            code="bad_revision",
        )
    resolved = commit.decode("ascii", "replace").strip()
    base = git(root, "merge-base", "--end-of-options", resolved, "HEAD")
    if base is None:
        raise UsageError(
            f"{given}: it and HEAD have no common ancestor here (a shallow clone? fetch the "
            "history, e.g. actions/checkout with fetch-depth: 0)",
            code="bad_revision",
        )
    start = base.decode("ascii", "replace").strip()
    diffed, untracked = git_all(
        root,
        # `--relative`: paths from the workspace (it may be below the repository's top),
        # changes outside it left out; `--no-renames`: a rename is both of its paths.
        ("diff", "--name-only", "-z", "--no-renames", "--relative", "--end-of-options", start),
        ("ls-files", "--others", "--exclude-standard", "-z"),
    )
    if diffed is None or untracked is None:
        raise UsageError(f"{given}: git could not list what changed since {start[:12]}")
    files = {
        name.decode("utf-8", "surrogateescape")
        for out in (diffed, untracked)
        for name in out.split(b"\0")
        if name
    }
    return ChangedSince(revision, start, frozenset(files))


def select_changed(session: Session, memories: Iterable[str], changed: ChangedSince) -> list[str]:
    """Those of `memories` that the change may have affected (the module's rules)."""
    memories = list(memories)
    if CONFIG_FILE in changed.files:
        return memories
    touched_locks = _lock_entries_changed(session, changed) if LOCK_FILE in changed.files else set()
    loaded = load_memories(session.workspace, memories, session.journal)
    selected = []
    for path in memories:
        if path in changed.files or path in touched_locks:
            selected.append(path)
            continue
        for item in loaded[path].entries:
            named = item.ref.path if item.ref is not None else None
            if named is not None and any(
                f == named or f.startswith(named.rstrip("/") + "/") for f in changed.files
            ):
                selected.append(path)
                break
    return selected


def _lock_entries_changed(session: Session, changed: ChangedSince) -> set[str]:
    """Memories whose moor.lock entry differs from the base's (all of them when the base's
    moor.lock cannot be read: whatever it held, it is not what is bound now)."""
    now = session.lock.memories
    data = git(session.workspace.root, "show", "--no-textconv", f"{changed.base}:./{LOCK_FILE}")
    if data is None:
        return set(now)  # no moor.lock at the base: every entry is new
    try:
        then = parse_lock(data.decode("utf-8")).memories
    except (LockError, UnicodeDecodeError):
        return set(now)
    return {path for path, entry in now.items() if then.get(path) != entry}
