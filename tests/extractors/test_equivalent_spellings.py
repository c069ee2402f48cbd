"""Spellings that provably run the same are one token stream; the rest are said in a line
(issue 23, item 3; memory: equivalent-spellings-are-not-drift)."""

from __future__ import annotations

from moor_extractors.change import change_summary
from moor_extractors.symbols import parse_source


def axes(language: str, source: str, qname: str) -> dict[str, str]:
    parsed = parse_source(language, source.encode())
    site = next(site for site in parsed.sites() if site.qname == qname)
    return dict(parsed.facts(site).axes)


def code_axes(language: str, source: str, qname: str) -> dict[str, str]:
    """Every axis but the raw text."""
    return {k: v for k, v in axes(language, source, qname).items() if k != "text"}


SPLIT = "def f(\n    x: list[int]\n    | None = None,\n) -> int:\n    return 1\n"
JOINED = "def f(\n    x: list[int] | None = None,\n) -> int:\n    return 1\n"


def test_a_parameter_annotation_rejoined_onto_one_line_is_the_same_signature() -> None:
    assert axes("python", SPLIT, "f")["signature"] == axes("python", JOINED, "f")["signature"]
    # Control: a different type in the same place is a different signature.
    changed = JOINED.replace("list[int]", "list[str]")
    assert axes("python", changed, "f")["signature"] != axes("python", JOINED, "f")["signature"]


def test_an_added_override_annotation_is_the_same_java_method() -> None:
    plain = "class A {\n  public void f() { a(); }\n}\n"
    marked = "class A {\n  @Override\n  public void f() { a(); }\n}\n"
    alone = "class A {\n  void f() { a(); }\n}\n"
    alone_marked = "class A {\n  @Override void f() { a(); }\n}\n"
    assert code_axes("java", plain, "A.f") == code_axes("java", marked, "A.f")
    assert (
        axes("java", alone, "A.f")["decorators"] == axes("java", alone_marked, "A.f")["decorators"]
    )
    assert axes("java", plain, "A")["body"] == axes("java", marked, "A")["body"]
    # Control: an annotation that is kept at run time is a change.
    deprecated = plain.replace("public", "@Deprecated\n  public")
    assert axes("java", deprecated, "A.f")["decorators"] != axes("java", plain, "A.f")["decorators"]


def test_a_change_is_said_in_a_line_as_it_is_written() -> None:
    assert (
        change_summary(
            "python",
            "def f(s: Optional[Scope]) -> int:\n    return 1\n",
            "def f(s: Scope | None) -> int:\n    return 1\n",
        )
        == "`Optional[Scope]` → `Scope | None`"
    )
    assert (
        change_summary(
            "go",
            "func (s *S) F() int { return s.x }",
            "func (srv *S) F() int { return srv.x }",
        )
        == "`s` → `srv` (2 places)"
    )
    java = "class A {\n  void f() { a(); }\n}\n"
    assert change_summary("java", java, java.replace("void", "@Deprecated void")) == (
        "added `@Deprecated`"
    )
    # Control: a comment or whitespace is no change at all.
    python = "def f():\n    return 1  # one\n"
    assert change_summary("python", python, python.replace("# one", "#  two\n")) is None
