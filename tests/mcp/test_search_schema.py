"""The search tools publish their output schemas inlined (`moor_mcp.schemas`: no `$ref`, bare
type unions as one `type` list), which a client validates faster; the schema accepts and
refuses exactly what the SDK's own schema of the same model does."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import anyio
import jsonschema  # type: ignore[import-untyped]  # the SDK client validates with it
from mcp.client.session import ClientSession
from mcp.server.mcpserver import MCPServer

from tests.conftest import Workspace
from tests.mcp.conftest import run, structured

CODE = "def send(payload):\n    return payload\n\n\ndef close():\n    return None\n"


def _set(path: list[str | int], value: object) -> Callable[[dict[str, Any]], None]:
    def change(result: dict[str, Any]) -> None:
        node: Any = result
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _drop(path: list[str | int]) -> Callable[[dict[str, Any]], None]:
    def change(result: dict[str, Any]) -> None:
        node: Any = result
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return change


BROKEN = {
    "a state that is no string": _set(["hits", 0, "state"], 1),
    "no notice": _drop(["hits", 0, "notice"]),
    "a content hash that is a number": _set(["hits", 0, "content_hash"], 5),
    "a question that is no string": _set(["hits", 0, "questions"], [3]),
    "a link without exists": _drop(["hits", 0, "links", 0, "exists"]),
    "a retired memory's title a list": _set(["hits", 0, "retired_here", 0, "title"], ["x"]),
    "an explanation without a score": _drop(["hits", 0, "explain", "score"]),
    "a signal's factor a string": _set(["hits", 0, "explain", "signals", 0, "factor"], "1"),
    "hits that are no list": _set(["hits"], {}),
}
ACCEPTED = {
    "no content hash": _set(["hits", 0, "content_hash"], None),
    "no explanation": _set(["hits", 0, "explain"], None),
    "a retired memory without why": _set(["hits", 0, "retired_here", 0, "retired_because"], None),
}


def test_the_published_search_schema_accepts_and_refuses_what_the_models_schema_does(
    ws: Workspace,
) -> None:
    ws.write("net/client.py", CODE)
    ws.write(
        "memories/alpha.md",
        "---\nabout:\n  - net/client.py#send\nlinks:\n  refines: [memories/beta.md]\n---\n"
        "# alpha\n\nThe zebra protocol frames each payload.\n",
    )
    ws.memory("beta", "net/client.py#send", body="Sending zebra payloads never blocks.")
    ws.moor("bind", check=True)
    ws.write(
        "memories/gamma.md",
        "---\nabout:\n  - net/client.py#send\nsupersedes: [memories/beta.md]\n---\n"
        "# gamma\n\nSending a zebra payload blocks when the window is full.\n",
    )
    ws.moor("bind", check=True)

    async def use(session: ClientSession) -> tuple[Any, ...]:
        listed = {tool.name: tool.output_schema for tool in (await session.list_tools()).tools}
        one = await session.call_tool(
            "memory_search", {"query": "zebra protocol frames", "explain": True}
        )
        many = await session.call_tool("memory_search_many", {"queries": ["zebra", "window"]})
        return listed, structured(one), structured(many)

    listed, one, many = run(ws.root, use)
    from moor_mcp.server import build

    models = {t.name: t.output_schema for t in anyio.run(MCPServer.list_tools, build(ws.root))}
    for name in ("memory_search", "memory_search_many"):
        text = json.dumps(listed[name])
        assert "$ref" not in text and '"type": ["string", "null"]' in text, name
        assert '"anyOf": [{"type": "string"}' not in text, name
        assert "$ref" in json.dumps(models[name]), name  # the control: the model's has them
    # Other tools publish the model's schema as it is.
    assert listed["memories_about"] == models["memories_about"]

    hit = one["hits"][0]
    assert hit["path"] == "memories/alpha.md" and hit["links"] and hit["retired_here"]
    assert hit["explain"] is not None
    published = jsonschema.Draft202012Validator(listed["memory_search"])
    original = jsonschema.Draft202012Validator(models["memory_search"])
    assert published.is_valid(one) and original.is_valid(one)  # the controls
    assert jsonschema.Draft202012Validator(listed["memory_search_many"]).is_valid(many)
    for why, change in {**BROKEN, **ACCEPTED}.items():
        result = copy.deepcopy(one)
        change(result)
        assert published.is_valid(result) == original.is_valid(result) == (why in ACCEPTED), why
