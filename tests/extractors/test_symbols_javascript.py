"""JavaScript definitions: classes, methods, and functions bound to names."""

from __future__ import annotations

from textwrap import dedent

from moor_extractors.model import AXES, Facts
from moor_extractors.symbols import parse_source

SOURCE = dedent(
    """
    import x from "x";

    /** A store. */
    export class Store extends Base {
      constructor(limit) {
        super();
        this.limit = limit;
      }

      put(key, value = 1) {
        const total = (key + "x") * 2;
        return total;
      }

      static get(key) {
        function inner() { return key; }
        return inner();
      }

      #hidden() {}
    }

    class Cache {
      put(key) {
        return key;
      }
    }

    // Adds.
    export const add = (a, b) => a + b;
    let scale = function (a) { return a * 2; };
    function* gen() { yield 1; }
    """
)


def facts_of(source: str, qname: str, language: str = "javascript") -> Facts:
    parsed = parse_source(language, source.encode())
    [site] = [site for site in parsed.sites() if site.qname == qname]
    return parsed.facts(site)


def moved(before: str, after: str, qname: str) -> set[str]:
    old, new = facts_of(before, qname), facts_of(after, qname)
    return {axis for axis in AXES if old.axes[axis] != new.axes[axis]}


def test_qualified_names_cover_classes_methods_constructors_and_bound_functions() -> None:
    sites = parse_source("javascript", SOURCE.encode()).sites()
    assert [(site.qname, site.kind) for site in sites] == [
        ("Store", "class"),
        ("Store.constructor", "method"),
        ("Store.put", "method"),
        ("Store.get", "method"),
        ("Store.get.inner", "function"),
        ("Store.#hidden", "method"),
        ("Cache", "class"),
        ("Cache.put", "method"),
        ("add", "function"),
        ("scale", "function"),
        ("gen", "function"),
    ]


def test_an_export_and_a_const_binding_are_part_of_the_span() -> None:
    parsed = parse_source("javascript", SOURCE.encode())
    texts = {site.qname: parsed.source_text(site) for site in parsed.sites()}
    assert texts["Store"].startswith("export class Store")
    assert texts["add"] == "export const add = (a, b) => a + b;"


def test_same_named_methods_in_two_classes_resolve_independently() -> None:
    after = SOURCE.replace("    return key;\n  }\n}", "    return null;\n  }\n}")
    assert moved(SOURCE, after, "Cache.put") == {"body", "text"}
    assert moved(SOURCE, after, "Store.put") == set()


def test_duplicate_qualified_names_are_all_listed() -> None:
    source = "class A {\n  get x() { return 1; }\n  set x(v) {}\n}\n"
    sites = [site for site in parse_source("javascript", source.encode()).sites()]
    assert [(site.qname, site.line) for site in sites if site.qname == "A.x"] == [
        ("A.x", 2),
        ("A.x", 3),
    ]


def test_reindenting_comments_semicolons_quotes_and_trailing_commas_leave_default_axes() -> None:
    cosmetic = SOURCE.replace(
        '  put(key, value = 1) {\n    const total = (key + "x") * 2;\n',
        "    put(\n      key,\n      value = 1,  // default\n    ) {\n\n"
        "      // compute\n      const total = (key + 'x') * 2\n",
    )
    assert moved(SOURCE, cosmetic, "Store.put") == {"text"}
    assert "body" in moved(SOURCE, SOURCE.replace("* 2", "* 3"), "Store.put")


def test_redundant_parentheses_are_cosmetic_but_grouping_is_not() -> None:
    before = "function f(a, b, c) { return (a + b) * c; }\n"
    assert moved(before, before.replace("(a + b) * c", "((a + b)) * (c)"), "f") == {"text"}
    assert "body" in moved(before, before.replace("(a + b) * c", "a + b * c"), "f")


def test_reindenting_the_whole_file_moves_only_the_text_of_any_definition() -> None:
    reindented = "\n".join(
        "\t" * ((len(line) - len(line.lstrip(" "))) // 2) + line.lstrip(" ")
        for line in SOURCE.split("\n")
    )
    before = parse_source("javascript", SOURCE.encode())
    after = parse_source("javascript", reindented.encode())
    texts_moved = 0
    for old, new in zip(before.sites(), after.sites(), strict=True):
        old_axes, new_axes = before.facts(old).axes, after.facts(new).axes
        assert old.qname == new.qname
        assert {axis for axis in AXES if old_axes[axis] != new_axes[axis]} <= {"text"}
        texts_moved += old_axes["text"] != new_axes["text"]
    assert texts_moved > 0  # positive control: the edit was seen


def test_a_body_token_change_moves_only_the_body() -> None:
    after = SOURCE.replace("* 2", "* 3")
    assert moved(SOURCE, after, "Store.put") == {"body", "text"}
    assert moved(SOURCE, after, "Store") == {"body", "text"}
    assert moved(SOURCE, SOURCE.replace("a + b;", "a - b;"), "add") == {"body", "text"}


def test_an_added_parameter_moves_the_signature() -> None:
    assert moved(
        SOURCE, SOURCE.replace("put(key, value = 1)", "put(key, value = 1, c)"), "Store.put"
    ) == {
        "signature",
        "text",
    }
    assert moved(SOURCE, SOURCE.replace("(a, b) =>", "(a, b, c) =>"), "add") == {
        "signature",
        "text",
    }
    assert "signature" in moved(
        SOURCE, SOURCE.replace("const add = (a", "const add = async (a"), "add"
    )


def test_static_export_and_the_binding_keyword_are_decorators() -> None:
    assert moved(SOURCE, SOURCE.replace("  static get", "  get"), "Store.get") == {
        "decorators",
        "text",
    }
    assert moved(SOURCE, SOURCE.replace("export const add", "const add"), "add") == {
        "decorators",
        "text",
    }
    assert moved(SOURCE, SOURCE.replace("let scale", "const scale"), "scale") == {
        "decorators",
        "text",
    }


def test_a_doc_comment_edit_moves_only_doc() -> None:
    after = SOURCE.replace("/** A store. */", "/**\n * A shop.\n */")
    assert moved(SOURCE, after, "Store") == {"doc"}
    assert moved(SOURCE, SOURCE.replace("// Adds.", "// Sums."), "add") == {"doc"}
    rewrapped = SOURCE.replace("/** A store. */", "/**\n * A\n * store.\n */")
    assert moved(SOURCE, rewrapped, "Store") == set()


def test_a_comment_separated_by_a_blank_line_is_not_the_doc() -> None:
    before = "// License.\n\nfunction f() {}\n"
    assert moved(before, before.replace("License", "Licence"), "f") == set()
    assert moved("// Does.\nfunction f() {}\n", "// Did.\nfunction f() {}\n", "f") == {"doc"}


def test_place_ignores_line_shifts_but_moves_when_the_preceding_sibling_changes() -> None:
    shifted = SOURCE.replace('import x from "x";\n', 'import x from "x";\nimport y from "y";\n\n')
    assert moved(SOURCE, shifted, "Cache") == set()
    inserted = SOURCE.replace("class Cache {", "class Other {}\n\nclass Cache {")
    assert moved(SOURCE, inserted, "Cache") == {"place"}


def test_a_syntax_error_is_flagged_on_the_definition_that_holds_it() -> None:
    broken = SOURCE.replace("return a * 2;", "return a * ;")
    sites = {site.qname: site for site in parse_source("javascript", broken.encode()).sites()}
    assert sites["scale"].has_error is True
    assert sites["Store"].has_error is False
