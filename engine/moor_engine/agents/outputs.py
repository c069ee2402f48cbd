"""Which files a user's output may go into: the one rule every surface asks before moor writes
a block into a file a person or an agent named (`moor context --write FILE`), and before
`moor rules` places an AGENTS.md.

Refused: moor's own files (moor.toml, moor.lock, anything under .moor/), git's (anything
under .git/, and the files git reads from the worktree as its own configuration: .gitignore,
.gitattributes, .gitmodules — a block of Markdown there changes what git does), and
memories (any file under a memory root). A typo that names one of them would otherwise
break the next `moor check` or the repository. Names are compared case-folded: on a
case-insensitive file system `MOOR.LOCK` is moor.lock.
"""

from __future__ import annotations

import posixpath

from moor_engine.session import Session
from moor_engine.usage import UsageError
from moor_engine.workspace.roots import CONFIG_FILE, LOCK_FILE, STATE_DIR
from moor_engine.workspace.workspace import Workspace

_GIT_DIR = ".git"
_GIT_FILES = (".gitignore", ".gitattributes", ".gitmodules")


def reserved(workspace: Workspace, rel: str) -> str | None:
    """Why the workspace-relative file `rel` is not one a user's output may go into; None
    when it may."""
    names = [name.casefold() for name in rel.split("/") if name not in ("", ".")]
    if not names:
        return "it is the workspace folder itself"
    if _GIT_DIR in names:
        return "it is git's own (under .git/)"
    if STATE_DIR in names:
        return f"it is moor's own state (under {STATE_DIR}/)"
    if names[-1] in (LOCK_FILE, CONFIG_FILE):
        return f"it is moor's own {'lock' if names[-1] == LOCK_FILE else 'configuration'} file"
    if names[-1] in _GIT_FILES:
        return f"git reads it as its own configuration ({names[-1]})"
    lowered = "/".join(names)
    for root in workspace.config.memory_roots:
        folder = root.strip("/").casefold()
        if folder in ("", ".") and workspace.is_memory_path(rel):
            return "it is a memory file"
        if folder not in ("", ".") and lowered.startswith(folder + "/"):
            return f"it is under the memory folder {root}/, where every file is a memory's"
    return None


def output_target(session: Session, arg: str, what: str) -> str:
    """`arg` as the workspace-relative file `what` (e.g. "the memories block") may be
    written into; UsageError (code `reserved_path`) when `reserved` refuses it."""
    rel = session.relative_arg(arg)
    why = reserved(session.workspace, rel)
    if why is not None:
        named = rel if posixpath.normpath(arg) == rel else f"{arg} (which leads to {rel})"
        raise UsageError(
            f"{named}: moor writes no {what} there: {why}; name another file (AGENTS.md, "
            "CLAUDE.md)",
            code="reserved_path",
            path=rel,
        )
    return rel
