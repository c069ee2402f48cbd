"""JavaScript (and the base of TypeScript): functions bound to names are definitions too."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from tree_sitter import Node

from . import catch_variables
from .lang_base import LanguageSpec, Part, Span, Variant
from .normalise import Dialect, TokenWriter, fields, write_children

_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
# Bindings whose value, a function, is the definition: the binding names it.
_BINDINGS = {
    "variable_declarator": "value",
    "pair": "value",
    "assignment_expression": "right",
    "field_definition": "value",
    "public_field_definition": "value",
}


def _unescape_quote(match: re.Match[str]) -> str:
    escaped = match.group(1)
    return escaped if escaped in "'\"" else match.group(0)


def _write_string(writer: TokenWriter, node: Node, field: str | None) -> None:
    """`'it\\'s'` and `"it's"` are one string: quote style is the formatter's choice."""
    inner = writer.text(node)[1:-1]
    writer.add('"' + _ESCAPE.sub(_unescape_quote, inner), field)


def _write_jsx_text(writer: TokenWriter, node: Node, field: str | None) -> None:
    # JSX collapses whitespace runs in text (and drops lines of only whitespace).
    words = writer.text(node).split()
    if words:
        writer.add(" ".join(words), field)


def _write_parameters(writer: TokenWriter, node: Node, field: str | None) -> None:
    """`(x) => …` is `x => …`: prettier adds the parentheses, other formatters drop them."""
    parameters = [child for child in node.named_children if child.type not in _COMMENTS]
    if len(parameters) == 1:
        parameter = parameters[0]
        if parameter.type == "required_parameter" and parameter.child_count == 1:
            parameter = parameter.children[0]  # TypeScript: no type, default or modifier
        if parameter.type == "identifier":
            writer.add(writer.text(parameter), "parameter")
            return
    write_children(writer, node, field, "formal_parameters")


def _write_type_operation(writer: TokenWriter, node: Node, field: str | None) -> None:
    """TypeScript's `| A` is `A`: prettier leads a union (or intersection) on several lines
    with its operator, and tree-sitter makes that a union of one."""
    children = fields(node)
    if children and not children[0][0].is_named:
        for child, _ in children[1:]:
            writer.write(child, field)
        return
    writer.open(node.type, field)
    for child, name in children:
        writer.write(child, name)
    writer.add(")")


_COMMENTS = frozenset({"comment", "html_comment"})
DIALECT = Dialect(
    skip=_COMMENTS,
    elide=frozenset({"parenthesized_expression", "parenthesized_type"}),
    special={
        "string": _write_string,
        "jsx_text": _write_jsx_text,
        "formal_parameters": _write_parameters,
        "union_type": _write_type_operation,
        "intersection_type": _write_type_operation,
        "catch_clause": catch_variables.writer_for(catch_variables.JAVASCRIPT),
    },
    leaves={"number": str.lower},
)


class JavaScriptSpec(LanguageSpec):
    cr_ends_lines = True  # CR is a LineTerminator (ECMA-262); TypeScript inherits this
    dialect = DIALECT
    # TypeScript's class_body holds a method's decorators as siblings before it.
    leading = frozenset({"decorator"})
    wrappers = frozenset(
        {
            "export_statement",
            "lexical_declaration",
            "variable_declaration",
            "expression_statement",
            "ambient_declaration",
        }
    )
    decorators = frozenset(
        {
            "decorator",
            "accessibility_modifier",
            "export",
            "default",
            "declare",
            "static",
            "abstract",
            "readonly",
            "override",
            "override_modifier",
            "const",
            "let",
            "var",
        }
    )
    body_fields: ClassVar[Mapping[str, str]] = {
        "type_alias_declaration": "value",
        # A value bound to a name (`const limits = {…}`, a class field): the value is its body.
        "variable_declarator": "value",
        "field_definition": "value",
        "public_field_definition": "value",
    }
    name_fields: ClassVar[Mapping[str, str]] = {"pair": "key"}

    def variant(self, node: Node, span: Span) -> Variant:
        if node.type == "method_definition" and any(
            child.type in ("get", "set") for child in node.children
        ):
            return Variant(role="accessor")
        return Variant()

    def together(self, variants: list[Variant]) -> bool:
        # `get x()` with `set x(v)`: one property to a reader.
        return all(variant.role == "accessor" for variant in variants)

    def accept(self, node: Node) -> bool:
        parent = node.parent
        # `const f = function g() {}`: the binding `f` is the definition; `g` is not another.
        return not (
            node.type in _FUNCTION_VALUES and parent is not None and parent.type in _BINDINGS
        )

    def wraps(self, parent: Node, child: Node) -> bool:
        if parent.type in ("lexical_declaration", "variable_declaration"):
            declarators = [c for c in parent.named_children if c.type == "variable_declarator"]
            return len(declarators) == 1
        return parent.type in self.wrappers

    def classify(self, parent: Node, child: Node, field_name: str | None) -> Part:
        if _BINDINGS.get(parent.type) == field_name and child.type in _FUNCTION_VALUES:
            return Part.DESCEND
        return super().classify(parent, child, field_name)


SPEC = JavaScriptSpec("javascript")
