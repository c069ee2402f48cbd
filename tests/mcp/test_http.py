"""`moor mcp --http` as a real process on a real workspace: loopback only, a bearer token on
every request, Host and Origin checked, and a whole SDK client session over HTTP."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import Workspace
from tests.mcp.conftest import structured
from tests.mcp.http_server import Served, refused, serving

CODE = "class Client:\n    def send(self, payload):\n        return payload\n"
SEND = "net/client.py#Client.send"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test_http", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def initialize(served: Served, headers: dict[str, str]) -> httpx2.Response:
    return httpx2.post(served.url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=30)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_request_without_the_bearer_token_or_with_a_wrong_one_is_a_401(ws: Workspace) -> None:
    with serving(ws.root) as served:
        token = served.token
        missing = initialize(served, {})
        wrong = initialize(served, bearer("x" * len(token)))
        right = initialize(served, bearer(token))
    assert missing.status_code == 401 and "Bearer" in missing.headers["www-authenticate"]
    assert wrong.status_code == 401
    assert right.status_code == 200, right.text  # the control: the same request with the token
    assert "moor keeps this project's memories" in right.text


def test_the_token_is_generated_outside_the_workspace_into_a_file_only_its_owner_can_read(
    ws: Workspace, state_home: Path
) -> None:
    with serving(ws.root) as served:
        token = served.token
    where = served.token_path
    assert where.parent == state_home / "moor" / "mcp-http"
    assert stat.S_IMODE(os.stat(where).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(where.parent).st_mode) == 0o700
    assert len(token) >= 32
    assert str(where) in served.stderr and token not in served.stderr
    assert not (ws.root / ".moor/mcp-http-token").exists()
    with serving(ws.root) as again:  # a restart keeps the token a client was configured with
        assert initialize(again, bearer(token)).status_code == 200
    other = ws.root.parent / "other"
    other.mkdir()
    with serving(other) as elsewhere:  # another workspace has a token of its own
        assert elsewhere.token_path != where and elsewhere.token != token


def test_a_token_the_repository_carries_never_authenticates_tracked_or_not(
    ws: Workspace,
) -> None:
    planted = "the-attackers-token-that-is-long-enough"
    ws.git("init", "-q")
    ws.write(".moor/mcp-http-token", planted + "\n").chmod(0o600)
    ws.git("add", "-f", ".moor/mcp-http-token")
    ws.git("commit", "-q", "-m", "a token for you")
    for mode in (0o600, 0o644):  # private or loose, it neither counts nor stops the server
        (ws.root / ".moor/mcp-http-token").chmod(mode)
        with serving(ws.root) as served:
            theirs = initialize(served, bearer(planted))
            ours = initialize(served, bearer(served.token))
        assert theirs.status_code == 401
        assert ours.status_code == 200  # the control: the token moor made and named does
    assert ws.read(".moor/mcp-http-token") == planted + "\n"  # left as it was, never used
    assert ".moor/mcp-http-token is not read" in served.stderr and planted not in served.stderr
    for mode in (0o600, 0o644):  # naming it is refused too, private or not
        (ws.root / ".moor/mcp-http-token").chmod(mode)
        answer = refused(ws.root, "--http", "--port", "0", "--token-file", ".moor/mcp-http-token")
        assert answer.returncode == 2, answer.stderr
        assert "is inside this workspace" in answer.stderr and "serving" not in answer.stderr
        assert "chmod" not in answer.stderr and "Traceback" not in answer.stderr


def test_a_token_file_that_is_a_fifo_is_refused_at_once_and_a_regular_one_is_used(
    ws: Workspace, tmp_path: Path
) -> None:
    fifo = tmp_path / "token-fifo"
    os.mkfifo(fifo, 0o600)
    # A read of the FIFO blocks for ever (no writer): the timeout is a hang guard, so a
    # regression fails the test instead of hanging it; no claim about speed.
    answer = refused(ws.root, "--http", "--port", "0", "--token-file", str(fifo), timeout=120)
    assert answer.returncode == 2 and "is not a regular file (a FIFO)" in answer.stderr
    assert "serving" not in answer.stderr and "Traceback" not in answer.stderr
    fifo.unlink()  # the control: a regular file in its place is the token
    fifo.write_text("a-token-that-is-long-enough\n", encoding="utf-8")
    fifo.chmod(0o600)
    with serving(ws.root, "--token-file", str(fifo)) as served:
        assert initialize(served, bearer("a-token-that-is-long-enough")).status_code == 200


def test_a_token_file_others_can_read_is_refused_without_blessing_it_and_a_private_one_is_used(
    ws: Workspace, tmp_path: Path
) -> None:
    loose = tmp_path / "secrets" / "loose"
    loose.parent.mkdir()
    loose.write_text("a-token-that-is-long-enough\n", encoding="utf-8")
    for mode in (0o644, 0o640):
        loose.chmod(mode)
        answer = refused(ws.root, "--http", "--port", "0", "--token-file", str(loose))
        assert answer.returncode == 2
        assert "can be read by others" in answer.stderr and "make a new token" in answer.stderr
        assert "chmod" not in answer.stderr and "Traceback" not in answer.stderr
    loose.chmod(0o600)  # the control: the same file, private, is the token
    with serving(ws.root, "--token-file", str(loose)) as served:
        assert initialize(served, bearer("a-token-that-is-long-enough")).status_code == 200
        assert initialize(served, {}).status_code == 401
    assert served.token_path == loose


def test_a_loose_token_file_moor_made_is_refused_with_delete_it_not_chmod(ws: Workspace) -> None:
    with serving(ws.root) as served:
        where = served.token_path
    where.chmod(0o644)
    answer = refused(ws.root, "--http", "--port", "0")
    assert answer.returncode == 2 and "can be read by others" in answer.stderr
    assert "delete it and moor makes a new one" in answer.stderr and "chmod" not in answer.stderr
    where.unlink()  # the control: as it says, a new one is made and used
    with serving(ws.root) as again:
        assert initialize(again, bearer(again.token)).status_code == 200


def test_a_wrong_host_or_origin_header_is_refused_even_with_the_token(ws: Workspace) -> None:
    with serving(ws.root) as served:
        auth = bearer(served.token)
        port = served.port
        rebound = initialize(served, {**auth, "Host": f"attacker.example:{port}"})
        other_port = initialize(served, {**auth, "Host": f"127.0.0.1:{port + 1}"})
        foreign = initialize(served, {**auth, "Origin": "http://attacker.example"})
        by_name = initialize(served, {**auth, "Host": f"localhost:{port}"})
        same_origin = initialize(served, {**auth, "Origin": f"http://127.0.0.1:{port}"})
    assert rebound.status_code == 421 and other_port.status_code == 421
    assert foreign.status_code == 403
    assert by_name.status_code == 200 and same_origin.status_code == 200  # the controls


def test_listening_on_anything_but_loopback_is_refused_before_anything_listens(
    ws: Workspace,
) -> None:
    for host in ("0.0.0.0", "::", "192.168.1.10", "localhost"):
        answer = refused(ws.root, "--http", "--port", "0", "--host", host)
        assert answer.returncode == 2, (host, answer.stderr)
        assert (
            f"refusing to listen on {host}" in answer.stderr and "127.0.0.1 only" in answer.stderr
        )
        assert "serving" not in answer.stderr
    with serving(ws.root, "--host", "127.0.0.1") as served:  # the control: loopback serves
        assert initialize(served, bearer(served.token)).status_code == 200


def test_no_auth_serves_without_a_token_and_says_so_loudly(ws: Workspace) -> None:
    with serving(ws.root, "--no-auth") as served:
        open_door = initialize(served, {})
    assert open_door.status_code == 200
    assert "WARNING: --no-auth" in served.stderr
    assert not (ws.root / ".moor/mcp-http-token").exists()
    with serving(ws.root) as guarded:  # the control: without the flag the same request is a 401
        assert initialize(guarded, {}).status_code == 401
        assert "WARNING" not in guarded.stderr


def test_http_options_without_http_and_a_port_in_use_are_clear_refusals(ws: Workspace) -> None:
    answer = refused(ws.root, "--port", "8000")
    assert answer.returncode == 2 and "need --http" in answer.stderr
    with serving(ws.root) as served:
        busy = refused(ws.root, "--http", "--port", str(served.port))
    assert busy.returncode == 2 and f"cannot listen on 127.0.0.1:{served.port}" in busy.stderr
    assert "Traceback" not in busy.stderr
    bad = refused(ws.root, "--http", "--port", "70000")
    assert bad.returncode == 2 and "is not a port" in bad.stderr


def test_a_whole_sdk_client_session_over_http_writes_searches_and_asks_about(
    ws: Workspace,
) -> None:
    ws.write("net/client.py", CODE)
    text = "Retries are safe: send attaches an idempotency key."

    async def session_over(served: Served, token: str) -> dict[str, Any]:
        async with (
            httpx2.AsyncClient(headers=bearer(token), timeout=60) as client,
            streamable_http_client(served.url, http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = await session.list_tools()
            written = await session.call_tool("memory_write", {"text": text, "about": [SEND]})
            found = await session.call_tool("memory_search", {"query": "retry idempotency"})
            about = await session.call_tool("memories_about", {"target": SEND})
            return {
                "tools": {tool.name for tool in tools.tools},
                "written": structured(written),
                "found": structured(found),
                "about": structured(about),
            }

    with serving(ws.root) as served:
        answers = anyio.run(session_over, served, served.token)
    assert {"memory_write", "memory_search", "memories_about"} <= answers["tools"]
    path = answers["written"]["path"]
    assert answers["written"]["ok"] and path.startswith("memories/")
    assert SEND in ws.read(path)  # on disk, bound to the code
    assert [hit["path"] for hit in answers["found"]["hits"]][:1] == [path]
    assert [m["path"] for m in answers["about"]["memories"]] == [path]
    assert json.dumps(answers["found"]).count("idempotency") >= 1
