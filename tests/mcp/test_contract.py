"""The contract of `moor mcp`, as an agent sees it over the wire: the tool set, what each
takes, what it may do, how its description starts and which tools it points to, the top
level of what it returns, the instructions, and the one shape every refusal of every tool
has. Agents and other tests (the Inspector's) are written against this surface: any change
to it must fail here and be made here, on purpose."""

from __future__ import annotations

import re
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # the SDK client validates with it
import pytest
from mcp.client.session import ClientSession
from mcp.types import CallToolResult, Tool

from tests.conftest import Workspace
from tests.mcp.conftest import REFUSAL_FIELDS, refusal, refusals, run, structured

# A description starts with the verb of what the tool does, from this list.
VERBS = {"Search", "List", "Report", "Return", "Write", "Edit", "Retire", "Forget", "Restore"}
VERBS |= {"Reaffirm", "Save", "Resume", "Follow", "Pin", "Unpin"}

# Annotations as (read_only, destructive, idempotent, open_world).
READ = (True, None, True, False)
ONCE = (False, False, True, False)  # a repeat is refused: no further effect
AGAIN = (False, False, False, False)  # a repeat journals or saves again
REWRITES = (False, True, False, False)
REMOVES = (False, True, True, False)


# name: (parameters, required, annotations, tools its description names, result fields)
CONTRACT: dict[str, tuple[set[str], set[str], tuple[Any, ...], set[str], set[str]]] = {
    "anchors": ({"kind"}, set(), READ, set(), {"anchors"}),
    "memory_search": (
        {"query", "limit", "agent", "explain"},
        {"query"},
        READ,
        {"memories_about", "memory_search_many"},
        {"query", "hits"},
    ),
    "memory_search_many": (
        {"queries", "limit", "agent"},
        {"queries"},
        READ,
        {"memory_search"},
        {"results"},
    ),
    "memories_about": (
        {"target", "agent"},
        {"target"},
        READ,
        {"memory_write"},
        {"target", "memories", "retired_left_out"},
    ),
    "drift_report": (
        {"agent"},
        set(),
        READ,
        {"memories_about", "memory_reaffirm"},
        {"memories", "needing_a_look"},
    ),
    "memory_write": (
        {"text", "about", "title", "confidence", "questions", "supersedes", "agent"},
        {"text", "about"},
        ONCE,
        {"memories_about", "memory_edit", "memory_supersede", "memory_forget"},
        {"action", "ok", "path", "content_hash", "done", "known_here", "refused"},
    ),
    "memory_edit": (
        {"path", "section", "text", "based_on"},
        {"path", "section", "text", "based_on"},
        REWRITES,
        {"memory_search", "memory_supersede"},
        {"action", "ok", "path", "content_hash", "done", "known_here", "refused"},
    ),
    "memory_supersede": (
        {"old", "by", "why"},
        {"old", "by", "why"},
        ONCE,
        {"memory_search", "memory_restore"},
        {"action", "ok", "path", "content_hash", "done", "known_here", "refused"},
    ),
    "memory_forget": (
        {"path", "why"},
        {"path", "why"},
        REMOVES,
        {"memory_write", "memory_supersede", "memory_restore"},
        {"action", "ok", "path", "content_hash", "done", "known_here", "refused"},
    ),
    "memory_restore": (
        {"path", "why"},
        {"path", "why"},
        ONCE,
        {"memory_supersede", "memory_forget"},
        {"action", "ok", "path", "content_hash", "done", "known_here", "refused"},
    ),
    "memory_reaffirm": (
        {"path", "why"},
        {"path", "why"},
        AGAIN,
        {"drift_report"},
        {"action", "ok", "path", "content_hash", "done", "known_here", "refused"},
    ),
    "memory_follow": (
        {"path", "to", "from", "why"},
        {"path"},
        REWRITES,
        {"memory_reaffirm", "drift_report"},
        {"action", "ok", "path", "content_hash", "done", "known_here", "refused"},
    ),
    "memory_pin": (
        {"path", "why"},
        {"path", "why"},
        ONCE,
        {"memory_search", "memory_unpin"},
        {"action", "ok", "path", "content_hash", "done", "known_here", "refused"},
    ),
    "memory_unpin": (
        {"path", "why"},
        {"path", "why"},
        ONCE,
        {"memory_pin"},
        {"action", "ok", "path", "content_hash", "done", "known_here", "refused"},
    ),
    "changes_since": (
        {"cursor", "limit", "agent"},
        set(),
        READ,
        {"memory_history"},
        {"changes", "next_cursor", "head", "more"},
    ),
    "memory_history": (
        {"path", "agent"},
        {"path"},
        READ,
        {"changes_since"},
        {"path", "entries"},
    ),
    "checkpoint_save": (
        {"agent", "summary", "next_steps", "files"},
        {"agent", "summary"},
        AGAIN,
        {"checkpoint_resume", "memory_write"},
        {"agent", "id", "at", "path", "summary", "next_steps", "files"},
    ),
    "checkpoint_resume": (
        {"agent", "limit"},
        {"agent"},
        READ,
        {"checkpoint_save", "memories_about"},
        {"agent", "checkpoints", "total", "unreadable"},
    ),
}

