"""Java: annotations and modifiers are decorators; nested classes qualify (`Outer.Inner.m`)."""

from __future__ import annotations

from tree_sitter import Node

from .lang_base import LanguageSpec
from .normalise import Dialect, TokenWriter, fields, write_as_written


def _write_inferred_parameters(writer: TokenWriter, node: Node, field: str | None) -> None:
    """`(x) -> …` is `x -> …`: formatters add or drop the parentheses."""
    if node.named_child_count == 1 and node.named_children[0].type == "identifier":
        writer.add(writer.text(node.named_children[0]), field)
        return
    writer.open("inferred_parameters", field)
    for child, name in fields(node):
        writer.write(child, name)
    writer.add(")")


def _write_modifiers(writer: TokenWriter, node: Node, field: str | None) -> None:
    """Modifier keywords in any order are one set (prettier-java sorts them into the order
    the JLS recommends); annotations keep their order."""
    keywords: list[str] = []
    writer.open("modifiers", field)
    for child, name in fields(node):
        if child.is_named:
            writer.write(child, name)
        else:
            keywords.append(child.type)
    writer.tokens.extend(sorted(keywords))
    writer.add(")")


DIALECT = Dialect(
    skip=frozenset({"line_comment", "block_comment"}),
    elide=frozenset({"parenthesized_expression"}),
    # Brackets stay: `int[]` and `int[][]` differ only by them (`dimensions` has no children).
    drop=frozenset({",", ";", "(", ")", "{", "}"}),
    special={
        "string_literal": write_as_written,
        "character_literal": write_as_written,
        "inferred_parameters": _write_inferred_parameters,
        "modifiers": _write_modifiers,
    },
)


class JavaSpec(LanguageSpec):
    dialect = DIALECT
    comment_types = frozenset({"line_comment", "block_comment"})
    decorators = frozenset({"modifiers"})


SPEC = JavaSpec("java")
