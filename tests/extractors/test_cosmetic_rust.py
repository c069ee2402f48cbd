"""Changes rustfmt makes that must move only `text`, each beside a real change of the same
construct that must move the body (issue 8 F)."""

from __future__ import annotations

from tests.extractors.axes import moved


def test_braces_around_a_match_arm_value_or_a_closure_body_are_cosmetic() -> None:
    before = (
        "fn f(x: u8) -> u8 {\n    match x {\n        0 => g(|y| y + 1),\n        _ => 1,\n"
        "    }\n}\n"
    )
    after = (
        "fn f(x: u8) -> u8 {\n    match x {\n        0 => {\n            g(|y| { y + 1 })\n"
        "        }\n        _ => { /* one */ 1 }\n    }\n}\n"
    )
    assert moved("rust", before, after, "f") == {"text"}
    assert "body" in moved("rust", before, before.replace("_ => 1,", "_ => { 1; }"), "f")
    assert "body" in moved("rust", before, before.replace("_ => 1,", "_ => { g(0); 1 }"), "f")
    assert "body" in moved("rust", before, before.replace("y + 1", "y + 2"), "f")


def test_a_trailing_comma_in_a_macro_call_or_attribute_is_cosmetic_but_not_in_a_matcher() -> None:
    before = "#[derive(Clone, Debug)]\nstruct S;\n\nfn f() {\n    g!(a, b);\n}\n"
    after = "#[derive(Clone, Debug,)]\nstruct S;\n\nfn f() {\n    g!(a, b,);\n}\n"
    assert moved("rust", before, after, "f") == {"text"}
    assert moved("rust", before, after, "S") == {"text"}
    assert "body" in moved("rust", before, before.replace("g!(a, b)", "g!(a; b)"), "f")
    assert "body" in moved("rust", before, before.replace("g!(a, b)", "g!(a, b, c)"), "f")
    assert "decorators" in moved("rust", before, before.replace("Clone, ", ""), "S")
    rules = "macro_rules! m {\n    ($a:expr) => ($a);\n}\n"
    assert moved("rust", rules, rules.replace("($a);", "{ $a };"), "m") == {"text"}
    assert "body" in moved("rust", rules, rules.replace("($a:expr)", "($a:expr,)"), "m")
