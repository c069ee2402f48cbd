"""Go: methods are qualified by their receiver type (`List.Push`); no decorators."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from tree_sitter import Node

from .lang_base import LanguageSpec
from .normalise import Dialect, write_as_written

_SPECS = frozenset({"type_spec", "type_alias", "const_spec", "var_spec"})
_TYPE_KINDS = {"interface_type": "interface", "struct_type": "struct"}

DIALECT = Dialect(
    # gofmt drops a stray `;`: an empty statement does nothing.
    skip=frozenset({"comment", "empty_statement"}),
    elide=frozenset({"parenthesized_expression", "parenthesized_type"}),
    special={
        "interpreted_string_literal": write_as_written,
        "raw_string_literal": write_as_written,
        "rune_literal": write_as_written,
    },
    # gofmt lower-cases `0X`, `0B`, `0O` and `E`; the case of a hex digit is not its value.
    leaves={"int_literal": str.lower, "float_literal": str.lower, "imaginary_literal": str.lower},
)


def base_type_name(node: Node | None) -> str | None:
    """`*List[T]` -> `List`: the named type under pointers and type arguments."""
    while node is not None:
        if node.type in ("type_identifier", "identifier"):
            return node.text.decode("utf-8", "replace") if node.text else None
        if node.type == "qualified_type":
            node = node.child_by_field_name("name")
        elif node.type == "generic_type":
            node = node.child_by_field_name("type")
        else:  # pointer_type, parenthesized_type: the one type inside
            node = node.named_children[-1] if node.named_child_count else None
    return None


_RECEIVER = re.compile(r"\A\(\*?([\w]+)(?:\[[^\]]*\])?\)\.")
# `FlagBase[T, C, VC].Apply`: a receiver's type parameters as its declaration writes them.
_TYPE_PARAMETERS = re.compile(r"\A(\w+)\[[^\[\]]*\](?=\.|\Z)")


class GoSpec(LanguageSpec):
    dialect = DIALECT
    body_fields: ClassVar[Mapping[str, str]] = {
        "type_spec": "type",
        "type_alias": "type",
        "const_spec": "value",
        "var_spec": "value",
    }

    placeless = frozenset({"field_declaration", "method_elem"})

    def name(self, node: Node, name_node: Node | None) -> str | None:
        if node.type == "field_declaration" and node.child_by_field_name("name") is None:
            return base_type_name(name_node)  # an embedded field is named by its type
        return super().name(node, name_node)

    def own_qualifier(self, node: Node) -> str | None:
        if node.type != "method_declaration":
            return None
        receiver = node.child_by_field_name("receiver")
        parameters = receiver.named_children if receiver is not None else []
        declarations = [p for p in parameters if p.type == "parameter_declaration"]
        if not declarations:
            return None
        return base_type_name(declarations[0].child_by_field_name("type"))

    def pasted(self, symbol: str) -> str | None:
        # `(*List).Push` is how Go itself (a method expression, a stack trace) names it.
        match = _RECEIVER.match(symbol)
        if match is not None:
            return match.group(1) + "." + symbol[match.end() :]
        match = _TYPE_PARAMETERS.match(symbol)
        if match is not None:
            rest = symbol[match.end() :]
            return match.group(1) + (super().pasted(rest) or rest)
        return super().pasted(symbol)

    def kind(self, node: Node, captured: str, container_kind: str | None) -> str:
        if node.type == "type_spec":
            shape = node.child_by_field_name("type")
            return _TYPE_KINDS.get(shape.type, "type") if shape is not None else "type"
        return super().kind(node, captured, container_kind)

    def wraps(self, parent: Node, child: Node) -> bool:
        # `type A struct{}` is one declaration; in `type ( A int; B int )` each spec stands alone.
        if parent.type not in ("type_declaration", "const_declaration", "var_declaration"):
            return False
        return sum(1 for c in parent.named_children if c.type in _SPECS) == 1


SPEC = GoSpec("go")
