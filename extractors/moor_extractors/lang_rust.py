"""Rust: functions in `impl Type` are `Type.method`; attributes and `pub` are decorators."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from tree_sitter import Node

from .lang_base import LanguageSpec, Part, Parts, Span, Variant
from .normalise import PUNCTUATION, Dialect, TokenWriter, fields, write_as_written

_COMMENTS = frozenset({"line_comment", "block_comment"})
# What a block holds that is not its value.
_STATEMENTS = frozenset(
    {"let_declaration", "empty_statement", "macro_definition", "attribute_item", "label"}
)


def _block_value(block: Node) -> Node | None:
    """The one expression `{ e }` is (rustfmt's match_arm_blocks add and remove these
    braces); None for a block that holds statements, or a `;`."""
    children = [child for child in block.children if child.type not in _COMMENTS]
    if len(children) != 3:  # `{`, the value, `}`
        return None
    value = children[1]
    if value.type == "expression_statement":
        # `{ match x { … } }`: a block-like tail is parsed as a statement without its `;`.
        return value.children[0] if value.child_count == 1 else None
    if value.type in _STATEMENTS or value.type.endswith("_item"):
        return None
    return value


def _write_braced_value(writer: TokenWriter, node: Node, field: str | None) -> None:
    """A match arm's value or a closure's body: `{ e }` is `e`."""
    writer.open(node.type, field)
    for child, name in fields(node):
        value = _block_value(child) if child.type == "block" else None
        writer.write(value if value is not None else child, name)
    writer.add(")")


def _write_token_tree(writer: TokenWriter, node: Node, field: str | None) -> None:
    """A macro's tokens with their punctuation, less what rustfmt adds and removes: a comma
    before the closing delimiter (but a matcher, a `token_tree_pattern`, keeps it: there it
    decides what matches), and the delimiters of a macro_rules transcriber (`=> (…)` is
    `=> {…}`)."""
    children = [(child, name) for child, name in fields(node) if child.type not in _COMMENTS]
    last = len(children) - 1
    # Without its closing delimiter (error recovery) nothing in the tree is trailing.
    closed = last > 0 and children[last][0].type in (")", "]", "}")
    writer.open(node.type, field)
    for index, (child, name) in enumerate(children):
        trailing_comma = child.type == "," and index == last - 1
        transcriber_delimiter = field == "right" and index in (0, last)
        if child.is_named:
            writer.write(child, name)
        elif not (closed and (trailing_comma or transcriber_delimiter)):
            writer.add(child.type)
    writer.add(")")


DIALECT = Dialect(
    skip=_COMMENTS,
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
        "match_arm": _write_braced_value,
        "closure_expression": _write_braced_value,
        "token_tree": _write_token_tree,
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
        "enum_variant": "variant",
        "field_declaration": "field",
        "impl_item": "impl",
    }
    method_containers = frozenset({"trait"})
    placeless = frozenset({"enum_variant", "field_declaration", "impl_item"})
    transparent = frozenset({"impl_item"})

    def pasted(self, symbol: str) -> str | None:
        # `bail!` is how a reader writes a macro's name (a macro is named without its `!`).
        if symbol.endswith("!") and not symbol.endswith("!!"):
            return super().pasted(symbol[:-1]) or symbol[:-1]
        # `<(A, B) as BothDebug>::__dispatch_ensure`, Rust's own name for a trait's method
        # of a type: the type's method picked by the trait (`Error.fmt(Display)`), at the
        # file's level where the type has no name (a tuple: `__dispatch_ensure(BothDebug)`).
        qualified = _QUALIFIED_PATH.fullmatch(symbol)
        if qualified is not None:
            owner = _written_type_name(qualified["type"])
            rest = qualified["rest"].replace("::", ".")
            method = f"{owner}.{rest}" if owner else rest
            return f"{method}({qualified['trait'].strip()})"
        return super().pasted(symbol)

    def simple_spelling(self, spelling: str) -> str:
        # A trait named by its path or by its name (`fmt::Display`, `Display`) is one trait.
        return _PATH_PREFIX.sub("", spelling)

    def name(self, node: Node, name_node: Node | None) -> str | None:
        if node.type == "impl_item":
            return type_name(name_node)  # None for a tuple or an array: not listed
        if _is_tuple_field(node):
            assert node.parent is not None
            types = node.parent.children_by_field_name("type")
            return str(next(i for i, t in enumerate(types) if t.id == node.id))
        return super().name(node, name_node)

    def is_place(self, node: Node) -> bool:
        return super().is_place(node) and not _is_tuple_field(node)

    def parts(self, node: Node, span: Span) -> Parts:
        if not _is_tuple_field(node):
            return super().parts(node, span)
        # A tuple field is its type, with the attributes and visibility written before it.
        parts = Parts()
        before = node.prev_named_sibling
        while before is not None and before.type in self.decorators:
            parts.decorators.insert(0, (before, None))
            before = before.prev_named_sibling
        parts.signature.append((node, "type"))
        return parts

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

    def variant(self, node: Node, span: Span) -> Variant:
        """A method of `impl Display for Pattern` is picked by its trait,
        `Pattern.fmt(Display)`, or by the whole impl header where the trait is not enough;
        `#[cfg(…)]` on it or on its impl makes it a variant. An impl block itself is picked
        by its trait (`Error(Display)`), an inherent one by `impl` (`Error(impl)`), or by its
        whole header where that is not enough (`Foo(impl Foo<u8>)`)."""
        if node.type == "impl_item":
            trait = _text(node.child_by_field_name("trait"))
            own = _text(node.child_by_field_name("type"))
            header = f"{trait} for {own}" if trait is not None else f"impl {own}"
            return Variant(spelling=trait or "impl", full=header, role="impl", secondary=True)
        block = node.parent
        impl = block.parent if block is not None and block.type == "declaration_list" else None
        trait = _text(impl.child_by_field_name("trait")) if impl is not None else None
        own = _text(impl.child_by_field_name("type")) if impl is not None else None
        # Impls of one trait for two instantiations of a type (`From<&str> for Box<str>`,
        # `… for Box<dyn Error>`), or two inherent impls: the whole header tells them apart.
        full = f"{trait} for {own}" if trait is not None else own
        cfg = _has_cfg(span.first, span.top) or (impl is not None and _has_cfg(*_attributes(impl)))
        return Variant(spelling=trait, full=full, role="cfg" if cfg else None)

    def together(self, variants: list[Variant]) -> bool:
        # One function per platform or feature: a reader sees one function. A type's impls
        # where the type is not defined: a reader sees the type's code in this file.
        roles = {variant.role for variant in variants}
        return roles == {"cfg"} or roles == {"impl"}

    def classify(self, parent: Node, child: Node, field_name: str | None) -> Part:
        if parent.type == "macro_definition" and child.type == "macro_rule":
            return Part.BODY
        return super().classify(parent, child, field_name)


def _is_tuple_field(node: Node) -> bool:
    """A tuple struct's field: its type, which is all it is (`struct Point(i32, i32)`)."""
    parent = node.parent
    return parent is not None and parent.type == "ordered_field_declaration_list"


