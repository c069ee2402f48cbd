"""Splitting or joining a string literal is a formatter's change, never drift (issue 8 F).

Each case is a pair of bodies for `def f(x, w): return <expression>` that must be one
stream, and beside it a real change of the same construct that must move the body.
"""

from __future__ import annotations

import pytest

from tests.extractors.axes import moved


def _moves(before: str, after: str) -> bool:
    source = "def f(x, w):\n    return {}\n"
    return "body" in moved("python", source.format(before), source.format(after), "f")


@pytest.mark.parametrize(
    ("joined", "split"),
    [
        ('f"Expected a name, got {x!r}."', '"Expected a name," f" got {x!r}."'),
        ('f"Expected a name, got {x!r}."', '("Expected a name,"\n        f" got {x!r}.")'),
        ('f"Expected a name, got {x!r}."', 'f"Expected a name," f" got {x!r}."'),
        ('f"a{x:>{w}}b"', 'f"a{x:>{w}}" "b"'),
        ('f"a{x}"', 'f"a{x}" ""'),
        ('f"{{a}}{x}"', '"{a}" f"{x}"'),  # a doubled brace is one brace
        ('f"""a"{x}"""', '\'a"\' f"{x}"'),
        ('t"a{x}b"', 't"a" t"{x}b"'),
        ('b"ab"', 'b"a" b"b"'),
    ],
)
def test_a_literal_split_into_adjacent_pieces_is_the_literal_it_spells(
    joined: str, split: str
) -> None:
    assert not _moves(joined, split)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ('"abc"', 'f"abc"'),  # an f-string without placeholders is the string it equals
        ('f"a{x}"', "F'a{x}'"),
        ('f"a\\\\{x}"', 'rf"a\\{x}"'),  # raw or escaped: the same characters
        ('"a\\n" "b"', '"a\\nb"'),
        ('f"a\\n{x}" "b"', 'f"a\\n{x}b"'),
        ('f"\\N{EM DASH}{x}"', 'f"\u2014{x}"'),
        ("r'\\\"'", 'r"\\""'),  # ruff format's requoting of a raw string
    ],
)
def test_prefix_quotes_and_escapes_spelling_the_same_value_are_cosmetic(
    one: str, other: str
) -> None:
    assert not _moves(one, other)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('"a\\n" "b"', '"a\\\\nb"'),  # an escaped backslash is not a newline
        ('f"a\\n{x}"', 'rf"a\\n{x}"'),
        ('f"a, got {x!r}."', '"a," f" got {x!s}."'),  # the conversion
        ('f"a, got {x!r}."', '"a," f" got {w!r}."'),  # the placeholder's expression
        ('f"a{x:>{w}}b"', 'f"a{x:<{w}}" "b"'),  # the format spec
        ('f"a, got {x!r}."', '"a," f" get {x!r}."'),  # the characters
        ('f"a, got {x!r}."', '"a," f"got {x!r}."'),  # a space lost at the split
        ('"a" f"{x}"', 'f"{x}" "a"'),  # order
        ('f"{{a}}{x}"', '"{{a}}" f"{x}"'),  # two braces in a plain piece are two braces
        ('f"a{x}"', 't"a{x}"'),  # a template is not a str
        ('f"ab"', 'b"ab"'),
        ('f"{x=}"', 'f"{x = }"'),  # a self-documenting expression prints its spacing
        ("r'\\\\'", "r''"),  # tree-sitter puts this content in no leaf
        ("rf'\\\\{x}'", "rf'{x}'"),
    ],
)
def test_a_change_of_characters_or_of_a_placeholder_is_drift(before: str, after: str) -> None:
    assert _moves(before, after)
