"""A catch clause's variable renamed consistently is the same code; a rename that changes
what a name refers to is not (issue 23; memory: a-renamed-catch-variable-is-not-drift)."""

from __future__ import annotations

import re

import pytest
from moor_extractors.symbols import parse_source


def body(language: str, source: str, qname: str) -> str:
    parsed = parse_source(language, source.encode())
    site = next(site for site in parsed.sites() if site.qname == qname)
    return dict(parsed.facts(site).axes)["body"]


def same(language: str, before: str, after: str, qname: str = "f") -> bool:
    return body(language, before, qname) == body(language, after, qname)


TS = "function f() {\n  try { g(); } catch (e) { log(e, e.message, x); }\n}\n"
JAVA = (
    "class A {\n  void f() {\n    try { g(); } catch (IOException e) {"
    " log(e, e.getMessage(), x); }\n  }\n}\n"
)
PY = "def f():\n    try:\n        g()\n    except OSError as e:\n        log(e, e.args, x)\n"


@pytest.mark.parametrize(
    ("language", "source", "qname", "renamed", "captured"),
    [
        ("typescript", TS, "f", re.sub(r"\be\b", "_e", TS), re.sub(r"\be\b", "x", TS)),
        ("javascript", TS, "f", re.sub(r"\be\b", "err", TS), None),
        ("tsx", TS, "f", re.sub(r"\be\b", "error", TS), None),
        (
            "java",
            JAVA,
            "A.f",
            JAVA.replace(" e)", " ex)").replace("(e,", "(ex,").replace(" e.", " ex."),
            JAVA.replace(" e)", " x)").replace("(e,", "(x,").replace(" e.", " x."),
        ),
        (
            "python",
            PY,
            "f",
            PY.replace(" e:", " err:").replace("(e,", "(err,").replace(" e.", " err."),
            PY.replace(" e:", " x:").replace("(e,", "(x,").replace(" e.", " x."),
        ),
    ],
)
def test_a_consistently_renamed_catch_variable_is_the_same_body_and_a_capture_is_not(
    language: str, source: str, qname: str, renamed: str, captured: str | None
) -> None:
    assert renamed != source
    assert same(language, source, renamed, qname)
    # Control: renamed to a name the clause already reads (`x`), the old `x` now means the
    # caught value — a different program.
    if captured is not None:
        assert not same(language, source, captured, qname)


def test_names_that_are_not_the_variable_still_have_to_match() -> None:
    # `this.e` is a field, `e.e()` a method: renaming them is a change even beside the rename.
    java = "class A {\n  void f() {\n    try { g(); } catch (E e) { log(e, this.e); }\n  }\n}\n"
    ok = java.replace("E e)", "E x)").replace("log(e,", "log(x,")
    assert same("java", java, ok, "A.f")
    assert not same("java", java, ok.replace("this.e", "this.x"), "A.f")
    python = "def f():\n    try:\n        g()\n    except E as e:\n        h(e, k=e.e)\n"
    renamed = python.replace("as e", "as x").replace("h(e", "h(x").replace("=e.", "=x.")
    assert same("python", python, renamed)
    assert not same("python", python, renamed.replace("k=", "x="))
    assert not same("python", python, renamed.replace("x.e", "x.x"))


PY_CLAUSE = "def f():\n    try:\n        g()\n    except E as e:\n        {}\n"
TS_CLAUSE = "function f() {{\n  try {{ g(); }} catch (e) {{ {} }}\n}}\n"
JAVA_CLAUSE = "class A {{\n  void f() {{\n    try {{ g(); }} catch (E e) {{ {} }}\n  }}\n}}\n"


@pytest.mark.parametrize(
    ("language", "clause", "hazard", "harmless"),
    [
        # A Python except variable is deleted when the clause ends, in the whole function.
        ("python", "h(e)\n    return e", "return e", "return 0"),
        # The frame's names are read by spelling; so is an f-string's `{e=}`.
        ("python", "h(e, locals())", "locals()", "dict()"),
        ("python", "h(f'{e=}')", "=}", "}"),
        # A closure may outlive the clause, which deleted the variable.
        ("python", "h(lambda: e)", "lambda: ", ""),
        # A shorthand property is keyed by the variable's spelling.
        ("typescript", "h({ e });", "{ e }", "[e]"),
        # A direct eval reads names by spelling; `with` may shadow the variable.
        ("javascript", "eval('e'); h(e);", "eval", "log"),
        ("javascript", "with (o) { h(e); }", "with (o)", "if (o)"),
        # A var of the same name is hoisted out of the clause (Annex B).
        ("javascript", "var e = 1; h(e);", "var e = 1;", "e = 1;"),
        # An anonymous class may inherit a field that hides the variable.
        ("java", "new B() { void m() { h(e); } };", "new B() { void m() { h(e); } }", "h(e)"),
    ],
)
def test_a_rename_moor_cannot_prove_the_same_is_still_drift(
    language: str, clause: str, hazard: str, harmless: str
) -> None:
    template = {"python": PY_CLAUSE, "java": JAVA_CLAUSE}.get(language, TS_CLAUSE)
    qname = "A.f" if language == "java" else "f"

    def renamed(text: str) -> str:
        # The variable and its uses in the clause renamed to `x`; an `eval`'s string and a
        # use after the clause (`return e`, which then reads another variable) are not.
        clause_x = re.sub(r"(?<!return )\be\b(?!')", "x", text)
        variable = {"python": ("as e:", "as x:"), "java": ("E e)", "E x)")}.get(
            language, ("(e)", "(x)")
        )
        return template.format(clause_x).replace(*variable)

    source = template.format(clause)
    assert hazard in source
    assert not same(language, source, renamed(clause), qname)
    # Control: without the hazard, the same rename is the same code.
    safe = clause.replace(hazard, harmless)
    assert same(language, template.format(safe), renamed(safe), qname)
