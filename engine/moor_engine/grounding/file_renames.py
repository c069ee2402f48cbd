"""Where git says a file went: evidence for relocation (`relocate.py`).

A file moved whole (`git mv`, or a move git's rename detection pairs up once staged or
committed) carries its definitions with it: the definition with the same qualified name in
the renamed file is the move, whatever else defines that name. git is asked about the change
since the memory's code was bound — each commit since the newest one that wrote the
anchor's address into moor.lock (`bound_code.commits_writing`), then the files as they are
against HEAD (git's index for new files: an untracked file is not paired).
"""

from __future__ import annotations

from moor_engine.grounding.bound_code import commits_writing
from moor_engine.workspace.git import git
from moor_engine.workspace.workspace import Workspace


def renamed_to(workspace: Workspace, path: str, address: str) -> str | None:
    """The path git records the file at `path` renamed to since `address` was bound (each
    commit's renames in turn, then what is staged or changed since HEAD); None when git
    records no rename of it (or there is no git). Commit by commit, because a file moved
    and then edited over many commits is no longer similar enough to pair across all of
    them at once."""
    renames: list[tuple[str, str]] = []
    base = next(iter(commits_writing(workspace, address)), None)
    if base is not None:
        out = git(
            workspace.root,
            *("log", "--format=", "--reverse", "--diff-filter=R", *_NAME_STATUS),
            f"{base}..HEAD",
            "--",
        )
        renames += _renames(out)
    renames += _renames(git(workspace.root, "diff", *_NAME_STATUS, "HEAD", "--"))
    now = path
    for old, new in renames:
        if old == now:
            now = new
    return now if now != path else None


_NAME_STATUS = ("--no-ext-diff", "--no-textconv", "--relative", "--name-status", "-M", "-z")


def _renames(out: bytes | None) -> list[tuple[str, str]]:
    """(old, new) of each rename in git's `--name-status -z` output, in order."""
    if out is None:
        return []
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    found: list[tuple[str, str]] = []
    at = 0
    while at < len(fields):
        status = fields[at]
        if status[:1] in ("R", "C") and at + 2 < len(fields):
            if status[:1] == "R":
                found.append((fields[at + 1], fields[at + 2]))
            at += 3
        elif status[:1].isalpha():
            at += 2
        else:
            at += 1  # between commits
    return found