_QUALIFIED_PATH = re.compile(r"<\s*(?P<type>.+?)\s+as\s+(?P<trait>.+)>::(?P<rest>[\w:]+)")
_PATH_PREFIX = re.compile(r"(?<![\w:])(?:[A-Za-z_]\w*::)+(?=[A-Za-z_])")


def _written_type_name(written: str) -> str | None:
    """`&'a mut fmt::Wrapper<T>` -> `Wrapper`, as `type_name` reads the node; None for a
    type without a name (a tuple, an array, a slice)."""
    text = re.sub(r"\A(?:&\s*(?:'\w+\s+)?(?:mut\s+)?|\*\s*(?:const|mut)\s+|dyn\s+)+", "", written)
    if not text or text[0] in "([":
        return None
    path = text.split("<", 1)[0].strip()
    own = path.rsplit("::", 1)[-1]
    return own if re.fullmatch(r"[A-Za-z_]\w*", own) else None


def _text(node: Node | None) -> str | None:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else None


def _attributes(item: Node) -> tuple[Node, Node]:
    """The first of the attributes right before `item` (or `item`), and `item`."""
    first, sibling = item, item.prev_sibling
    while sibling is not None and sibling.type in (
        "attribute_item",
        "line_comment",
        "block_comment",
    ):
        if sibling.type == "attribute_item":
            first = sibling
        sibling = sibling.prev_sibling
    return first, item


def _has_cfg(first: Node, top: Node) -> bool:
    """Whether a `#[cfg(…)]` is among the attributes from `first` up to `top`."""
    sibling: Node | None = first
    while sibling is not None and sibling != top:
        if sibling.type == "attribute_item":
            attribute = sibling.named_children[0] if sibling.named_children else None
            name = (
                attribute.named_children[0]
                if attribute is not None and attribute.named_children
                else None
            )
            if name is not None and name.text == b"cfg":
                return True
        sibling = sibling.next_sibling
    return False


SPEC = RustSpec("rust")
