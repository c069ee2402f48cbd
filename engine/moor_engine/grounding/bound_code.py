"""The source of code as it was when a memory was bound: for diffs and for ranking where
gone code may be now.

The journal seals it at bind time. A clone without `.moor/` (CI, a teammate's fresh
clone) has no journal, so the code is recovered from git history: the commits that
changed the anchor's address in moor.lock, newest first, each read at the anchor's path
and observed like any file. It is used only if observing it gives exactly the locked
address, so a commit whose code differs from what was bound (bound before it was
committed, say) is never shown as the bound code. An address written by an older
normaliser is one today's never computes: then the commit's code is taken as the bound
code, as re-baselining takes it (derivations.py) — else every anchor bound before an
upgrade would lose its diff, its change summary and the code relocation compares with.
"""

from __future__ import annotations

from dataclasses import dataclass

from moor_extractors.model import Failure
from moor_extractors.reference import parse_reference
from moor_store.journal import Journal
from moor_store.lockfile import LockedAnchor, LockError, parse_lock

from moor_engine.grounding.derivation_standing import Standing, standing
from moor_engine.grounding.observe import FileObserver, FileView, Found
from moor_engine.workspace.git import git
from moor_engine.workspace.workspace import LOCK_FILE, Workspace

# Commits of moor.lock looked at, newest first: the address was written by one of the
# latest few that mention it.
_MAX_COMMITS = 8


@dataclass(frozen=True)
class BoundCode:
    """The code an anchor was bound to, and where it was read from."""

    text: str
    origin: str  # "journal", or "git <commit>"


def bound_code(
    workspace: Workspace, journal: Journal | None, canonical: str, locked: LockedAnchor
) -> BoundCode | None:
    if journal is not None:
        text = journal.snapshot(locked.address)
        if text is not None:
            return BoundCode(text, "journal")
    return _from_git(workspace, canonical, locked)


def _from_git(workspace: Workspace, canonical: str, locked: LockedAnchor) -> BoundCode | None:
    bound = _bound_in_git(workspace, canonical, locked)
    if bound is None:
        return None
    view, found, commit = bound
    return BoundCode(view.source_text(found.site), f"git {commit[:12]}")


def bound_view(workspace: Workspace, canonical: str, locked: LockedAnchor) -> FileView | None:
    """The anchor's file as it was at the commit that bound it as `locked` (None: git
    history does not have it)."""
    bound = _bound_in_git(workspace, canonical, locked)
    return bound[0] if bound is not None else None


def _bound_in_git(
    workspace: Workspace, canonical: str, locked: LockedAnchor
) -> tuple[FileView, Found, str] | None:
    address = locked.address
    for commit in commits_writing(workspace, address):
        # The anchor as it was named in that commit: after a follow the lock keeps the
        # bound address under the new reference, and the code was at the old one.
        for ref_text in refs_with_address(workspace, commit, address) or [canonical]:
            found = _observed_at(workspace, commit, ref_text, locked)
            if found is not None:
                return (*found, commit)
    return None


def commits_writing(workspace: Workspace, address: str) -> list[str]:
    """The commits that wrote `address` into moor.lock, newest first (at most a few)."""
    if not (workspace.root / ".git").exists():
        return []
    for merges in ((), ("--diff-merges=first-parent", "--no-patch")):
        # A merge commit only when no other wrote it: an entry written while merging exists
        # nowhere else, but one that came in with the merge was written — with the code it
        # was bound to — on the other side, and the merged file may hold this side's edits.
        commits = git(
            workspace.root,
            "log",
            "--format=%H",
            "--no-textconv",
            "--no-ext-diff",
            *merges,
            f"-n{_MAX_COMMITS}",
            "-S",
            address,
            "--",
            LOCK_FILE,
        )
        # -S also lists the commits that took the address out (a reaffirm, a re-baseline):
        # only those whose lock holds it were made with the code it was bound to.
        found = [
            commit
            for commit in (commits or b"").decode("ascii", "replace").split()
            if address.encode() in (git(workspace.root, "show", f"{commit}:./{LOCK_FILE}") or b"")
        ]
        if found:
            return found
    return []


def refs_with_address(workspace: Workspace, commit: str, address: str) -> list[str]:
    data = git(workspace.root, "show", "--no-textconv", f"{commit}:./{LOCK_FILE}")
    if data is None:
        return []
    try:
        lock = parse_lock(data.decode("utf-8"))
    except (LockError, UnicodeDecodeError):
        return []
    return sorted(
        {
            anchor.ref
            for memory in lock.memories.values()
            for anchor in memory.anchors.values()
            if anchor.address == address
        }
    )


def _observed_at(
    workspace: Workspace, commit: str, canonical: str, locked: LockedAnchor
) -> tuple[FileView, Found] | None:
    ref = parse_reference(canonical)
    if isinstance(ref, Failure) or ref.path is None:
        return None
    data = git(workspace.root, "show", "--no-textconv", f"{commit}:./{ref.path}")
    if data is None:
        return None
    observer = FileObserver(workspace.root, workspace.config.max_file_size, None)
    observer.assume(ref.path, data)
    observation = observer.observe(ref)
    if isinstance(observation, Found) and (
        observation.address == locked.address
        or standing(locked.derivation, observation.derivation) == Standing.OLDER
    ):
        view = observer.view(ref.path)
        assert isinstance(view, FileView)
        return view, observation
    return None
