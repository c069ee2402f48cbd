"""Python: docstrings go to `doc`; literals compare by value, so quote style is cosmetic."""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Mapping
from functools import lru_cache
from typing import ClassVar

from tree_sitter import Node

from . import catch_variables
from .lang_base import LanguageSpec, Part, Span, Variant
from .normalise import Dialect, TokenWriter, fields, write_children

_DEFINITIONS = frozenset({"function_definition", "class_definition"})
_STRINGS = ("string", "concatenated_string")
_QUOTES = "'\""
# `@x.setter` beside `@property def x`: the accessors of one property.
_ACCESSORS = frozenset({"setter", "deleter", "getter"})
# A literal's prefix, and its opening quote as written.
_OPENING = re.compile(rb"([A-Za-z]*)('''|\"\"\"|'|\")")


def _prefix(string: Node) -> str:
    start = string.children[0].text or b""
    return start.decode("ascii", "replace").rstrip(_QUOTES).lower()


def literal_value(string: Node, source: bytes) -> str | bytes | None:
    """The value of a string literal without interpolation; None for an f-string."""
    text = source[string.start_byte : string.end_byte]
    opening = _OPENING.match(text)
    if opening is None or string.has_error:
        return _value_from_parts(string)
    # Read off the literal's own text, never its leaves: tree-sitter-python 0.25 puts the
    # content of `r'\\'` in no leaf at all (its string_end is `\\'`).
    prefix = opening.group(1).lower()
    if b"f" in prefix or b"t" in prefix:
        return None
    if b"\\" in text and b"r" not in prefix:
        return _evaluate(text.decode("utf-8", "replace"))
    # Without an escape sequence (and always in a raw literal) the value is the text
    # between the quotes as written.
    value = text[opening.end() : len(text) - len(opening.group(2))].replace(b"\r\n", b"\n")
    return value if b"b" in prefix else value.decode("utf-8", "replace")


def _value_from_parts(string: Node) -> str | bytes | None:
    prefix = _prefix(string)
    if "f" in prefix or "t" in prefix:
        return None
    contents = [child for child in string.children if child.type == "string_content"]
    if all(child.child_count == 0 for child in contents):
        # No escape sequence: the value is the text as written (newlines as Python reads them).
        text = b"".join(child.text or b"" for child in contents).replace(b"\r\n", b"\n")
        return text if "b" in prefix else text.decode("utf-8", "replace")
    return _evaluate((string.text or b"").decode("utf-8", "replace"))


