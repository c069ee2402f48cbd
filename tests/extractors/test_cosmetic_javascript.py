"""Changes prettier makes to JavaScript and TypeScript that must move only `text`, each
beside a real change of the same construct that must move an axis (issue 8 F)."""

from __future__ import annotations

import pytest

from tests.extractors.axes import moved


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_parentheses_around_one_arrow_parameter_are_cosmetic(language: str) -> None:
    before = "const f = x => g(y => y + x);\n"
    after = "const f = (x) => g((y) => y + x);\n"
    assert moved(language, before, after, "f") == {"text"}
    assert "signature" in moved(language, before, "const f = (x, z) => g(y => y + x);\n", "f")
    assert "body" in moved(language, before, "const f = x => g((y, z) => y + x);\n", "f")
    assert "signature" in moved(language, before, "const f = ({ x }) => g(y => y + x);\n", "f")


def test_a_typed_or_optional_arrow_parameter_is_not_a_bare_one() -> None:
    before = "const f = x => x;\n"
    assert "signature" in moved("typescript", before, "const f = (x: T) => x;\n", "f")
    assert "signature" in moved("typescript", before, "const f = (x?) => x;\n", "f")


def test_a_leading_operator_of_a_union_or_intersection_is_cosmetic() -> None:
    before = 'type A = "a" | "b";\ntype B = X & Y;\n'
    after = 'type A =\n  | "a"\n  | "b";\ntype B =\n  & X\n  & Y;\n'
    assert moved("typescript", before, after, "A") == {"text"}
    assert moved("typescript", before, after, "B") == {"text"}
    assert "body" in moved("typescript", before, before.replace('| "b"', '| "c"'), "A")
    assert "body" in moved("typescript", before, before.replace("X & Y", "X | Y"), "B")
