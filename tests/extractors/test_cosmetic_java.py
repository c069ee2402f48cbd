"""Changes prettier-java makes that must move only `text`, each beside a real change of the
same construct that must move an axis (issue 8 F)."""

from __future__ import annotations

from tests.extractors.axes import moved

BEFORE = "class A {\n    transient final int x;\n    void m() { f((e) -> e); }\n}\n"


def test_parentheses_around_one_lambda_parameter_are_cosmetic() -> None:
    after = BEFORE.replace("(e) ->", "e ->")
    assert moved("java", BEFORE, after, "A.m") == {"text"}
    assert "body" in moved("java", BEFORE, BEFORE.replace("(e) ->", "(e, g) ->"), "A.m")
    assert "body" in moved("java", BEFORE, BEFORE.replace("(e) ->", "(int e) ->"), "A.m")


def test_the_order_of_modifier_keywords_is_cosmetic_but_not_the_set() -> None:
    after = BEFORE.replace("transient final", "final transient")
    assert moved("java", BEFORE, after, "A") == {"text"}
    assert "body" in moved("java", BEFORE, BEFORE.replace("transient final", "final"), "A")
    method = "class A {\n    @B @C public static void m() {}\n}\n"
    swapped = method.replace("public static", "static public")
    assert moved("java", method, swapped, "A.m") == {"text"}
    assert "decorators" in moved("java", method, method.replace("@B @C", "@C @B"), "A.m")