@lru_cache(maxsize=4096)
def _evaluate(literal: str) -> str | bytes | None:
    """A literal's value as Python reads it (cached: `compile` is the cost, and the same
    literals recur across a file's definitions and across files)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes warn, and still have a value
        try:
            value = ast.literal_eval(literal)
        except (SyntaxError, ValueError):
            return None
    return value if isinstance(value, str | bytes) else None


def _value_token(value: str | bytes) -> str:
    # repr keeps NUL (the digest's separator) out of tokens; the letter keeps str != bytes.
    if isinstance(value, bytes):
        return "b" + repr(value.decode("latin-1"))
    return "s" + repr(value)


def _write_string(writer: TokenWriter, node: Node, field: str | None) -> None:
    value = literal_value(node, writer.source)
    if isinstance(value, str) and "\n" in value and field is None and _is_statement(node):
        # A string statement does nothing: it is a comment, and black re-indents one that
        # opens a block as if it were a docstring.
        value = " ".join(value.split())
    if value is not None:
        writer.add(_value_token(value), field)
        return
    template = _template(writer, node)
    if template is None:
        writer.add(writer.text(node), field)  # unparseable literal: as written
        return
    _write_template(writer, *template, field)


def _is_statement(string: Node) -> bool:
    parent = string.parent
    return parent is not None and parent.type == "expression_statement" and parent.child_count == 1


# A literal part's value, or an interpolation node.
_Segment = str | Node


def _template(writer: TokenWriter, string: Node) -> tuple[str, list[_Segment]] | None:
    """An f-string (`"f"`) or t-string (`"t"`) as its literal parts' values and its
    interpolations; None for any other literal. Values, not text: a raw and an escaped
    spelling of the same characters are one template, as are `F'a{x}'` and `f"a{x}"`."""
    source = writer.source
    opening = _OPENING.match(source, string.start_byte, string.end_byte)
    if opening is None or string.has_error:
        return None
    prefix = opening.group(1).decode("ascii").lower()
    if "f" not in prefix and "t" not in prefix:
        return None
    quote = opening.group(2).decode("ascii")
    raw = "r" in prefix
    # The literal parts are the bytes between the interpolations, not the content leaves
    # (which miss text, see `literal_value`).
    segments: list[_Segment] = []
    position = opening.end()
    for child in string.children:
        if child.type == "interpolation":
            part = source[position : child.start_byte].decode("utf-8", "replace")
            segments.extend((_template_text(part, raw, quote), child))
            position = child.end_byte
    part = source[position : string.end_byte - len(quote)].decode("utf-8", "replace")
    segments.append(_template_text(part, raw, quote))
    return ("t" if "t" in prefix else "f"), segments


@lru_cache(maxsize=4096)
def _template_text(text: str, raw: bool, quote: str) -> str:
    """The value of a literal part of an f-string: doubled braces are one brace, and
    escapes are read as Python reads them (`\\n` is a newline unless the piece is raw)."""
    text = text.replace("\r\n", "\n").replace("{{", "{").replace("}}", "}")
    if raw or "\\" not in text:
        return text
    # A sentinel after the text: the part may end in a backslash or a quote character.
    value = _evaluate(("r" if raw else "") + quote + text + "_" + quote)
    return value[:-1] if isinstance(value, str) else text


def _write_template(
    writer: TokenWriter, kind: str, segments: list[_Segment], field: str | None
) -> None:
    """Adjacent literal parts as one value, so where a literal is split is not meaning; an
    f-string without interpolations is the plain string it equals."""
    merged: list[_Segment] = []
    for segment in segments:
        if isinstance(segment, str) and merged and isinstance(merged[-1], str):
            merged[-1] += segment
        elif not isinstance(segment, str) or segment:
            merged.append(segment)
    if kind == "f" and all(isinstance(segment, str) for segment in merged):
        writer.add(_value_token("".join(s for s in merged if isinstance(s, str))), field)
        return
    writer.open(kind + "-string", field)
    for segment in merged:
        if isinstance(segment, str):
            writer.add(_value_token(segment))
            continue
        equals = [child for child in segment.children if child.type == "="]
        if equals:
            # `{x = }` prints its text as written, spaces included: that text is output.
            debug = writer.source[segment.start_byte + 1 : equals[0].end_byte]
            writer.add("debug " + repr(debug.decode("utf-8", "replace")))
        writer.write(segment)
    writer.add(")")


def _write_concatenated(writer: TokenWriter, node: Node, field: str | None) -> None:
    """`"a" "b"` is the literal "ab"; `"a" f"b{x}"` is the f-string `f"ab{x}"`."""
    strings = [child for child in node.children if child.type == "string"]
    values = [literal_value(child, writer.source) for child in strings]
    if all(isinstance(value, str) for value in values):
        writer.add(
            _value_token("".join(value for value in values if isinstance(value, str))), field
        )
        return
    if all(isinstance(value, bytes) for value in values):
        joined = b"".join(value for value in values if isinstance(value, bytes))
        writer.add(_value_token(joined), field)
        return
    kinds: set[str] = set()
    segments: list[_Segment] = []
    for child, value in zip(strings, values, strict=True):
        template = None if value is not None else _template(writer, child)
        if isinstance(value, str):
            segments.append(value)
        elif template is not None:
            kinds.add(template[0])
            segments.extend(template[1])
        else:
            kinds.add("")  # bytes or an unparseable piece: not one template
    if len(kinds) == 1 and "" not in kinds:
        _write_template(writer, kinds.pop(), segments, field)
        return
    writer.open("concatenated_string", field)
    for child in strings:
        _write_string(writer, child, None)
    writer.add(")")


def _write_else(writer: TokenWriter, node: Node, field: str | None) -> None:
    """`else:` holding only an `if` is an `elif` (the same syntax tree to Python)."""
    body = node.child_by_field_name("body")
    statements = [c for c in body.named_children if c.type != "comment"] if body else []
    if len(statements) != 1 or statements[0].type != "if_statement":
        writer.open("else_clause", field)
        for child, name in fields(node):
            writer.write(child, name)
        writer.add(")")
        return
    writer.open("elif_clause", field)
    alternatives: list[Node] = []
    for child, name in fields(statements[0]):
        if name == "alternative":
            alternatives.append(child)
        elif child.type == "if":
            writer.add("elif")
        else:
            writer.write(child, name)
    writer.add(")")
    for alternative in alternatives:
        writer.write(alternative, "alternative")


def _write_tuple_pattern(writer: TokenWriter, node: Node, field: str | None) -> None:
    """`(a) = x` is `a = x` (formatters parenthesise long targets); `(a,) = x` unpacks."""
    inner = [child for child in node.named_children if child.type != "comment"]
    if len(inner) == 1 and not any(child.type == "," for child in node.children):
        writer.write(inner[0], field)
        return
    write_children(writer, node, field, "tuple_pattern")


def _write_annotation(writer: TokenWriter, node: Node, field: str | None) -> None:
    """An annotation as Python reads it: `X[...]` parses as a generic_type bare but as a
    subscript in parentheses, and both are the same expression."""
    if node.named_child_count == 1 and node.named_children[0].type == "identifier":
        writer.add(writer.text(node), field)
        return
    # In parentheses, as a parameter's annotation is: there it may span lines
    # (`list[int]\n    | None`), which is the same expression as on one line.
    expression = _expression_dump("(\n" + writer.text(node).strip() + "\n)")
    if expression is None:
        writer.open("type", field)
        for child, name in fields(node):
            writer.write(child, name)
        writer.add(")")
        return
    writer.add("type " + expression, field)


@lru_cache(maxsize=4096)
def _expression_dump(text: str) -> str | None:
    """`ast.dump` of an expression; None if it does not parse (cached: annotations recur)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    return ast.dump(tree.body)


