"""Go definitions: functions, methods as `Type.Method`, types, package constants."""

from __future__ import annotations

from textwrap import dedent

from moor_extractors.model import AXES, Facts
from moor_extractors.symbols import parse_source

from tests.extractors.axes import assert_only_text_moves_anywhere, tabs_for_spaces

SOURCE = dedent(
    """
    package store

    import "fmt"

    const Limit = 10

    // Store keeps things.
    type Store struct {
        items map[string]int
    }

    // Put adds one item.
    func (s *Store) Put(key string, value int) error {
        total := (len(key) + 1) * 2
        s.items[key] = total
        return nil
    }

    func (s Store) Get(key string) int {
        inner := func() int { return s.items[key] }
        return inner()
    }

    type Cache struct{}

    func (c *Cache) Put(key string) string {
        return key
    }

    type List[T any] struct{ items []T }

    func (l *List[T]) Push(v T) { l.items = append(l.items, v) }

    type (
        Reader interface{ Read() string }
        Alias = Store
    )

    func Helper(a, b int) int { return a + b }
    """
)


def facts_of(source: str, qname: str) -> Facts:
    parsed = parse_source("go", source.encode())
    [site] = [site for site in parsed.sites() if site.qname == qname]
    return parsed.facts(site)


def moved(before: str, after: str, qname: str) -> set[str]:
    old, new = facts_of(before, qname), facts_of(after, qname)
    return {axis for axis in AXES if old.axes[axis] != new.axes[axis]}


def test_methods_are_qualified_by_receiver_type_without_pointer_or_type_arguments() -> None:
    sites = parse_source("go", SOURCE.encode()).sites()
    assert [(site.qname, site.kind) for site in sites] == [
        ("Limit", "constant"),
        ("Store", "struct"),
        ("Store.items", "field"),
        ("Store.Put", "method"),
        ("Store.Get", "method"),
        ("Cache", "struct"),
        ("Cache.Put", "method"),
        ("List", "struct"),
        ("List.items", "field"),
        ("List.Push", "method"),
        ("Reader", "interface"),
        ("Reader.Read", "method"),
        ("Alias", "type"),
        ("Helper", "function"),
    ]


def test_a_type_declaration_holding_one_type_spans_the_type_keyword() -> None:
    parsed = parse_source("go", SOURCE.encode())
    texts = {site.qname: parsed.source_text(site) for site in parsed.sites()}
    assert texts["Cache"] == "type Cache struct{}"
    assert texts["Reader"] == "Reader interface{ Read() string }"


def test_same_named_methods_on_two_types_resolve_independently() -> None:
    after = SOURCE.replace("    return key\n", "    return key + key\n")
    assert moved(SOURCE, after, "Cache.Put") == {"body", "text"}
    assert moved(SOURCE, after, "Store.Put") == set()


def test_duplicate_qualified_names_are_all_listed() -> None:
    source = "package p\n\nfunc init() {}\n\nfunc init() {}\n"
    sites = parse_source("go", source.encode()).sites()
    assert [(site.qname, site.line) for site in sites] == [("init", 3), ("init", 5)]


def test_reformatting_and_comments_leave_every_default_axis_unchanged() -> None:
    cosmetic = SOURCE.replace(
        "func (s *Store) Put(key string, value int) error {\n",
        "func (s *Store) Put(\n\tkey string,\n\tvalue int, // the value\n) error {\n\n",
    ).replace("    s.items[key] = total\n", "\t// store it\n\ts.items[key] = total;\n")
    assert moved(SOURCE, cosmetic, "Store.Put") == {"text"}
    assert "body" in moved(SOURCE, SOURCE.replace("* 2", "* 3"), "Store.Put")


def test_reindenting_the_whole_file_moves_only_the_text_of_any_definition() -> None:
    assert_only_text_moves_anywhere("go", SOURCE, tabs_for_spaces(SOURCE))


def test_a_body_token_change_moves_only_the_body() -> None:
    assert moved(SOURCE, SOURCE.replace("* 2", "* 3"), "Store.Put") == {"body", "text"}
    assert moved(SOURCE, SOURCE.replace("map[string]int", "map[string]int64"), "Store") == {
        "body",
        "text",
    }
    assert moved(SOURCE, SOURCE.replace("Limit = 10", "Limit = 11"), "Limit") == {"body", "text"}


def test_parameters_results_and_receivers_move_the_signature() -> None:
    for old, new in [
        ("value int) error", "value int, force bool) error"),
        ("value int) error", "value int) (int, error)"),
        ("func (s *Store) Put", "func (s Store) Put"),
    ]:
        assert moved(SOURCE, SOURCE.replace(old, new), "Store.Put") == {"signature", "text"}


def test_go_has_no_decorators_so_that_axis_never_moves() -> None:
    after = SOURCE.replace("func Helper(a, b int)", "func Helper(a, b, c int)")
    changed = moved(SOURCE, after, "Helper")
    assert "decorators" not in changed
    assert "signature" in changed


def test_a_doc_comment_edit_moves_only_doc() -> None:
    assert moved(
        SOURCE, SOURCE.replace("// Put adds one item.", "// Put adds an item."), "Store.Put"
    ) == {"doc"}
    reflowed = SOURCE.replace("// Put adds one item.", "// Put adds\n// one item.")
    assert moved(SOURCE, reflowed, "Store.Put") == set()


def test_place_ignores_line_shifts_but_moves_when_the_preceding_sibling_changes() -> None:
    assert moved(SOURCE, SOURCE.replace('import "fmt"\n', 'import "fmt"\n\n\n'), "Cache") == set()
    inserted = SOURCE.replace("type Cache struct{}", "type Other int\n\ntype Cache struct{}")
    assert moved(SOURCE, inserted, "Cache") == {"place"}


def test_a_syntax_error_is_flagged_on_the_definition_that_holds_it() -> None:
    broken = SOURCE.replace("return a + b", "return a +")
    sites = {site.qname: site for site in parse_source("go", broken.encode()).sites()}
    assert sites["Helper"].has_error is True
    assert sites["Store.Put"].has_error is False
