"""Changes real Python formatters make (ruff format, black) that must move only `text`,
each beside a real change of the same construct that must move the body (issue 8 F)."""

from __future__ import annotations

from tests.extractors.axes import moved


def test_a_parenthesised_assignment_target_is_the_target_but_a_one_tuple_unpacks() -> None:
    before = "def f(x):\n    a = b = c = lambda: x\n"
    # ruff format wraps a long chained assignment by parenthesising a target.
    assert moved(
        "python", before, "def f(x):\n    a = b = (\n        c\n    ) = lambda: x\n", "f"
    ) == {"text"}
    assert "body" in moved("python", before, "def f(x):\n    a = b = (c,) = lambda: x\n", "f")
    assert "body" in moved("python", "def f(x):\n    (a) = x\n", "def f(x):\n    a, = x\n", "f")


def test_a_string_statement_opening_a_block_may_be_reindented_like_a_docstring() -> None:
    before = 'def f(x):\n    if x:\n        """Two\n           lines."""\n        g()\n'
    # black re-indents it; a string statement does nothing, it is a comment.
    after = 'def f(x):\n    if x:\n        """Two\n        lines."""\n        g()\n'
    assert moved("python", before, after, "f") == {"text"}
    assert "body" in moved("python", before, before.replace("Two", "Three"), "f")
    # A string that is a value keeps its spacing.
    value = 'def f(x):\n    return """Two\n           lines."""\n'
    assert "body" in moved("python", value, value.replace("           lines", "  lines"), "f")
