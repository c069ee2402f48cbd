"""The GitHub Actions recipe (`.github/workflows/moor.yml`, shown in docs/ci.md): its check
step's own script, run by bash on a real repository, writes a SARIF log and the status the
later steps read; on a pull request it checks only what the pull request changed.

GitHub's runner is not here: what is tested is every line moor's part of the recipe runs,
and that the steps after it read what it writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import GIT_IDENTITY, Workspace

REPOSITORY = Path(__file__).resolve().parents[2]
WORKFLOW = REPOSITORY / ".github" / "workflows" / "moor.yml"


def steps() -> dict[str, dict[str, Any]]:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    listed = workflow["jobs"]["memories"]["steps"]
    return {step.get("name") or step["uses"].split("@")[0]: step for step in listed}


def run_check_step(ws: Workspace, base: str) -> tuple[str, dict[str, Any], str]:
    """The step's status output, its SARIF log and the log it prints, run as Actions would
    (bash -e, the step's env)."""
    output = ws.root.parent / "github_output"
    output.write_text("")
    script = steps()["Check memories"]["run"]
    done = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=ws.root,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            **GIT_IDENTITY,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "GITHUB_OUTPUT": str(output),
            "BASE": base,
            "NO_COLOR": "1",
        },
    )
    assert done.returncode == 0, done.stderr  # the step itself never fails: the last one does
    (line,) = output.read_text().splitlines()
    sarif = json.loads((ws.root / "moor.sarif").read_text(encoding="utf-8"))
    return line, sarif, done.stdout + done.stderr


def test_the_check_step_reports_drift_as_sarif_and_a_status_the_last_step_fails_on(
    ws: Workspace,
) -> None:
    ws.write(".gitignore", ".moor/\nmoor.sarif\n")
    ws.write("src/a.py", "def a():\n    return 1\n")
    ws.write("src/b.py", "def b():\n    return 1\n")
    ws.memory("ma", "src/a.py#a")
    ws.memory("mb", "src/b.py#b")
    ws.git("init", "-q", "-b", "main")
    assert ws.moor("bind").code == 0
    ws.git("add", "-A")
    ws.git("commit", "-q", "-m", "bound")

    status, sarif, _ = run_check_step(ws, base="")  # a push: every memory
    assert (status, sarif["runs"][0]["results"]) == ("status=0", [])

    ws.write("src/b.py", "def b():\n    return 2\n")
    ws.git("commit", "-q", "-am", "b drifts on main")
    ws.git("update-ref", "refs/remotes/origin/main", "HEAD")  # as fetch-depth: 0 leaves it
    ws.git("checkout", "-q", "-b", "pull")
    ws.write("src/a.py", "def a():\n    return 2\n")
    ws.git("commit", "-q", "-am", "the pull request drifts a")

    status, sarif, log = run_check_step(ws, base="main")  # a pull request: what it changed
    assert status == "status=1"
    locations = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
    ]
    assert locations == ["memories/ma.md"]
    assert "memories/ma.md: drifted" in log and "1 of 2 memories" in log
    # Control: on a push the same tree reports mb too.
    status, sarif, _ = run_check_step(ws, base="")
    assert status == "status=1" and len(sarif["runs"][0]["results"]) == 2

    later = steps()
    upload = later["Upload to code scanning"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "moor.sarif"
    assert "> moor.sarif" in later["Check memories"]["run"]
    assert "steps.check.outputs.status != '0'" in later["Fail on drift"]["if"]
    assert later["Check memories"]["id"] == "check"


def test_docs_show_the_workflow_and_the_hook_this_repository_uses() -> None:
    docs = (REPOSITORY / "docs" / "ci.md").read_text(encoding="utf-8")
    assert WORKFLOW.read_text(encoding="utf-8") in docs
    assert (REPOSITORY / ".pre-commit-hooks.yaml").read_text(encoding="utf-8") in docs
