"""`moor mcp --http` as a real process on a real workspace: loopback only, a bearer token on
every request, Host and Origin checked, and a whole SDK client session over HTTP."""

from __future__ import annotations

import json
import os
import stat
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


def token_of(ws: Workspace) -> str:
    return ws.read(".moor/mcp-http-token").strip()


def test_a_request_without_the_bearer_token_or_with_a_wrong_one_is_a_401(ws: Workspace) -> None:
    with serving(ws.root) as served:
        token = token_of(ws)
        missing = initialize(served, {})
        wrong = initialize(served, bearer("x" * len(token)))
        right = initialize(served, bearer(token))
    assert missing.status_code == 401 and "Bearer" in missing.headers["www-authenticate"]
    assert wrong.status_code == 401
    assert right.status_code == 200, right.text  # the control: the same request with the token
    assert "moor keeps this project's memories" in right.text


def test_the_token_is_generated_into_a_file_only_its_owner_can_read_and_never_printed(
    ws: Workspace,
) -> None:
    with serving(ws.root) as served:
        token = token_of(ws)
    mode = stat.S_IMODE(os.stat(ws.root / ".moor/mcp-http-token").st_mode)
    assert mode == 0o600
    assert len(token) >= 32
    assert ".moor/mcp-http-token" in served.stderr and token not in served.stderr
    with serving(ws.root) as again:  # a restart keeps the token a client was configured with
        assert initialize(again, bearer(token)).status_code == 200


def test_a_token_file_others_can_read_is_refused_and_a_private_one_is_used(
    ws: Workspace,
) -> None:
    loose = ws.write("secrets/loose", "a-token-that-is-long-enough\n")
    loose.chmod(0o644)
    answer = refused(ws.root, "--http", "--port", "0", "--token-file", str(loose))
    assert answer.returncode == 2
    assert "can be read by others" in answer.stderr and "Traceback" not in answer.stderr
    loose.chmod(0o600)  # the control: the same file, private, is the token
    with serving(ws.root, "--token-file", str(loose)) as served:
        assert initialize(served, bearer("a-token-that-is-long-enough")).status_code == 200
        assert initialize(served, {}).status_code == 401
    assert not (ws.root / ".moor/mcp-http-token").exists()


def test_a_wrong_host_or_origin_header_is_refused_even_with_the_token(ws: Workspace) -> None:
    with serving(ws.root) as served:
        auth = bearer(token_of(ws))
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
        assert initialize(served, bearer(token_of(ws))).status_code == 200


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
        answers = anyio.run(session_over, served, token_of(ws))
    assert {"memory_write", "memory_search", "memories_about"} <= answers["tools"]
    path = answers["written"]["path"]
    assert answers["written"]["ok"] and path.startswith("memories/")
    assert SEND in ws.read(path)  # on disk, bound to the code
    assert [hit["path"] for hit in answers["found"]["hits"]][:1] == [path]
    assert [m["path"] for m in answers["about"]["memories"]] == [path]
    assert json.dumps(answers["found"]).count("idempotency") >= 1
