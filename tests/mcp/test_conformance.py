"""The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
tests/mcp/node/package-lock.json), a client nobody here wrote, against the real
`moor mcp --http`.

Its client sends no bearer header, so the scenarios run against `--no-auth`; the control
proves the authenticated server refuses that same client. Each scenario's verdict is the
suite's own: its exit status and the checks it writes to its output folder.

Scenarios run: the ones a tools-only server over streamable HTTP must pass. Left out, and
why: `tools-call-*`, `json-schema-2020-12`, `server-sse-polling` and the elicitation ones
call fixture tools (`test_simple_text`, `test_reconnection`, ...) that only the suite's
reference server has (`tools-call-simple-text` even "passes" on moor's unknown-tool error,
since it only looks for text content: a pass that proves nothing); `resources-*`,
`prompts-*`, `completion-complete` and `logging-set-level` exercise capabilities moor does
not declare (it serves tools only).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Workspace
from tests.mcp.http_server import serving
from tests.mcp.node_tools import CONFORMANCE, run_node

SCENARIOS = (
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
)


def conformance(ws: Workspace, home: Path, url: str, scenario: str) -> tuple[int, list[Any]]:
    """The suite's exit status and the checks it recorded for one scenario."""
    out = home / "results" / scenario
    done = run_node(
        CONFORMANCE,
        ["server", "--url", url, "--scenario", scenario, "--output-dir", str(out)],
        cwd=ws.root,
        home=home,
    )
    found = sorted(out.rglob("checks.json"))
    assert len(found) == 1, f"no checks written:\n{done.stdout}\n{done.stderr}"
    checks = json.loads(found[0].read_text())
    assert isinstance(checks, list) and checks, done.stdout
    return done.returncode, checks


def failures(checks: list[Any]) -> list[Any]:
    return [check for check in checks if check.get("status") != "SUCCESS"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conformance_scenario_passes_against_moor_mcp_http(
    ws: Workspace, tmp_path: Path, scenario: str
) -> None:
    with serving(ws.root, "--no-auth") as served:
        status, checks = conformance(ws, tmp_path, served.url, scenario)
    assert failures(checks) == [], json.dumps(checks, indent=2)
    assert status == 0


def test_the_authenticated_server_refuses_the_conformance_client_without_a_token(
    ws: Workspace, tmp_path: Path
) -> None:
    with serving(ws.root, "--no-auth") as served:
        status, checks = conformance(ws, tmp_path / "open", served.url, "server-initialize")
    assert (status, failures(checks)) == (0, [])  # the control: the same client gets in
    with serving(ws.root) as served:
        status, checks = conformance(ws, tmp_path / "closed", served.url, "server-initialize")
    assert status != 0
    refused = failures(checks)
    assert [check["id"] for check in refused] == ["server-initialize"]
    assert "a bearer token is required" in refused[0]["errorMessage"]  # moor's 401, not a crash
