"""Rust: functions in `impl Type` are `Type.method`; attributes and `pub` are decorators."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from tree_sitter import Node

from .lang_base import LanguageSpec, Part
from .normalise import PUNCTUATION, Dialect, write_as_written

DIALECT = Dialect(
    skip=frozenset({"line_comment", "block_comment"}),
    elide=frozenset({"parenthesized_expression"}),
    drop=PUNCTUATION,
    # Inside a macro's token tree `[a; 3]` and `[a, 3]` differ only by punctuation.
    keep_punctuation_in=frozenset(
        {"token_tree", "token_tree_pattern", "token_repetition", "token_repetition_pattern"}
    ),
    special={
        "string_literal": write_as_written,
        "raw_string_literal": write_as_written,
        "char_literal": write_as_written,
    },
)


def type_name(node: Node | None) -> str | None:
    """`&'a mut fmt::Wrapper<T>` -> `Wrapper`: the named type an impl is for."""
    while node is not None:
        if node.type in ("type_identifier", "primitive_type", "identifier"):
            return node.text.decode("utf-8", "replace") if node.text else None
        if node.type == "scoped_type_identifier":
            node = node.child_by_field_name("name")
        elif node.type in ("generic_type", "reference_type", "pointer_type"):
            node = node.child_by_field_name("type")
        else:
            return None
    return None


class RustSpec(LanguageSpec):
    dialect = DIALECT
    comment_types = frozenset({"line_comment", "block_comment"})
    leading = frozenset({"attribute_item"})
    decorators = frozenset({"attribute_item", "visibility_modifier"})
    body_fields: ClassVar[Mapping[str, str]] = {
        "type_item": "type",
        "const_item": "value",
        "static_item": "value",
    }
    kinds: ClassVar[Mapping[str, str]] = {
        "struct_item": "struct",
        "enum_item": "enum",
        "union_item": "union",
        "type_item": "type",
        "trait_item": "trait",
        "mod_item": "module",
        "macro_definition": "macro",
        "function_item": "function",
        "function_signature_item": "function",
        "const_item": "constant",
        "static_item": "static",
    }
    method_containers = frozenset({"trait"})

    def qualifier(self, ancestor: Node) -> str | None:
        if ancestor.type != "impl_item":
            return None
        return type_name(ancestor.child_by_field_name("type"))

    def kind(self, node: Node, captured: str, container_kind: str | None) -> str:
        kind = super().kind(node, captured, container_kind)
        block = node.parent
        if kind == "function" and block is not None and block.type == "declaration_list":
            owner = block.parent
            if owner is not None and owner.type in ("impl_item", "trait_item"):
                return "method"
        return kind

    def classify(self, parent: Node, child: Node, field_name: str | None) -> Part:
        if parent.type == "macro_definition" and child.type == "macro_rule":
            return Part.BODY
        return super().classify(parent, child, field_name)


SPEC = RustSpec("rust")
