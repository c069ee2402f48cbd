"""A grammar wheel that fails to import costs only its language: those anchors are
`unverified` (`no_grammar`), other languages are checked as usual, no ImportError."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import Run, Workspace
from tests.hostile.common import CHANGED, CODE, by_path

JS = "export function total(items) {\n  return items.length;\n}\n"


def moor_with(ws: Workspace, pythonpath: Path | None, *args: str) -> Run:
    env = {**os.environ, "NO_COLOR": "1"}
    if pythonpath is not None:  # first on the path: it shadows the installed grammar
        env["PYTHONPATH"] = os.pathsep.join(
            [str(pythonpath), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
    result = subprocess.run(
        [sys.executable, "-m", "moor", *args],
        cwd=ws.root,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return Run(result.returncode, result.stdout, result.stderr)


def test_a_grammar_that_fails_to_import_makes_only_its_anchors_no_grammar(
    ws: Workspace, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    (broken / "tree_sitter_python").mkdir(parents=True)
    (broken / "tree_sitter_python/__init__.py").write_text(
        'raise ImportError("libtree-sitter-python.so: undefined symbol (a broken wheel)")\n',
        encoding="utf-8",
    )
    ws.write("app/handler.py", CODE)
    ws.write("web/total.js", JS)
    ws.memory("handler", "app/handler.py#handler")
    ws.memory("total", "web/total.js#total")
    ws.moor("bind", check=True)
    # Control: with the real grammar both are current.
    healthy = by_path(moor_with(ws, None, "check", "--format", "json"))
    assert healthy["memories/handler.md"]["state"] == "current"
    ws.write("app/handler.py", CHANGED)  # the Python file must be parsed again
    run = moor_with(ws, broken, "check", "--format", "json")
    assert run.code == 1, run.err
    assert "ImportError" not in run.err and "internal error" not in run.err
    states = by_path(run)
    anchors = states["memories/handler.md"]["anchors"]
    assert isinstance(anchors, list)
    assert (anchors[0]["state"], anchors[0]["code"]) == ("unverified", "no_grammar")
    assert states["memories/total.md"]["state"] == "current"
    # The other language is still observed: its drift is reported beside the broken one.
    ws.write("web/total.js", JS.replace("items.length", "items.length + 1"))
    states = by_path(moor_with(ws, broken, "check", "--format", "json"))
    assert states["memories/total.md"]["state"] == "drifted"
    assert states["memories/handler.md"]["state"] == "unverified"
    # Control: with the real grammar the Python change is drift, not unverified.
    assert (
        by_path(moor_with(ws, None, "check", "--format", "json"))["memories/handler.md"]["state"]
        == "drifted"
    )
