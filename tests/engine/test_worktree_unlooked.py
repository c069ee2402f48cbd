"""The entries `diff-files` does not vouch for (git told not to look at them, or unmerged)
are found by a few counts when there are none, and by name when there are (issue 22.4):
the quick answer is never "none" while one exists."""

from __future__ import annotations

import subprocess

from moor_engine.workspace.worktree import look

from tests.conftest import Workspace


def committed(ws: Workspace, *rels: str) -> None:
    for rel in rels:
        ws.write(rel, f"# {rel}\n")
    ws.git("init", "-q")
    ws.git("add", "-A")
    ws.git("commit", "-qm", "code")


def test_an_unmerged_entry_is_never_answered_as_none(ws: Workspace) -> None:
    committed(ws, "a.py", "b.py")
    looked = look(ws.root)
    assert looked is not None and looked._unlooked() == set()  # the control: none
    blob = ws.git("hash-object", "-w", "a.py").strip()
    entries = "".join(f"100644 {blob} {stage}\tb.py\n" for stage in (1, 2, 3))
    ws.git("update-index", "--force-remove", "b.py")
    subprocess.run(
        ["git", "update-index", "--index-info"], cwd=ws.root, input=entries.encode(), check=True
    )
    looked = look(ws.root)
    assert looked is not None and looked._unlooked() == {"b.py"}


def test_a_path_holding_a_tab_or_a_stage_spelling_does_not_fool_the_counts(
    ws: Workspace,
) -> None:
    committed(ws, "a.py", "x 0\ty.py")  # its name spells one more stage-0 entry
    looked = look(ws.root)
    assert looked is not None and looked._unlooked() == set()  # the control: none
    blob = ws.git("hash-object", "-w", "a.py").strip()
    subprocess.run(  # one unmerged entry: as many stage-0 spellings as entries again
        ["git", "update-index", "--index-info"],
        cwd=ws.root,
        input=f"100644 {blob} 1\tb.py\n".encode(),
        check=True,
    )
    looked = look(ws.root)
    assert looked is not None and looked._unlooked() == {"b.py"}
    ws.git("update-index", "--assume-unchanged", "a.py")
    looked = look(ws.root)
    assert looked is not None and looked._unlooked() == {"a.py", "b.py"}
