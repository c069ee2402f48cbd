"""Where git says a file went: evidence for relocation (`relocate.py`).

A file moved whole (`git mv`, or a move git's rename detection pairs up once staged or
committed) carries its definitions with it: the definition with the same qualified name in
the renamed file is the move, whatever else defines that name. git is asked about the change
since the memory's code was bound — from the newest commit that wrote the anchor's address
into moor.lock (`bound_code.commits_writing`), else from HEAD — to the files as they are
(git's index for new files: an untracked file is not paired).
"""

from __future__ import annotations

from moor_engine.grounding.bound_code import commits_writing
from moor_engine.workspace.git import git
from moor_engine.workspace.workspace import Workspace


def renamed_to(workspace: Workspace, path: str, address: str) -> str | None:
    """The path git records the file at `path` renamed to since `address` was bound; None
    when git records no rename of it (or there is no git)."""
    base = next(iter(commits_writing(workspace, address)), "HEAD")
    out = git(
        workspace.root,
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--relative",
        "--name-status",
        "-M",
        "-z",
        base,
        "--",
    )
    if out is None:
        return None
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    at = 0
    while at < len(fields):
        status = fields[at]
        if status.startswith(("R", "C")) and at + 2 < len(fields):
            old, new = fields[at + 1], fields[at + 2]
            if status.startswith("R") and old == path:
                return new
            at += 3
        else:
            at += 2
    return None