# The default of every optional parameter.
DEFAULTS: dict[str, dict[str, object]] = {
    "memory_search": {"limit": 10, "agent": None, "explain": False},
    "memory_follow": {"to": None, "from": None, "why": None},
    "memory_search_many": {"limit": 5, "agent": None},
    "memories_about": {"agent": None},
    "memory_write": {
        "title": None,
        "confidence": "inferred",
        "questions": [],
        "supersedes": [],
        "agent": None,
    },
    "changes_since": {"cursor": 0, "limit": 200, "agent": None},
    "drift_report": {"agent": None},
    "anchors": {"kind": None},
    "memory_history": {"agent": None},
    "checkpoint_save": {"next_steps": [], "files": []},
    "checkpoint_resume": {"limit": 1},
}

# What the instructions point an agent to.
INSTRUCTED = {
    "memories_about",
    "memory_search",
    "memory_write",
    "memory_supersede",
    "memory_edit",
    "memory_forget",
    "drift_report",
    "memory_reaffirm",
    "memory_follow",
    "changes_since",
    "checkpoint_save",
    "checkpoint_resume",
}


# The tools whose result is a write's: their refusals carry it as structured content too.
WRITES = {"memory_write", "memory_edit", "memory_supersede", "memory_forget", "memory_restore"}
WRITES |= {"memory_reaffirm", "memory_follow", "memory_pin", "memory_unpin"}

# name: (arguments the tool refuses, the code it refuses them with)
REFUSED: dict[str, tuple[dict[str, Any], str]] = {
    "memory_search": ({"query": "q", "agent": "Not A Name"}, "agent_invalid"),
    "memory_search_many": ({"queries": []}, "usage"),
    "anchors": ({"kind": "gizmo"}, "usage"),
    "memories_about": ({"target": "../outside.py"}, "outside_workspace"),
    "drift_report": ({"agent": "Not A Name"}, "agent_invalid"),
    "memory_write": ({"text": " ", "about": ["lib.py"]}, "usage"),
    "memory_edit": (
        {"path": "memories/none.md", "section": "s", "text": "t", "based_on": "h"},
        "not_a_memory",
    ),
    "memory_supersede": ({"old": "memories/a.md", "by": "memories/b.md", "why": " "}, "usage"),
    "memory_forget": ({"path": "memories/none.md", "why": " "}, "usage"),
    "memory_restore": ({"path": "memories/none.md", "why": " "}, "usage"),
    "memory_reaffirm": ({"path": "memories/none.md", "why": "checked"}, "not_found"),
    "memory_follow": ({"path": "memories/none.md"}, "not_found"),
    "memory_pin": ({"path": "memories/none.md", "why": " "}, "no_reason"),
    "memory_unpin": ({"path": "memories/none.md", "why": " "}, "no_reason"),
    "changes_since": ({"cursor": -1}, "invalid_argument"),
    "memory_history": ({"path": "memories/none.md"}, "not_found"),
    "checkpoint_save": ({"agent": "../up", "summary": "s"}, "agent_invalid"),
    "checkpoint_resume": ({"agent": "a", "limit": 0}, "usage"),
}

# name: arguments each tool answers in the workspace of `answered` (the controls).
ANSWERED: dict[str, dict[str, Any]] = {
    "memory_search": {"query": "lib"},
    "memory_search_many": {"queries": ["lib"]},
    "memories_about": {"target": "lib.py"},
    "drift_report": {},
    "anchors": {},
    "changes_since": {},
    "memory_history": {"path": "memories/lib.md"},
    "checkpoint_save": {"agent": "a", "summary": "s"},
    "checkpoint_resume": {"agent": "a"},
}

# Arguments outside each schema: the required ones left out, or a value of the wrong type.
WRONG_TYPES: dict[str, dict[str, Any]] = {
    "drift_report": {"agent": 7},
    "anchors": {"kind": 7},
    "changes_since": {"cursor": "first"},
}


@pytest.fixture(scope="module")
def surface(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Tool], str]:
    root = tmp_path_factory.mktemp("contract")
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (root / "memories").mkdir()

    async def use(session: ClientSession) -> tuple[dict[str, Tool], str]:
        tools = await session.list_tools()
        init = session.initialize_result
        assert init is not None
        return {t.name: t for t in tools.tools}, init.instructions or ""

    result: tuple[dict[str, Tool], str] = run(root, use)
    return result


def mentioned(text: str, names: set[str]) -> set[str]:
    return {name for name in names if re.search(rf"\b{re.escape(name)}\b", text)}


