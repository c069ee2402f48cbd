"""The `moor-check` hook of `.pre-commit-hooks.yaml`, run by pre-commit itself on a real
commit: it passes when the memories are current and stops the commit on drift.

pre-commit builds a `language: python` hook's environment with pip from the hook's
repository, which needs the network; the test runs the same definition as a `repo: local`
hook with `language: unsupported` (the `moor` on PATH: this checkout's), so what is tested
is the entry, its arguments, when it runs and what its exit status does to a commit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import GIT_IDENTITY, Workspace

REPOSITORY = Path(__file__).resolve().parents[2]
MANIFEST = REPOSITORY / ".pre-commit-hooks.yaml"
BIN = Path(sys.executable).parent


def run(root: Path, *command: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            **GIT_IDENTITY,
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PRE_COMMIT_HOME": str(home),  # its cache, never the user's
            "NO_COLOR": "1",
        },
    )


def test_the_manifest_is_one_valid_hook_that_runs_moor_check_on_every_commit(
    tmp_path: Path,
) -> None:
    checked = run(
        REPOSITORY, str(BIN / "pre-commit"), "validate-manifest", str(MANIFEST), home=tmp_path
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (hook,) = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert hook["id"] == "moor-check"
    assert hook["entry"].split()[:2] == ["moor", "check"]
    assert (hook["language"], hook["pass_filenames"], hook["always_run"]) == ("python", False, True)


def test_a_commit_passes_with_current_memories_and_is_stopped_by_drift(
    ws: Workspace, tmp_path: Path
) -> None:
    (hook,) = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    local = {**hook, "language": "unsupported"}
    ws.write(
        ".pre-commit-config.yaml", yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]})
    )
    ws.write(".gitignore", ".moor/\n")
    ws.write("src/net.py", "def send(data):\n    return data.encode()\n")
    ws.memory("send", "src/net.py#send")
    ws.git("init", "-q", "-b", "main")
    home = tmp_path / "pre-commit-home"
    installed = run(ws.root, str(BIN / "pre-commit"), "install", home=home)
    assert installed.returncode == 0, installed.stderr
    assert ws.moor("bind").code == 0
    ws.git("add", "-A")

    passed = run(ws.root, "git", "commit", "-q", "-m", "bound", home=home)

    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "moor check" in passed.stdout + passed.stderr
    head = ws.git("rev-parse", "HEAD")

    # Drift committed with another file: the hook is given no file names and checks the
    # whole workspace as it is being committed (pre-commit sets unstaged changes aside).
    ws.write("src/net.py", "def send(data):\n    return data.encode('utf-8')\n")
    ws.write("src/other.py", "VALUE = 1\n")
    ws.git("add", "-A")
    stopped = run(ws.root, "git", "commit", "-q", "-m", "send changes", home=home)

    output = stopped.stdout + stopped.stderr
    assert stopped.returncode != 0, output
    assert "Failed" in output and "memories/send.md: drifted" in output
    assert ws.git("rev-parse", "HEAD") == head  # nothing was committed
