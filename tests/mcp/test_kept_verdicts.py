"""A warm MCP server keeps its session and its memories' trust states between calls
(`moor_engine.kept_session`), yet each search shows the state as it is now: bound code
edited (also with the same size and mtime), replaced by a FIFO, moor.lock rewritten by
another process, a memory retired by a new one."""

from __future__ import annotations

import os
from pathlib import Path

from mcp.client.session import ClientSession

from tests.cli.test_hook_answers import backdate
from tests.conftest import Workspace
from tests.mcp.conftest import run, structured
from tests.mcp.test_search_freshness import same_tick_rewrite

CODE = "def send(payload):\n    return payload\n\n\ndef close():\n    return None\n"


def workspace(ws: Workspace) -> Path:
    code = ws.write("net/client.py", CODE)
    ws.memory("alpha", "net/client.py#send", body="The zebra protocol frames each payload.")
    ws.memory("beta", "net/client.py#close", body="Closing the quokka channel is idempotent.")
    ws.moor("bind", check=True)
    backdate(ws.root)  # nothing within the racy window: verdicts are kept
    return code


async def states(session: ClientSession, query: str) -> dict[str, str]:
    result = await session.call_tool("memory_search", {"query": query, "limit": 5})
    return {hit["path"]: hit["state"] for hit in structured(result)["hits"]}


def test_a_warm_servers_trust_states_follow_each_change(ws: Workspace) -> None:
    code = workspace(ws)

    async def use(session: ClientSession) -> list[dict[str, str]]:
        seen = [await states(session, "zebra"), await states(session, "zebra")]
        same_tick_rewrite(code, "return payload", "return pay1oad")
        seen.append(await states(session, "zebra"))
        # Another process rewrites moor.lock: the bound state is the code as it is now.
        ws.moor("reaffirm", "memories/alpha.md", "--why", "checked", check=True, process=True)
        seen.append(await states(session, "zebra"))
        code.unlink()
        os.mkfifo(code)
        seen.append(await states(session, "zebra"))
        code.unlink()
        ws.write("net/client.py", CODE.replace("return payload", "return pay1oad"))
        backdate(ws.root)
        seen.append(await states(session, "quokka"))
        seen.append(await states(session, "quokka"))  # from the kept verdict
        ws.write(
            "memories/gamma.md",
            "---\nabout:\n  - net/client.py#close\nsupersedes: [memories/beta.md]\n---\n"
            "# gamma\n\nClosing the quokka channel twice raises.\n",
        )
        seen.append(await states(session, "quokka"))
        return seen

    seen = run(ws.root, use)
    # The control: the same question asked twice gets the same answer (the second from the
    # kept verdict), so each later answer reflects a change.
    assert seen[0] == seen[1] == {"memories/alpha.md": "current"}
    assert seen[2] == {"memories/alpha.md": "drifted"}  # same size, same mtime
    assert seen[3] == {"memories/alpha.md": "current"}  # moor.lock by another process
    assert seen[4] == {"memories/alpha.md": "unverified"}  # a FIFO in its place
    assert seen[5] == seen[6] == {"memories/beta.md": "current"}
    assert "memories/beta.md" not in seen[7]  # retired by gamma: absent from recall
