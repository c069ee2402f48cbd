"""TypeScript and TSX: JavaScript's rules over the TypeScript grammars, plus overloads.

Overload signatures and their implementation are one function (the bare name); a list of
parameter types picks one: `parse(string, number?)` — each parameter's type as written,
`any` where none is written, `?` after an optional one, `...` before a rest parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from tree_sitter import Node

from .lang_base import Span, Variant
from .lang_javascript import JavaScriptSpec

_CALLABLES = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_signature",
        "method_definition",
        "method_signature",
        "abstract_method_signature",
    }
)


_MEMBERS = frozenset({"property_signature", "index_signature"})
# Types whose parts are the type itself, to a reader: `A & { … }`, `{ … } | null`, `({ … })`.
_BRANCHING = frozenset({"union_type", "intersection_type", "parenthesized_type"})


class TypeScriptSpec(JavaScriptSpec):
    placeless = frozenset(
        {"property_signature", "index_signature", "enum_assignment", "property_identifier"}
    )
    body_fields: ClassVar[Mapping[str, str]] = {
        **JavaScriptSpec.body_fields,
        "enum_assignment": "value",
    }

    def accept(self, node: Node) -> bool:
        if node.type in _MEMBERS or _in_object_type(node):
            return _is_member(node)
        return super().accept(node)

    unlists = True

    def unlisted(self, container: Node, name: str) -> str | None:
        # Until issue 23, a method signature anywhere under a definition was listed as its
        # member (`type L = Promise<{ m(): void }>` listed `L.m`).
        pending = [container]
        while pending:
            node = pending.pop()
            if _in_object_type(node) and not _is_member(node):
                named = node.child_by_field_name("name")
                if named is not None and named.text == name.encode():
                    return (
                        "a method signature of an object type that is not the type's own "
                        "shape (a generic argument, a parameter's or an annotation's type); "
                        "moor lists no such member since issue 23, as it lists no property "
                        "there: name the definition that holds it"
                    )
            pending.extend(node.named_children)
        return None

    def name(self, node: Node, name_node: Node | None) -> str | None:
        if node.type == "index_signature":
            # Named by its key's type, as the indexed access type a reader writes
            # (`Dict[string]`), on its own level like a computed key: `Dict.[string]`.
            key = super().name(node, name_node)
            return f"[{''.join(key.split())}]" if key is not None else None
        return super().name(node, name_node)

    def variant(self, node: Node, span: Span) -> Variant:
        role = super().variant(node, span).role
        parameters = node.child_by_field_name("parameters")
        if node.type not in _CALLABLES or parameters is None:
            return Variant(role=role)
        types = [
            _parameter_type(p)
            for p in parameters.named_children
            if p.type in ("required_parameter", "optional_parameter")
        ]
        return Variant(spelling=", ".join(types), role=role)

    def together(self, variants: list[Variant]) -> bool:
        return super().together(variants) or all(v.spelling is not None for v in variants)


def _in_object_type(node: Node) -> bool:
    """A method signature of an object type: a member by the properties' rule (one of a
    class body is an overload, and of an interface body always a member)."""
    return (
        node.type == "method_signature"
        and node.parent is not None
        and (node.parent.type == "object_type")
    )


def _is_member(node: Node) -> bool:
    """Whether a property or index signature is a member of a type a reader names: one of
    an interface's body, or of an object type that is a type alias's own shape or a member's
    own type — the value itself or a branch of it (a union's, an intersection's, a
    conditional type's result), never a type nested in another (`Promise<{ … }>`, `{ … }[]`,
    a function's parameter), whose properties are not the alias's (memory:
    members-are-definitions-without-moving-places)."""
    holder = node.parent
    if holder is None or holder.type == "interface_body":
        return holder is not None
    if holder.type != "object_type":
        return False
    shape, outer = holder, holder.parent
    while outer is not None and (
        outer.type in _BRANCHING or (outer.type == "conditional_type" and _is_branch(outer, shape))
    ):
        shape, outer = outer, outer.parent
    if outer is None:
        return False
    if outer.type == "type_alias_declaration":
        value = outer.child_by_field_name("value")
        return value is not None and value.id == shape.id
    if outer.type == "type_annotation":
        owner = outer.parent
        return owner is not None and owner.type == "property_signature" and _is_member(owner)
    return False


def _is_branch(conditional: Node, child: Node) -> bool:
    """Whether `child` is a result of `conditional` (not the type tested or tested against)."""
    return any(
        branch is not None and branch.id == child.id
        for branch in (
            conditional.child_by_field_name("consequence"),
            conditional.child_by_field_name("alternative"),
        )
    )


def _parameter_type(parameter: Node) -> str:
    annotation = parameter.child_by_field_name("type")
    written = (
        annotation.named_children[0]
        if annotation is not None and annotation.named_children
        else None
    )
    text = (written.text or b"").decode("utf-8", "replace") if written is not None else "any"
    pattern = parameter.child_by_field_name("pattern")
    if pattern is not None and pattern.type == "rest_pattern":
        text = "..." + text
    if parameter.type == "optional_parameter":
        text += "?"
    return text


SPEC = TypeScriptSpec("typescript")
TSX_SPEC = TypeScriptSpec("tsx")
