"""Changes `gofmt -s` makes that must move only `text`, each beside a real change of the
same construct that must move the body (issue 8 F)."""

from __future__ import annotations

from tests.extractors.axes import moved

BEFORE = "package p\n\nfunc f() int {\n\tg();\n\treturn 0X1F + 1E3\n}\n"


def test_a_stray_semicolon_is_cosmetic_but_a_statement_is_not() -> None:
    after = "package p\n\nfunc f() int {\n\tg()\n\treturn 0X1F + 1E3\n}\n"
    assert moved("go", BEFORE, after.replace("g()\n", "g();;\n"), "f") == {"text"}
    assert "body" in moved("go", BEFORE, BEFORE.replace("g();", "g(); h()"), "f")


def test_number_prefix_and_exponent_case_are_cosmetic_but_digits_are_not() -> None:
    after = BEFORE.replace("0X1F + 1E3", "0x1f + 1e3")
    assert moved("go", BEFORE, after, "f") == {"text"}
    assert "body" in moved("go", BEFORE, BEFORE.replace("0X1F", "0X1E"), "f")
    assert "body" in moved("go", BEFORE, BEFORE.replace("1E3", "1E4"), "f")
