"""A catch clause's variable, renamed consistently, is the same code (issue 23; memory:
a-renamed-catch-variable-is-not-drift).

`catch (e) { log(e) }` and `catch (err) { log(err) }` are written as one stream: the
variable and every use of it in the clause become a placeholder no source can spell. A use
is renamed only where it is sure to be a read or write of that variable (a whitelist of
parents, by language); a same-named token anywhere else in the clause — a binding, a label,
a shorthand property, a name the clause looks up by its text (`eval`, `locals()`, `{e=}`) —
leaves the clause as written. Names that are not variables (`x.e`, `f(e=1)`) stay as
written, so they still have to match.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tree_sitter import Node

from .normalise import TokenWriter, fields, write_children

PLACEHOLDER = "\x00catch"
"""No identifier, keyword or operator of any language is spelled with a NUL."""

_ANY = frozenset({"*"})


@dataclass(frozen=True)
class CatchRule:
    """Where one language's catch clause keeps its variable and what the clause may hold."""

    variable: Callable[[Node], Node | None]
    """The clause's variable, an identifier; None when it binds none or a pattern."""
    references: Mapping[str, frozenset[str]]
    """Parent type -> the fields (`*`: any, `-`: none) in which an identifier reads or
    writes the variable in scope."""
    not_variables: frozenset[tuple[str, str]]
    """(parent type, field) in which an identifier names something else (an attribute, a
    keyword argument, a method): left as written."""
    refuse: frozenset[str] = frozenset()
    """Identifiers that look a variable up by its spelling: the clause is left as written."""
    refuse_nodes: frozenset[str] = frozenset()
    outside: Callable[[Node, Node, bytes], bool] | None = None
    """Whether renaming is unsafe because of the code around the clause (Python)."""


def writer_for(rule: CatchRule) -> Callable[[TokenWriter, Node, str | None], None]:
    def write(writer: TokenWriter, node: Node, field_name: str | None) -> None:
        renamed = renamed_leaves(rule, node, writer.source)
        if not renamed:
            write_children(writer, node, field_name, node.type)
            return
        inner = writer.renaming(dict.fromkeys(renamed, PLACEHOLDER))
        write_children(inner, node, field_name, node.type)
        writer.tokens.extend(inner.tokens)
        writer.docs.extend(inner.docs)

    return write


def renamed_leaves(rule: CatchRule, clause: Node, source: bytes) -> list[int]:
    """Node ids of the variable and of its every use in the clause; [] when renaming it
    could change what the code does."""
    variable = rule.variable(clause)
    if variable is None or variable.type != "identifier":
        return []
    name = variable.text or b""
    renamed = [variable.id]
    pending = [clause]
    while pending:
        node = pending.pop()
        if node.type in rule.refuse_nodes:
            return []
        if node.child_count:
            pending.extend(node.children)
            continue
        text = node.text or b""
        if node.type == "identifier" and text.decode("utf-8", "replace") in rule.refuse:
            return []
        if text != name or node.id == variable.id or not node.is_named:
            continue
        if node.type != "identifier":
            if "shorthand" in node.type:
                return []  # `{e}` is `{e: e}`: the key is spelled by the variable
            continue  # a property, type or label name: not the variable
        parent = node.parent
        assert parent is not None
        field = _field_of(parent, node)
        if (parent.type, field) in rule.not_variables:
            continue
        allowed = rule.references.get(parent.type)
        if allowed is None or not (allowed is _ANY or field in allowed):
            return []
        if parent.type == "interpolation" and any(c.type == "=" for c in parent.children):
            return []  # `f"{e=}"` prints the variable's name
        renamed.append(node.id)
    if rule.outside is not None and rule.outside(clause, variable, source):
        return []
    return renamed


def _field_of(parent: Node, child: Node) -> str:
    for node, name in fields(parent):
        if node.id == child.id:
            return name or "-"
    return "-"


def references(**parents: str) -> dict[str, frozenset[str]]:
    """`references(call="function arguments", list="*")`: fields by parent type."""
    return {
        parent: _ANY if spec == "*" else frozenset(spec.split()) for parent, spec in parents.items()
    }


def _python_variable(clause: Node) -> Node | None:
    value = clause.child_by_field_name("value")
    if value is None or value.type != "as_pattern":
        return None
    alias = value.child_by_field_name("alias")
    if alias is None or alias.named_child_count != 1:
        return None
    return alias.named_children[0]


