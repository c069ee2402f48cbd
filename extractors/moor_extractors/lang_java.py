"""Java: annotations and modifiers are decorators; nested classes qualify (`Outer.Inner.m`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from tree_sitter import Node

from . import catch_variables
from .lang_base import LanguageSpec, Span, Variant
from .normalise import Dialect, TokenWriter, fields, write_as_written, write_children


def _write_inferred_parameters(writer: TokenWriter, node: Node, field: str | None) -> None:
    """`(x) -> …` is `x -> …`: formatters add or drop the parentheses."""
    if node.named_child_count == 1 and node.named_children[0].type == "identifier":
        writer.add(writer.text(node.named_children[0]), field)
        return
    write_children(writer, node, field, "inferred_parameters")


def _write_modifiers(writer: TokenWriter, node: Node, field: str | None) -> None:
    """Modifier keywords in any order are one set (prettier-java sorts them into the order
    the JLS recommends); annotations keep their order. `@Override` is left out: it is kept
    only in the source (JLS 9.6.4.4), so adding or dropping it changes nothing that runs
    (memory: equivalent-spellings-are-not-drift)."""
    kept = [(child, name) for child, name in fields(node) if not _is_override(writer, child)]
    if not kept:
        return
    keywords: list[str] = []
    writer.open("modifiers", field)
    for child, name in kept:
        if child.is_named:
            writer.write(child, name)
        else:
            keywords.append(child.type)
    writer.tokens.extend(sorted(keywords))
    writer.add(")")


def _is_override(writer: TokenWriter, node: Node) -> bool:
    return node.type == "marker_annotation" and writer.text(node).replace(" ", "") in _OVERRIDE


_OVERRIDE = frozenset({"@Override", "@java.lang.Override"})
_CALLABLES = frozenset({"method_declaration", "constructor_declaration"})
# The package and outer classes before a type's simple name: `java.util.`, `Entities.`.
_QUALIFIERS = re.compile(r"(?<![\w$])(?:[A-Za-z_$][\w$]*\.)+(?=[A-Za-z_$])")
_FIELDS = frozenset({"field_declaration", "constant_declaration"})

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
        "catch_clause": catch_variables.writer_for(catch_variables.JAVA),
    },
)


class JavaSpec(LanguageSpec):
    cr_ends_lines = True  # CR is a line terminator (JLS 3.4)
    dialect = DIALECT
    comment_types = frozenset({"line_comment", "block_comment"})
    decorators = frozenset({"modifiers"})
    body_fields: ClassVar[Mapping[str, str]] = {"variable_declarator": "value"}

    def wraps(self, parent: Node, child: Node) -> bool:
        # `private int size = 0;` is one definition; in `int a, b;` each name stands alone.
        if parent.type not in _FIELDS:
            return False
        return sum(1 for c in parent.named_children if c.type == "variable_declarator") == 1

    def variant(self, node: Node, span: Span) -> Variant:
        if node.type not in _CALLABLES:
            return Variant()
        parameters = node.child_by_field_name("parameters")
        types = (
            [] if parameters is None else [_parameter_type(p) for p in parameters.named_children]
        )
        written = ", ".join(t for t in types if t is not None)
        # A reader names a type by its simple name (`EscapeMode` for `Entities.EscapeMode`);
        # the types as written tell apart two whose simple names are one.
        return Variant(spelling=self.simple_spelling(written), full=written)

    def together(self, variants: list[Variant]) -> bool:
        # Overloads: one method to a reader, however many parameter lists it has (two equal
        # lists are no overloads but a mistake that does not compile: ambiguous).
        spellings = [variant.full for variant in variants]
        return None not in spellings and len(set(spellings)) == len(spellings)

    def simple_spelling(self, spelling: str) -> str:
        return _QUALIFIERS.sub("", spelling)


def _parameter_type(parameter: Node) -> str | None:
    """A parameter's type as written: `int[]` for `int a[]` too, `String...` for varargs,
    generics kept (`List<String>`), annotations and `final` left out."""
    if parameter.type == "formal_parameter":
        type_node = parameter.child_by_field_name("type")
        dimensions = parameter.child_by_field_name("dimensions")
        return _text(type_node) + _text(dimensions)
    if parameter.type == "spread_parameter":
        types = [
            c
            for c in parameter.named_children
            if c.type not in ("modifiers", "variable_declarator")
        ]
        return (_text(types[0]) if types else "") + "..."
    return None  # a receiver parameter (`Outer this`) is not part of the overload


def _text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


SPEC = JavaSpec("java")
