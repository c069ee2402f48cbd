"""Which grammar reads a file, and the query that lists its definitions.

Grammar modules are imported only when a language is first used: `moor` starts up for
every CLI call, and most checks touch one or two languages. A grammar that fails to
import makes its files read as having no grammar (`language_for_path` is None).
"""

from __future__ import annotations

import importlib
import importlib.util
from functools import cache, lru_cache
from pathlib import Path, PurePosixPath

from tree_sitter import Language, Parser, Query

_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".md": "markdown",
    ".markdown": "markdown",
}

# language -> (grammar module, function returning the language capsule)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "markdown": ("tree_sitter_markdown", "language"),
}

# Whose shipped queries/tags.scm are read, in order. The TypeScript tags.scm only adds
# TypeScript's own constructs: JavaScript's carries classes, functions and methods.
_TAGS: dict[str, tuple[str, ...]] = {
    "python": ("tree_sitter_python",),
    "javascript": ("tree_sitter_javascript",),
    "typescript": ("tree_sitter_javascript", "tree_sitter_typescript"),
    "tsx": ("tree_sitter_javascript", "tree_sitter_typescript"),
    "go": ("tree_sitter_go",),
    "rust": ("tree_sitter_rust",),
    "java": ("tree_sitter_java",),
    "markdown": (),
}

# What the shipped queries lack and the reference grammar (docs/memories.md) needs.
_JS_EXTRA = """
; tags.scm excludes constructors (#not-eq?) and private #names; this one pattern has both.
(method_definition name: (_) @name) @definition.method
"""
_TS_EXTRA = """
; TypeScript declarations that tags.scm does not list but a reference can name.
(type_alias_declaration name: (_) @name) @definition.type
(enum_declaration name: (_) @name) @definition.enum
(internal_module name: (identifier) @name) @definition.module
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)])
  @definition.method
; Members a reader sees in a type: the properties and index signatures of an interface and
; of object types; `TypeScriptSpec.accept` keeps those of a type's own shape (an object
; type inside `Promise<{…}>` or a parameter's type is no one's member), and enum members.
(interface_body (property_signature name: (_) @name) @definition.property)
(object_type (property_signature name: (_) @name) @definition.property)
(interface_body (index_signature index_type: (_) @name) @definition.property)
(object_type (index_signature index_type: (_) @name) @definition.property)
(enum_body name: (_) @name @definition.constant)
(enum_assignment name: (_) @name) @definition.constant
"""
# Values a top-level binding or a class field may hold that make it a definition of its
# own (a function value is one already: tags.scm names it as a function).
_JS_VALUES = """(object) (array) (string) (template_string) (number) (true) (false) (null)
  (undefined) (regex) (identifier) (member_expression) (subscript_expression)
  (call_expression) (new_expression) (binary_expression) (unary_expression)
  (ternary_expression) (await_expression)"""
_TS_VALUES = _JS_VALUES + " (as_expression) (satisfies_expression) (non_null_expression)"


def _js_values(values: str, field: str, name: str) -> str:
    binding = "(variable_declarator name: (identifier) @name value: [{v}])"
    constant = f'(lexical_declaration "const" {binding} @definition.constant)'
    variable = f'(lexical_declaration "let" {binding} @definition.variable)'
    var = f"(variable_declaration {binding} @definition.variable)"
    patterns = [
        *(f"(program {d})" for d in (constant, variable, var)),
        *(f"(program (export_statement declaration: {d}))" for d in (constant, variable, var)),
        f"({field} {name}: (_) @name value: [{{v}}]) @definition.field",
        f"({field} {name}: (_) @name !value) @definition.field",
    ]
    return "\n".join(patterns).replace("{v}", values) + "\n"


