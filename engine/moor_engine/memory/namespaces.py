"""Namespaces: which memories a reader may see.

A memory with `agent: NAME` belongs to that agent; one without `agent:` is shared. A reader
names itself (or no one): shared memories and its own are visible, another agent's are not,
and a reader who names no agent sees the shared ones only. Every rule fails closed: a reader
with an invalid name is refused (not shown everything), and a memory whose `agent:` is not a
valid name is a problem (`agent_invalid`) — visible to nobody, reported by `moor check`.
"""

from __future__ import annotations

import re

from moor_extractors.memory import Memory, Problem

from moor_engine.usage import UsageError

# Lowercase so that "Claude" and "claude" cannot be two namespaces; no leading dot or dash,
# so a name is never a path part nor an option.
AGENT_GRAMMAR = r"[a-z0-9][a-z0-9._-]{0,63}"
_AGENT = re.compile(AGENT_GRAMMAR)
GRAMMAR_WORDS = (
    "1 to 64 of a-z 0-9 . _ -, starting with a letter or digit (lowercase: one spelling per agent)"
)


def is_agent_name(name: str) -> bool:
    return _AGENT.fullmatch(name) is not None


def reader(agent: str | None) -> str | None:
    """The reader an agent argument names; UsageError (a refusal) for an invalid name."""
    if agent is None:
        return None
    if not is_agent_name(agent):
        raise UsageError(
            f"agent {agent!r} is not an agent name: {GRAMMAR_WORDS}", code="agent_invalid"
        )
    return agent


def memory_problem(memory: Memory) -> Problem | None:
    """`agent_invalid` for a memory whose `agent:` names no valid namespace."""
    if memory.agent is None or is_agent_name(memory.agent):
        return None
    return Problem(
        "agent_invalid",
        f"'agent' is {memory.agent!r}, not an agent name ({GRAMMAR_WORDS}); "
        "this memory is shown to nobody until it is",
        max(memory.agent_line, 1),
        1,
    )


def visible(owner: str | None, agent: str | None) -> bool:
    """Whether a memory owned by `owner` (None: shared) is visible to reader `agent`."""
    if owner is None:
        return True
    return is_agent_name(owner) and owner == agent


def sees(memory: Memory | None, agent: str | None) -> bool:
    """Whether reader `agent` may see `memory`; one that could not be read (its owner
    unknown) is visible to nobody."""
    return memory is not None and visible(memory.agent, agent)
