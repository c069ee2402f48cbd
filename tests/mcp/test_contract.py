"""The contract of `moor mcp`, as an agent sees it over the wire: the tool set, what each
takes, what it may do, how its description starts and which tools it points to, the top
level of what it returns, and the instructions. Agents and other tests (the Inspector's)
are written against this surface: any change to it must fail here and be made here, on
purpose."""

from __future__ import annotations

import re
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.types import Tool

from tests.mcp.conftest import run

# A description starts with the verb of what the tool does, from this list.
VERBS = {"Search", "List", "Report", "Return", "Write", "Edit", "Retire", "Forget", "Restore"}
VERBS |= {"Reaffirm", "Save", "Resume"}

# Annotations as (read_only, destructive, idempotent, open_world).
READ = (True, None, True, False)
ONCE = (False, False, True, False)  # a repeat is refused: no further effect
AGAIN = (False, False, False, False)  # a repeat journals or saves again
REWRITES = (False, True, False, False)
REMOVES = (False, True, True, False)


# name: (parameters, required, annotations, tools its description names, result fields)
CONTRACT: dict[str, tuple[set[str], set[str], tuple[Any, ...], set[str], set[str]]] = {
    "memory_search": (
        {"query", "limit", "agent"},
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
    "memory_search": {"limit": 10, "agent": None},
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
    "changes_since",
    "checkpoint_save",
    "checkpoint_resume",
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


def test_the_contract_fails_when_the_surface_moves() -> None:
    """The control: the checks above do tell a different surface apart."""
    assert mentioned("Search; call memories_about", set(CONTRACT)) == {"memories_about"}
    assert mentioned("memory_search_many only", {"memory_search"}) == set()
    assert "Returns" not in VERBS and "The" not in VERBS