@lru_cache(maxsize=4096)
def _number(text: str) -> str:
    """`0XAB`, `1_000`, `1E5` are the numbers 171, 1000, 100000.0."""
    if text.isdigit():
        return text
    try:
        return repr(ast.literal_eval(text))
    except (SyntaxError, ValueError):
        return text


def docstring(statement: Node, source: bytes) -> str | None:
    """The collapsed text of `statement` if it is a function's or class's docstring."""
    children = statement.children
    if len(children) == 1 and children[0].type not in _STRINGS:
        return None  # the common case, a call or an assignment: decided without a list
    children = [child for child in children if child.type != "comment"]
    if len(children) != 1 or children[0].type not in _STRINGS:
        return None
    block = statement.parent
    if block is None or block.type != "block" or block.parent is None:
        return None
    if block.parent.type not in _DEFINITIONS:
        return None
    before = statement.prev_named_sibling
    while before is not None and before.type == "comment":
        before = before.prev_named_sibling
    if before is not None:
        return None
    value = _docstring_value(children[0], source)
    return " ".join(value.split()) if isinstance(value, str) else None


def _docstring_value(node: Node, source: bytes) -> str | bytes | None:
    if node.type == "string":
        return literal_value(node, source)
    values = [literal_value(child, source) for child in node.children if child.type == "string"]
    if all(isinstance(value, str) for value in values):
        return "".join(value for value in values if isinstance(value, str))
    return None


DIALECT = Dialect(
    skip=frozenset({"comment", "line_continuation"}),
    elide=frozenset({"parenthesized_expression"}),
    # `return a, b` and `return (a, b)` build the same tuple.
    rename={"expression_list": "tuple", "pattern_list": "tuple_pattern"},
    special={
        "string": _write_string,
        "concatenated_string": _write_concatenated,
        "else_clause": _write_else,
        "tuple_pattern": _write_tuple_pattern,
        "type": _write_annotation,
        "except_clause": catch_variables.writer_for(catch_variables.PYTHON),
    },
    leaves={"integer": _number, "float": _number},
    docstring_types=frozenset({"expression_statement"}),
    docstring=docstring,
    gaps=frozenset({"format_specifier"}),
)