_SUPPLEMENTS: dict[str, str] = {
    "python": """
; Class attributes (`timeout = 30`, `name: str = ""`) are values a reader sees in the class,
; as module constants are in the module.
(class_definition body: (block (expression_statement
  (assignment left: (identifier) @name) @definition.constant)))
""",
    "javascript": _JS_EXTRA
    + _js_values(_JS_VALUES, "field_definition", "property")
    + """
; Class fields bound to functions are methods in all but syntax.
(field_definition property: (_) @name value: [(arrow_function) (function_expression)])
  @definition.method
""",
    "typescript": _JS_EXTRA + _TS_EXTRA + _js_values(_TS_VALUES, "public_field_definition", "name"),
    "tsx": _JS_EXTRA + _TS_EXTRA + _js_values(_TS_VALUES, "public_field_definition", "name"),
    "go": """
; tags.scm lists type_spec only; `type A = B` is a type_alias. Package-level constants and
; variables are matched there without a definition capture.
(type_alias name: (type_identifier) @name) @definition.type
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
; A named type's struct fields (an embedded one is named by its type) and interface methods;
; fields of a struct type nested in a field. Anonymous structs in code (test tables) are not.
(type_spec type: (struct_type (field_declaration_list
  (field_declaration name: (field_identifier) @name) @definition.field)))
(type_spec type: (struct_type (field_declaration_list
  (field_declaration !name type: (_) @name) @definition.field)))
(field_declaration type: (struct_type (field_declaration_list
  (field_declaration name: (field_identifier) @name) @definition.field)))
(type_spec type: (interface_type (method_elem name: (field_identifier) @name) @definition.method))
""",
    "rust": """
; Trait methods without a default body, and constants/statics, are absent from tags.scm.
(function_signature_item name: (identifier) @name) @definition.method
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
; Enum variants and named fields (of structs, unions and struct-like variants).
(enum_variant name: (identifier) @name) @definition.variant
(struct_item body: (field_declaration_list
  (field_declaration name: (field_identifier) @name) @definition.field))
(union_item body: (field_declaration_list
  (field_declaration name: (field_identifier) @name) @definition.field))
(enum_variant body: (field_declaration_list
  (field_declaration name: (field_identifier) @name) @definition.field))
; A tuple struct's or tuple-like variant's fields, named by position as a reader writes
; them (`Point.0`, `Shape.Circle.0`).
(struct_item body: (ordered_field_declaration_list type: (_) @name @definition.field))
(enum_variant body: (ordered_field_declaration_list type: (_) @name @definition.field))
; An impl block, named by its type: a reader names it where the type is defined elsewhere.
(impl_item type: (_) @name) @definition.impl
""",
    "java": """
; tags.scm lists classes, interfaces and methods only.
(constructor_declaration name: (identifier) @name) @definition.constructor
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.record
(annotation_type_declaration name: (identifier) @name) @definition.annotation
; Fields and enum constants are definitions; methods in an enum constant's body or in an
; anonymous class that initialises a field are named through it (`Mode.FAST.apply`).
(field_declaration declarator: (variable_declarator name: (identifier) @name) @definition.field)
(constant_declaration declarator: (variable_declarator name: (identifier) @name)
  @definition.constant)
(enum_constant name: (identifier) @name) @definition.constant
""",
    # tree-sitter-markdown ships no tags.scm: a definition is a heading section.
    "markdown": "(section) @definition.section",
}


@lru_cache(maxsize=65536)
def language_for_path(path: str) -> str | None:
    """The language moor parses a workspace path as, by extension; None if it has none, or
    if that language's grammar is installed but broken (then its symbols are `no_grammar`)."""
    language = _EXTENSIONS.get(PurePosixPath(path).suffix.lower())
    return language if language is not None and grammar_loads(language) else None


@cache
def grammar_loads(name: str) -> bool:
    """Whether the grammar of `name` can be imported and loaded, tried once per process.

    A grammar wheel that fails to import (a broken install, an ABI mismatch) raises
    anything at all from its module; it must cost only that language, never the check."""
    try:
        grammar(name)
    except Exception:
        return False
    return True


@cache
def grammar(name: str) -> Language:
    """The tree-sitter language; KeyError for a language moor has no grammar for."""
    module_name, function = _GRAMMARS[name]
    return Language(getattr(importlib.import_module(module_name), function)())


def new_parser(name: str) -> Parser:
    # A Parser is cheap and not safe to share between threads (the LSP may use several).
    return Parser(grammar(name))


@cache
def definition_query(name: str) -> Query:
    """The shipped tags.scm (plus our supplement), reduced to its definition patterns.

    Reference patterns (calls, type uses) are left out before compiling: compiling a pattern
    costs 5-20 ms against the TypeScript grammar, and they would match far more nodes.
    py-tree-sitter 0.26 evaluates #eq?/#match? itself and treats directives it does not know
    (#strip!, #select-adjacent!, #set-adjacent!) as satisfied when no predicate callback is
    given; they only shape @doc captures, which moor does not read (it finds doc comments
    itself), so ignoring them is what we want.
    """
    sources = [*map(_tags_source, _TAGS[name]), _SUPPLEMENTS[name]]
    patterns = [p for source in sources for p in split_patterns(source) if "@definition." in p]
    return Query(grammar(name), "\n".join(patterns))


def split_patterns(source: str) -> list[str]:
    """The top-level patterns of a query, each with its trailing captures and quantifiers."""
    patterns: list[str] = []
    start, depth, index = -1, 0, 0
    while index < len(source):
        char = source[index]
        if char == ";":  # a comment, to the end of the line
            index = source.find("\n", index)
            index = len(source) if index < 0 else index
            continue
        if char == '"':
            index = _string_end(source, index)
            continue
        if char in "([":
            if depth == 0:
                if start >= 0:
                    patterns.append(source[start:index])
                start = index
            depth += 1
        elif char in ")]":
            depth -= 1
        index += 1
    if start >= 0:
        patterns.append(source[start:])
    return patterns


def _string_end(source: str, index: int) -> int:
    index += 1
    while index < len(source) and source[index] != '"':
        index += 2 if source[index] == "\\" else 1
    return index + 1


def _tags_source(module_name: str) -> str:
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        raise KeyError(module_name)
    return (Path(spec.origin).parent / "queries" / "tags.scm").read_text(encoding="utf-8")
