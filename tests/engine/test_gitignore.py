"""What git ignores, as moor reads it, agrees with git itself."""

from __future__ import annotations

import subprocess

from moor_engine.workspace.gitignore import GitIgnores

from tests.conftest import Workspace

PATHS = [
    "a.log",
    "keep.log",
    "sub/keep.log",
    "build/x.py",
    "build/keep.log",  # re-included by `!keep.log`, but inside an ignored folder
    "sub/build/x.py",
    "top.txt",
    "sub/top.txt",
    "a.py",
    "sub/a.py",
    "sub/keep.py",
    "sub/deeper/b.py",
    "sub/local.txt",
    "local.txt",
    "secret.txt",
    "sub/secret.md",
    "docs/a/b/draft.md",
    "docs/draft.md",
    "docs/final.md",
]


def test_nested_ignore_files_negations_and_the_repositorys_excludes_match_git(
    ws: Workspace,
) -> None:
    subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    ws.write(".gitignore", "*.log\n!keep.log\nbuild/\n/top.txt\ndocs/**/draft.md\n")
    ws.write("sub/.gitignore", "*.py\n!keep.py\n/local.txt\n")
    ws.write(".git/info/exclude", "secret*\n")
    for rel in PATHS:
        ws.write(rel, "x\n")
    by_git = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=ws.root,
        input="\n".join(PATHS) + "\n",
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    ignores = GitIgnores(ws.root)
    by_moor = [rel for rel in PATHS if ignores.ignored(rel)]
    assert by_moor == by_git
    # The setup can tell both ways: some paths are ignored and some are not.
    assert {"sub/a.py", "build/keep.log", "secret.txt"} <= set(by_moor)
    assert {"keep.log", "sub/keep.py", "sub/top.txt", "docs/final.md"}.isdisjoint(by_moor)


def test_an_ignore_file_edited_is_read_again_after_forget(ws: Workspace) -> None:
    ws.write(".gitignore", "*.tmp\n")
    ignores = GitIgnores(ws.root)
    assert ignores.ignored("a.tmp") and not ignores.ignored("a.py")
    ws.write(".gitignore", "*.py\n")
    assert ignores.ignored("a.tmp")  # remembered until told
    ignores.forget()
    assert ignores.ignored("a.py") and not ignores.ignored("a.tmp")
