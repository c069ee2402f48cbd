"""A file name that is not UTF-8 is skipped with a warning naming it; a memory with such a
name is reported. One such name used to fail every `check` and `bind` with exit 2."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import Workspace
from tests.hostile.common import CODE, by_path

BAD_CODE = b"app/bad\xff.py"
BAD_FOLDER = b"app/dir\xfa"
BAD_MEMORY = b"memories/note\xfe.md"


def plant(ws: Workspace, rel: bytes, text: str) -> None:
    path = os.path.join(os.fsencode(ws.root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


@pytest.mark.parametrize("listing", ["walk", "git"])
def test_undecodable_names_are_skipped_with_a_warning_and_a_memory_is_reported(
    ws: Workspace, listing: str
) -> None:
    if listing == "git":  # moved code is listed by git ls-files, else by walking the tree
        subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    ws.write("app/handler.py", CODE)
    ws.memory("handler", "app/handler.py#handler")
    plant(ws, BAD_CODE, CODE)  # the same code, in a file moor cannot name
    plant(ws, BAD_FOLDER + b"/x.py", "def x():\n    return 1\n")
    plant(ws, BAD_MEMORY, "---\nabout: [app/handler.py#handler]\n---\n# Note\n")
    bind = ws.moor("bind")
    assert bind.code == 1, bind.err  # the unnamed memory is refused, not a crash (was 2)
    assert "memories/handler.md: bound 1 anchor(s)" in bind.out
    assert "memories/note\\xfe.md: the memory's file name is not UTF-8" in bind.err
    (ws.root / "app/handler.py").unlink()  # gone: relocation lists every code file
    run = ws.moor("check", "--format", "json")
    assert run.code == 1, run.err
    assert "Traceback" not in run.err
    assert "app/bad\\xff.py: skipped this file: its name is not UTF-8" in run.err
    states = by_path(run)
    assert states["memories/note\\xfe.md"]["state"] == "invalid"  # reported, not dropped
    # The only copy of the code is in the file that was skipped: nowhere to move to.
    assert states["memories/handler.md"]["state"] == "gone"
    # Control: the same code in a file with a real name is found where it moved.
    ws.write("app/moved.py", CODE)
    anchor = ws.anchor("memories/handler.md")
    assert anchor["state"] == "moved"
    assert anchor["moved_to"] == "app/moved.py#handler"
