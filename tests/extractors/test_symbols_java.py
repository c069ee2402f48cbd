"""Java definitions: classes, nested classes, methods, constructors, and their modifiers."""

from __future__ import annotations

from textwrap import dedent

from moor_extractors.model import AXES, Facts
from moor_extractors.symbols import parse_source

from tests.extractors.axes import assert_only_text_moves_anywhere, tabs_for_spaces

SOURCE = dedent(
    """
    package store;

    import java.util.Map;

    /** A store. */
    @Component
    public class Store<T> extends Base implements Shape {
        private final Map<String, Integer> items;

        Store() {
            super();
        }

        /** Puts one. */
        @Override
        public int put(String key, int value) {
            int total = (key.length() + 1) * 2;
            items.put(key, total);
            return total;
        }

        public int put(String key) {
            return put(key, 1);
        }

        static class Cache {
            String put(String key) {
                return key;
            }
        }

        enum Colour { RED, GREEN }

        record Pair(int a, int b) {}
    }

    interface Shape {
        int put(String key, int value);
    }
    """
)


def facts_of(source: str, qname: str, index: int = 0) -> Facts:
    parsed = parse_source("java", source.encode())
    sites = [site for site in parsed.sites() if site.qname == qname]
    return parsed.facts(sites[index])


def moved(before: str, after: str, qname: str, index: int = 0) -> set[str]:
    old, new = facts_of(before, qname, index), facts_of(after, qname, index)
    return {axis for axis in AXES if old.axes[axis] != new.axes[axis]}


def test_nested_classes_qualify_their_methods() -> None:
    sites = parse_source("java", SOURCE.encode()).sites()
    assert [(site.qname, site.kind) for site in sites] == [
        ("Store", "class"),
        ("Store.items", "field"),
        ("Store.Store", "constructor"),
        ("Store.put", "method"),
        ("Store.put", "method"),
        ("Store.Cache", "class"),
        ("Store.Cache.put", "method"),
        ("Store.Colour", "enum"),
        ("Store.Colour.RED", "constant"),
        ("Store.Colour.GREEN", "constant"),
        ("Store.Pair", "record"),
        ("Shape", "interface"),
        ("Shape.put", "method"),
    ]


def test_overloads_are_duplicates_each_with_its_line() -> None:
    sites = parse_source("java", SOURCE.encode()).sites()
    lines = [site.line for site in sites if site.qname == "Store.put"]
    source_lines = SOURCE.splitlines()
    # The first overload starts at its annotation, the second at its modifier.
    assert lines == [
        source_lines.index("    @Override") + 1,
        source_lines.index("    public int put(String key) {") + 1,
    ]


def test_same_named_methods_in_nested_and_outer_classes_resolve_independently() -> None:
    after = SOURCE.replace("            return key;", "            return key.trim();")
    assert moved(SOURCE, after, "Store.Cache.put") == {"body", "text"}
    assert moved(SOURCE, after, "Shape.put") == set()
    assert moved(SOURCE, after, "Store.put") == set()


def test_reformatting_and_comments_leave_every_default_axis_unchanged() -> None:
    cosmetic = SOURCE.replace(
        "    public int put(String key, int value) {\n",
        "    public int put(\n            String key,\n            int value) // args\n    {\n\n",
    ).replace("items.put(key, total);", "/* keep */ items.put(key,\n total);")
    assert moved(SOURCE, cosmetic, "Store.put") == {"text"}
    assert "body" in moved(SOURCE, SOURCE.replace("* 2", "* 3"), "Store.put")


def test_array_dimensions_are_not_punctuation() -> None:
    before = "class A { int[] f() { return null; } }\n"
    assert moved(before, before.replace("int[]", "int[][]"), "A.f") == {"signature", "text"}
    assert moved(before, before.replace("int[]", "int []"), "A.f") == {"text"}


def test_reindenting_the_whole_file_moves_only_the_text_of_any_definition() -> None:
    assert_only_text_moves_anywhere("java", SOURCE, tabs_for_spaces(SOURCE))


def test_a_body_token_change_moves_only_the_body() -> None:
    assert moved(SOURCE, SOURCE.replace("* 2", "* 3"), "Store.put") == {"body", "text"}
    assert moved(SOURCE, SOURCE.replace("GREEN }", "BLUE }"), "Store.Colour") == {"body", "text"}


def test_parameters_return_types_and_throws_move_the_signature() -> None:
    for old, new in [
        ("int value) {", "int value, boolean force) {"),
        ("public int put(String key, int value)", "public long put(String key, int value)"),
        ("int value) {", "int value) throws Exception {"),
    ]:
        assert moved(SOURCE, SOURCE.replace(old, new), "Store.put") == {"signature", "text"}
    assert moved(
        SOURCE, SOURCE.replace("record Pair(int a, int b)", "record Pair(int a)"), "Store.Pair"
    ) == {
        "signature",
        "text",
    }


def test_annotations_and_modifiers_move_the_decorators() -> None:
    assert moved(
        SOURCE, SOURCE.replace("    @Override\n", "    @Override @Deprecated\n"), "Store.put"
    ) == {
        "decorators",
        "text",
    }
    assert moved(
        SOURCE,
        SOURCE.replace("public int put(String key, int", "public final int put(String key, int"),
        "Store.put",
    ) == {
        "decorators",
        "text",
    }
    assert moved(
        SOURCE, SOURCE.replace("    static class Cache", "    class Cache"), "Store.Cache"
    ) == {
        "decorators",
        "text",
    }


def test_a_javadoc_edit_moves_only_doc() -> None:
    assert moved(
        SOURCE, SOURCE.replace("/** Puts one. */", "/** Puts a value. */"), "Store.put"
    ) == {"doc"}
    reflowed = SOURCE.replace("/** Puts one. */", "/**\n     * Puts\n     * one.\n     */")
    assert moved(SOURCE, reflowed, "Store.put") == set()


def test_place_ignores_line_shifts_but_moves_when_the_preceding_sibling_changes() -> None:
    assert (
        moved(
            SOURCE,
            SOURCE.replace("import java.util.Map;\n", "import java.util.Map;\n\n\n"),
            "Shape",
        )
        == set()
    )
    inserted = SOURCE.replace("    enum Colour", "    void other() {}\n\n    enum Colour")
    assert moved(SOURCE, inserted, "Store.Colour") == {"place"}


def test_a_syntax_error_is_flagged_on_the_definition_that_holds_it() -> None:
    broken = SOURCE.replace("return put(key, 1);", "return put(key, 1;")
    sites = [site for site in parse_source("java", broken.encode()).sites()]
    flagged = {site.qname: site.has_error for site in sites if site.qname != "Store.put"}
    assert flagged["Store"] is True
    assert flagged["Shape"] is False
