"""`pinned` and `created`: the frontmatter recall ranks by, read or refused with a problem."""

from __future__ import annotations

import pytest
from moor_extractors.memory import Memory, parse_memory


def parse(front: str) -> tuple[Memory | None, list[str]]:
    parsed = parse_memory("memories/m.md", f"---\n{front}\n---\n# M\n".encode())
    return parsed.memory, [p.code for p in parsed.problems]


@pytest.mark.parametrize(("value", "pinned"), [("true", True), ("yes", True), ("false", False)])
def test_pinned_is_a_yaml_boolean(value: str, pinned: bool) -> None:
    memory, problems = parse(f"pinned: {value}")
    assert problems == []
    assert memory is not None and memory.pinned is pinned


def test_pinned_defaults_to_false() -> None:
    memory, _problems = parse("confidence: verified")
    assert memory is not None
    assert memory.pinned is False


def test_a_pinned_that_is_not_a_boolean_is_a_problem() -> None:
    memory, problems = parse("pinned: maybe")
    assert memory is None and problems == ["pinned_invalid"]


def test_created_is_kept_as_written_and_a_list_is_a_problem() -> None:
    memory, problems = parse("created: 2026-11-30")
    assert problems == [] and memory is not None and memory.created == "2026-11-30"
    memory, problems = parse("created: [2026]")
    assert memory is None and problems == ["created_invalid"]
