"""Completing `about:` references with eglot's own `completion-at-point` (TAB), in a real
Emacs 28 with eglot 1.9 and docs/editors.md's set-up, past the first path segment and past
a `.` in a symbol (eglot filters the items on the symbol at point, not on the edit's range).

Opt-in only (`MOOR_E2E=1`), as the other real-Emacs test.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.editor_scenario import MOOR

HERE = Path(__file__).resolve().parent / "emacs"

pytestmark = pytest.mark.skipif(
    os.environ.get("MOOR_E2E") != "1",
    reason="real Emacs end-to-end test: opt-in with MOOR_E2E=1 (installs emacs-nox and eglot)",
)

TYPED = [
    "src/flask/sess",  # past the first segment: the "No match"
    "src/flask/sessions.py#SessionInterface.op",  # past a `.` in a symbol
    "src/fl",  # a folder after a folder
]


def test_eglot_completes_references_past_the_first_segment_and_past_a_dot(
    tmp_path: Path,
) -> None:
    setup = subprocess.run(
        ["bash", str(HERE / "setup.sh")], capture_output=True, text=True, timeout=900
    )
    assert setup.returncode == 0, setup.stderr
    root = tmp_path / "ws"
    (root / "src/flask").mkdir(parents=True)
    (root / "memories").mkdir()
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (root / "src/flask/sessions.py").write_text(
        "class SessionInterface:\n    def open_session(self):\n        pass\n", encoding="utf-8"
    )
    (root / "src/flask/app.py").write_text("X = 1\n", encoding="utf-8")
    about = "".join(f"  - {typed}\n" for typed in TYPED)
    memory = root / "memories/typing.md"
    memory.write_text(f"---\nabout:\n{about}---\n# Typing\n\nText.\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    results = tmp_path / "results.json"
    done = subprocess.run(
        ["emacs", "--batch", "-q", "-l", str(HERE / "completion.el")],
        cwd=root,
        env={
            **os.environ,
            "HOME": str(tmp_path / "home"),
            "MOOR": str(MOOR),
            "MOOR_MEMORY": str(memory),
            "MOOR_TYPED": json.dumps(TYPED),
            "MOOR_RESULTS": str(results),
        },
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert results.is_file(), f"Emacs wrote no results:\n{done.stdout}\n{done.stderr}"
    seen = {r["typed"]: r for r in json.loads(results.read_text(encoding="utf-8"))}
    assert seen["src/fl"]["line"] == "  - src/flask/", seen["src/fl"]
    for typed, line in [
        ("src/flask/sess", "  - src/flask/sessions.py"),
        (
            "src/flask/sessions.py#SessionInterface.op",
            "  - src/flask/sessions.py#SessionInterface.open_session",
        ),
    ]:
        assert seen[typed]["line"] == line, seen[typed]
        assert "No match" not in seen[typed]["said"], seen[typed]