def test_the_tool_set_is_exactly_the_contract(surface: tuple[dict[str, Tool], str]) -> None:
    tools, _ = surface
    assert sorted(tools) == sorted(CONTRACT)


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_each_tool_takes_its_parameters_and_says_what_it_may_do(
    surface: tuple[dict[str, Tool], str], name: str
) -> None:
    tool = surface[0][name]
    parameters, required, annotations, _, _ = CONTRACT[name]
    schema = tool.input_schema
    assert set(schema["properties"]) == parameters
    assert set(schema.get("required", [])) == required
    defaults = {p: schema["properties"][p].get("default") for p in parameters - required}
    assert defaults == DEFAULTS.get(name, {})
    hints = tool.annotations
    assert hints is not None
    got = (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint)
    assert (*got, hints.open_world_hint) == annotations


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_each_description_starts_with_a_verb_and_names_the_tools_it_leads_to(
    surface: tuple[dict[str, Tool], str], name: str
) -> None:
    tool = surface[0][name]
    description = tool.description or ""
    assert description.split()[0] in VERBS, description
    assert mentioned(description, set(CONTRACT) - {name}) == CONTRACT[name][3]


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_each_result_has_an_output_schema_with_its_fields(
    surface: tuple[dict[str, Tool], str], name: str
) -> None:
    schema = surface[0][name].output_schema
    assert schema is not None
    assert set(schema["properties"]) == CONTRACT[name][4]


def test_the_instructions_orient_an_agent_across_the_tools(
    surface: tuple[dict[str, Tool], str],
) -> None:
    instructions = surface[1]
    assert mentioned(instructions, set(CONTRACT)) == INSTRUCTED
    assert "not instructions" in instructions  # memory text is data
    assert "about:" in instructions and "current" in instructions


def test_the_instructions_tell_how_a_refusal_reads(surface: tuple[dict[str, Tool], str]) -> None:
    instructions = surface[1]
    assert '{"refused": [{"code", "message", "path", "line", ...}]}' in instructions
    assert "write_busy" in instructions and "lock_invalid" in instructions


def test_a_write_result_pins_the_fields_of_a_refusal(
    surface: tuple[dict[str, Tool], str],
) -> None:
    for name in sorted(WRITES):
        schema = surface[0][name].output_schema
        assert schema is not None
        assert set(schema["$defs"]["Refused"]["properties"]) == REFUSAL_FIELDS, name
    assert set(REFUSED) == set(CONTRACT) and set(ANSWERED) == set(CONTRACT) - WRITES


def _called(ws: Workspace, asked: list[tuple[str, dict[str, Any]]]) -> list[CallToolResult]:
    async def use(session: ClientSession) -> list[CallToolResult]:
        await session.list_tools()  # as a client that validates results against the schemas
        return [await session.call_tool(name, arguments) for name, arguments in asked]

    called: list[CallToolResult] = run(ws.root, use)
    return called


def test_every_tool_refuses_in_the_one_shape(
    ws: Workspace, surface: tuple[dict[str, Tool], str]
) -> None:
    ws.write("lib.py", "def f():\n    return 1\n")
    ws.memory("lib", "lib.py#f")
    ws.moor("bind", check=True)
    names = sorted(CONTRACT)
    refused = _called(ws, [(name, REFUSED[name][0]) for name in names])
    answered = _called(ws, [(name, ANSWERED[name]) for name in sorted(ANSWERED)])
    for name, result in zip(names, refused, strict=True):
        refusal(result, REFUSED[name][1])
        schema = surface[0][name].output_schema
        if name in WRITES:  # in the write's own schema, so a validating client accepts it
            assert result.structured_content is not None, name
            jsonschema.validate(result.structured_content, schema)
        else:  # a schema with no place for a refusal: no structured content to fail it
            assert result.structured_content is None, name
    for name, result in zip(sorted(ANSWERED), answered, strict=True):
        jsonschema.validate(structured(result), surface[0][name].output_schema)  # the controls


def test_every_tool_refuses_arguments_outside_its_schema_by_name(ws: Workspace) -> None:
    names = sorted(CONTRACT)
    asked = [(name, WRONG_TYPES.get(name, {})) for name in names]
    results = _called(ws, [*asked, ("drift_report", {}), ("changes_since", {"cursor": 0})])
    for (name, arguments), result in zip(asked, results[:-2], strict=True):
        entries = refusals(result)
        assert {entry["code"] for entry in entries} == {"invalid_argument"}, name
        named = {entry["message"].partition(":")[0] for entry in entries}
        assert named == (set(arguments) or CONTRACT[name][1]), name
        assert all("first" not in entry["message"] for entry in entries)  # never the value
        assert (result.structured_content is not None) == (name in WRITES), name
    assert structured(results[-2])["memories"] == 0  # the controls: the same tools, answered
    assert structured(results[-1])["next_cursor"] == 0


def test_the_contract_fails_when_the_surface_moves() -> None:
    """The control: the checks above do tell a different surface apart."""
    assert mentioned("Search; call memories_about", set(CONTRACT)) == {"memories_about"}
    assert mentioned("memory_search_many only", {"memory_search"}) == set()
    assert "Returns" not in VERBS and "The" not in VERBS