def _python_name_is_used_outside(clause: Node, variable: Node, source: bytes) -> bool:
    """Python deletes the variable when the clause ends and it lives in the whole function:
    renaming is safe only when the function's body spells that name nowhere else (and the
    clause is in a function: a module's or class's names are read from outside)."""
    scope = clause.parent
    while scope is not None and scope.type not in ("function_definition", "class_definition"):
        scope = scope.parent
    body = scope.child_by_field_name("body") if scope is not None else None
    if scope is None or scope.type != "function_definition" or body is None:
        return True
    name = variable.text
    pending = [body]
    while pending:
        node = pending.pop()
        if node.id == clause.id:
            continue
        if node.child_count:
            pending.extend(node.children)
        elif node.type == "identifier" and node.text == name:
            return True
    return False


PYTHON = CatchRule(
    variable=_python_variable,
    references=references(
        argument_list="*",
        call="function",
        attribute="object",
        keyword_argument="value",
        return_statement="*",
        raise_statement="*",
        expression_statement="*",
        assignment="left right",
        augmented_assignment="left right",
        binary_operator="left right",
        boolean_operator="left right",
        comparison_operator="*",
        not_operator="argument",
        unary_operator="argument",
        subscript="value subscript",
        slice="*",
        list="*",
        tuple="*",
        set="*",
        pair="key value",
        conditional_expression="*",
        **{"await": "*"},
        interpolation="expression",
        parenthesized_expression="*",
        expression_list="*",
        assert_statement="*",
        if_statement="condition",
        elif_clause="condition",
        while_statement="condition",
        list_splat="*",
        dictionary_splat="*",
        for_statement="right",
    ),
    not_variables=frozenset({("attribute", "attribute"), ("keyword_argument", "name")}),
    # Looked up by spelling: the frame's names, or an f-string's `{e=}` (refused in
    # `renamed_leaves`).
    refuse=frozenset(
        {"locals", "vars", "dir", "eval", "exec", "breakpoint", "_getframe", "f_locals"}
    ),
    # A closure may run after the clause has deleted the variable, and then says its name
    # (NameError); a class body reads names differently.
    refuse_nodes=frozenset(
        {"function_definition", "lambda", "class_definition", "generator_expression"}
    ),
    outside=_python_name_is_used_outside,
)


def _javascript_variable(clause: Node) -> Node | None:
    return clause.child_by_field_name("parameter")


JAVASCRIPT = CatchRule(
    variable=_javascript_variable,
    references=references(
        arguments="*",
        call_expression="function",
        member_expression="object",
        subscript_expression="object index",
        return_statement="*",
        throw_statement="*",
        expression_statement="*",
        binary_expression="left right",
        unary_expression="argument",
        update_expression="argument",
        assignment_expression="left right",
        augmented_assignment_expression="left right",
        ternary_expression="*",
        template_substitution="*",
        parenthesized_expression="*",
        array="*",
        spread_element="*",
        pair="value",
        variable_declarator="value",
        await_expression="*",
        as_expression="*",
        satisfies_expression="*",
        non_null_expression="*",
        sequence_expression="*",
        arrow_function="body",
    ),
    not_variables=frozenset(),
    refuse=frozenset({"eval"}),  # a direct eval reads the clause's names by spelling
    refuse_nodes=frozenset({"with_statement"}),  # an object's property may shadow the variable
)


def _java_variable(clause: Node) -> Node | None:
    parameter = next((c for c in clause.named_children if c.type == "catch_formal_parameter"), None)
    return parameter.child_by_field_name("name") if parameter is not None else None


JAVA = CatchRule(
    variable=_java_variable,
    references=references(
        argument_list="*",
        method_invocation="object",
        field_access="object",
        return_statement="*",
        throw_statement="*",
        expression_statement="*",
        binary_expression="left right",
        unary_expression="operand",
        update_expression="*",
        assignment_expression="left right",
        ternary_expression="*",
        parenthesized_expression="*",
        cast_expression="value",
        variable_declarator="value",
        instanceof_expression="left",
        array_access="array index",
        array_initializer="*",
        lambda_expression="body",
    ),
    not_variables=frozenset({("method_invocation", "name"), ("field_access", "field")}),
    # In a local or anonymous class a name may be an inherited field that hides the variable.
    refuse_nodes=frozenset({"class_body"}),
)
