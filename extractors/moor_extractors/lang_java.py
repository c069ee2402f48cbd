"""Java: annotations and modifiers are decorators; nested classes qualify (`Outer.Inner.m`)."""

from __future__ import annotations

from .lang_base import LanguageSpec
from .normalise import Dialect, write_as_written

DIALECT = Dialect(
    skip=frozenset({"line_comment", "block_comment"}),
    elide=frozenset({"parenthesized_expression"}),
    # Brackets stay: `int[]` and `int[][]` differ only by them (`dimensions` has no children).
    drop=frozenset({",", ";", "(", ")", "{", "}"}),
    special={
        "string_literal": write_as_written,
        "character_literal": write_as_written,
    },
)


class JavaSpec(LanguageSpec):
    dialect = DIALECT
    comment_types = frozenset({"line_comment", "block_comment"})
    decorators = frozenset({"modifiers"})


SPEC = JavaSpec("java")
