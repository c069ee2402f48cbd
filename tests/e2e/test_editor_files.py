"""Editors' own files beside memories and code, made by the real editors: never memories,
never code (the rule is `moor_engine.workspace.workspace.is_editor_file`).

Opt-in only (`MOOR_E2E=1`, like the other real-editor tests): Emacs from
tests/e2e/emacs/setup.sh; Vim when the machine has it. Each editor edits files of a real
bound workspace the way a person does, and `moor check` runs while its files are there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.editor_scenario import MOOR, git, moor

HERE = Path(__file__).resolve().parent
RUN_SECONDS = 120  # a hang guard only

pytestmark = pytest.mark.skipif(
    os.environ.get("MOOR_E2E") != "1",
    reason="real-editor end-to-end test: opt-in with MOOR_E2E=1",
)

NOTE = "---\nabout: [src/app.py#f]\n---\n# {name}\n\nf returns one.\n"


def bound_workspace(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "memories").mkdir()
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (root / "src/app.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    for name in ("note", "other"):
        (root / f"memories/{name}.md").write_text(NOTE.format(name=name), encoding="utf-8")
    git(root, "init", "-q")
    bound = moor(root, "bind")
    assert bound.returncode == 0, bound.stdout + bound.stderr
    return root


def test_emacs_locks_auto_saves_and_backups_leave_moor_check_clean(tmp_path: Path) -> None:
    setup = subprocess.run(
        ["bash", str(HERE / "emacs" / "setup.sh")], capture_output=True, text=True, timeout=900
    )
    assert setup.returncode == 0, setup.stderr
    root = bound_workspace(tmp_path / "ws")
    results = tmp_path / "results.json"
    done = subprocess.run(
        ["emacs", "--batch", "-q", "-l", str(HERE / "emacs" / "editor_files.el")],
        cwd=root,
        env={
            **os.environ,
            "HOME": str(tmp_path / "home"),
            "MOOR": str(MOOR),
            "MOOR_ROOT": str(root),
            "MOOR_RESULTS": str(results),
            "NO_COLOR": "1",
        },
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
    )
    assert results.is_file(), f"Emacs wrote no results:\n{done.stdout}\n{done.stderr}"
    seen = json.loads(results.read_text(encoding="utf-8"))
    assert seen["reaffirm"]["code"] == 0, seen["reaffirm"]
    # The control: Emacs did leave its files, as a person's Emacs does.
    assert {".#note.md", "#note.md#", "other.md~"} <= set(seen["memories"]), seen["memories"]
    assert {".#app.py", "#app.py#", "app.py~"} <= set(seen["src"]), seen["src"]
    check = seen["check"]
    assert check["code"] == 0, check["output"]
    assert "invalid" not in check["output"] and "2 memories" in check["output"], check["output"]


@pytest.mark.skipif(shutil.which("vim") is None, reason="Vim is not installed here")
def test_vims_swap_file_leaves_moor_check_clean(tmp_path: Path) -> None:
    root = bound_workspace(tmp_path / "ws")
    out = tmp_path / "seen.txt"
    check = f"NO_COLOR=1 {MOOR} check"
    # Vim keeps its swap file `.note.md.swp` beside the file while it is open.
    done = subprocess.run(
        [
            "vim", "--clean", "-es",
            "-c", "normal GoNot saved.",
            "-c", f"silent !ls -a memories > {out}; {check} >> {out} 2>&1; echo exit $? >> {out}",
            "-c", "qa!",
            "memories/note.md",
        ],
        cwd=root,
        env={**os.environ, "HOME": str(tmp_path / "home")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
    )  # fmt: skip
    seen = out.read_text(encoding="utf-8")
    assert ".note.md.swp" in seen.splitlines(), f"{seen}\n{done.stderr}"  # the control
    assert seen.rstrip().endswith("exit 0") and "2 memories" in seen, seen
    assert "invalid" not in seen, seen