class PythonSpec(LanguageSpec):
    cr_ends_lines = True  # the tokenizer reads universal newlines
    dialect = DIALECT
    wrappers = frozenset({"decorated_definition"})
    decorators = frozenset({"decorator"})
    body_fields: ClassVar[Mapping[str, str]] = {"assignment": "right"}
    name_fields: ClassVar[Mapping[str, str]] = {"assignment": "left"}
    leading_comments_are_doc = False  # Python documents with docstrings

    def variant(self, node: Node, span: Span) -> Variant:
        """An `@overload` and the implementation after its overloads are picked by their
        parameters' annotations as written, as TypeScript's are: `parse(int, str)` — `Any`
        where none is written, `*`/`**` before a packed one, without `self`/`cls`."""
        name = node.child_by_field_name("name")
        own = name.text.decode("utf-8", "replace") if name is not None and name.text else ""
        roles = _roles(span.top, own) if span.top != node else []
        role = next((r for r in roles if r in ("property", "accessor", "overload")), None)
        if node.type == "function_definition" and (
            role == "overload" or (role is None and _follows_overload(span.top, own))
        ):
            return Variant(spelling=_parameter_types(node, span.top, roles), role=role)
        return Variant(role=role)

    def replaces(self, definitions: list[tuple[Node, Span]]) -> bool:
        # `def f` again in the same block rebinds `f`: the last one is what runs and what
        # `module.f` is. In different blocks (one nested in an `if`) it depends: no.
        scopes = {
            (top.parent.start_byte, top.parent.end_byte)
            for _n, span in definitions
            if (top := span.top).parent is not None
        }
        return len(scopes) == 1 and all(span.top.parent is not None for _n, span in definitions)

    def together(self, variants: list[Variant]) -> bool:
        roles = [variant.role for variant in variants]
        if "property" in roles and all(role in ("property", "accessor") for role in roles):
            return True
        # `@overload` stubs with (at most) one implementation: one function to its callers.
        return roles.count("overload") >= max(len(roles) - 1, 1)

    def classify(self, parent: Node, child: Node, field_name: str | None) -> Part:
        if field_name == "superclasses" and child.named_child_count == 0:
            return Part.SKIP  # `class A():` is `class A:`
        return super().classify(parent, child, field_name)


def _roles(top: Node, own: str) -> list[str]:
    """The roles a decorated definition's decorators give it (`_role`), and `static`."""
    roles: list[str] = []
    for decorator in top.named_children:
        if decorator.type != "decorator" or not decorator.named_children:
            continue
        expression = decorator.named_children[0]
        role = _role(expression, own)
        if role is not None:
            roles.append(role)
        elif (expression.text or b"").rsplit(b".", 1)[-1] == b"staticmethod":
            roles.append("static")
    return roles


def _follows_overload(top: Node, own: str) -> bool:
    """Whether the definition right before this one (comments aside) is an `@overload` of
    its name: then this is the overloads' implementation."""
    before = top.prev_named_sibling
    while before is not None and before.type == "comment":
        before = before.prev_named_sibling
    if before is None or before.type != "decorated_definition":
        return False
    definition = before.child_by_field_name("definition")
    name = definition.child_by_field_name("name") if definition is not None else None
    if name is None or name.text is None or name.text.decode("utf-8", "replace") != own:
        return False
    return "overload" in _roles(before, own)


def _parameter_types(function: Node, top: Node, roles: list[str]) -> str:
    parameters = function.child_by_field_name("parameters")
    block = top.parent
    in_class = (
        block is not None and block.parent is not None and block.parent.type == ("class_definition")
    )
    types: list[str] = []
    for index, parameter in enumerate(parameters.named_children if parameters else ()):
        if parameter.type in ("keyword_separator", "positional_separator", "comment"):
            continue
        if index == 0 and in_class and "static" not in roles and parameter.type == "identifier":
            continue  # `self`, `cls`
        annotation = parameter.child_by_field_name("type")
        written = (
            " ".join((annotation.text or b"").decode("utf-8", "replace").split())
            if (annotation is not None)
            else "Any"
        )
        inner = parameter.named_children[0] if parameter.named_children else parameter
        if "list_splat" in parameter.type or inner.type == "list_splat_pattern":
            written = "*" + written
        elif "dictionary_splat" in parameter.type or inner.type == "dictionary_splat_pattern":
            written = "**" + written
        types.append(written)
    return ", ".join(types)


def _role(expression: Node, own: str) -> str | None:
    """`property`, `accessor` (`@own.setter`) or `overload` for a decorator's expression."""
    text = (expression.text or b"").decode("utf-8", "replace")
    last = text.rsplit(".", 1)[-1]
    if expression.type == "identifier" or expression.type == "attribute":
        if text == f"{own}.{last}" and last in _ACCESSORS:
            return "accessor"
        if last == "property":
            return "property"
        if last == "overload":
            return "overload"
    return None


SPEC = PythonSpec("python")
