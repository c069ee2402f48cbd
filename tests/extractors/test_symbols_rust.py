"""Rust definitions: items, `Type.method` inside impls, attributes as decorators."""

from __future__ import annotations

from textwrap import dedent

from moor_extractors.model import AXES, Facts
from moor_extractors.symbols import parse_source

from tests.extractors.axes import assert_only_text_moves_anywhere, tabs_for_spaces

SOURCE = dedent(
    """
    use std::fmt;

    /// A store.
    #[derive(Debug)]
    pub struct Store<T> {
        items: Vec<T>,
    }

    impl<T: Clone> Store<T> {
        /// Puts one.
        #[inline]
        pub fn put(&mut self, key: &str, value: T) -> usize {
            let total = (key.len() + 1) * 2;
            self.items.push(value);
            total
        }
    }

    impl fmt::Display for Store<u8> {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "store")
        }
    }

    pub struct Cache;

    impl Cache {
        fn put(&self, key: &str) -> String {
            key.to_string()
        }
    }

    pub trait Shape {
        fn area(&self) -> f64;
        fn name(&self) -> &str { "shape" }
    }

    const LIMIT: usize = 10;

    mod inner {
        pub fn helper(a: i32, b: i32) -> i32 { a + b }
    }

    macro_rules! square { ($x:expr) => { $x * $x }; }
    """
)


def facts_of(source: str, qname: str) -> Facts:
    parsed = parse_source("rust", source.encode())
    # The first of a name: a type before its impls.
    site = next(site for site in parsed.sites() if site.qname == qname)
    return parsed.facts(site)


def moved(before: str, after: str, qname: str) -> set[str]:
    old, new = facts_of(before, qname), facts_of(after, qname)
    return {axis for axis in AXES if old.axes[axis] != new.axes[axis]}


def test_functions_in_impls_are_qualified_by_the_impl_type() -> None:
    sites = parse_source("rust", SOURCE.encode()).sites()
    assert [(site.qname, site.kind) for site in sites] == [
        ("Store", "struct"),
        ("Store.items", "field"),
        ("Store", "impl"),
        ("Store.put", "method"),
        ("Store", "impl"),
        ("Store.fmt", "method"),
        ("Cache", "struct"),
        ("Cache", "impl"),
        ("Cache.put", "method"),
        ("Shape", "trait"),
        ("Shape.area", "method"),
        ("Shape.name", "method"),
        ("LIMIT", "constant"),
        ("inner", "module"),
        ("inner.helper", "function"),
        ("square", "macro"),
    ]


def test_preceding_attributes_are_part_of_the_span_but_doc_comments_are_not() -> None:
    parsed = parse_source("rust", SOURCE.encode())
    texts: dict[str, str] = {}
    for site in parsed.sites():
        texts.setdefault(site.qname, parsed.source_text(site))
    assert texts["Store"].startswith("#[derive(Debug)]\npub struct Store<T>")
    assert texts["Store.put"].startswith("#[inline]\n    pub fn put")


def test_same_named_methods_of_two_types_resolve_independently() -> None:
    after = SOURCE.replace("key.to_string()", "key.to_owned()")
    assert moved(SOURCE, after, "Cache.put") == {"body", "text"}
    assert moved(SOURCE, after, "Store.put") == set()


def test_methods_of_one_type_in_two_impls_are_duplicates() -> None:
    source = "struct A;\nimpl A { fn f(&self) {} }\nimpl Tr for A { fn f(&self) {} }\n"
    sites = parse_source("rust", source.encode()).sites()
    assert [(site.qname, site.line) for site in sites if site.qname == "A.f"] == [
        ("A.f", 2),
        ("A.f", 3),
    ]


def test_reformatting_and_comments_leave_every_default_axis_unchanged() -> None:
    cosmetic = SOURCE.replace(
        "pub fn put(&mut self, key: &str, value: T) -> usize {\n",
        "pub fn put(\n        &mut self,\n        key: &str,\n"
        "        value: T, // the value\n    ) -> usize {\n\n",
    ).replace("self.items.push(value);", "/* keep */ self.items.push(value);")
    assert moved(SOURCE, cosmetic, "Store.put") == {"text"}
    assert "body" in moved(SOURCE, SOURCE.replace("* 2", "* 3"), "Store.put")


def test_punctuation_inside_macro_token_trees_is_content() -> None:
    before = "fn f(n: usize) -> Vec<u8> { vec![0; n] }\n"
    assert moved(before, before.replace("vec![0; n]", "vec![0, n]"), "f") == {"body", "text"}
    assert moved(before, before.replace("vec![0; n]", "vec![0;n]"), "f") == {"text"}


def test_reindenting_the_whole_file_moves_only_the_text_of_any_definition() -> None:
    assert_only_text_moves_anywhere("rust", SOURCE, tabs_for_spaces(SOURCE))


def test_a_body_token_change_moves_only_the_body() -> None:
    assert moved(SOURCE, SOURCE.replace("* 2", "* 3"), "Store.put") == {"body", "text"}
    assert moved(SOURCE, SOURCE.replace("items: Vec<T>", "items: Vec<Box<T>>"), "Store") == {
        "body",
        "text",
    }
    assert moved(SOURCE, SOURCE.replace("$x * $x", "$x + $x"), "square") == {"body", "text"}


def test_parameters_return_types_and_generics_move_the_signature() -> None:
    for old, new in [
        ("value: T) -> usize", "value: T, n: u8) -> usize"),
        ("-> usize {\n        let", "-> u64 {\n        let"),
        ("pub fn put(", "pub async fn put("),
    ]:
        assert moved(SOURCE, SOURCE.replace(old, new), "Store.put") == {"signature", "text"}


def test_attributes_and_visibility_move_the_decorators() -> None:
    assert moved(SOURCE, SOURCE.replace("#[inline]", "#[inline(always)]"), "Store.put") == {
        "decorators",
        "text",
    }
    assert moved(SOURCE, SOURCE.replace("pub fn put", "pub(crate) fn put"), "Store.put") == {
        "decorators",
        "text",
    }
    added = SOURCE.replace("    fn put(&self, key", "    #[must_use]\n    fn put(&self, key")
    assert moved(SOURCE, added, "Cache.put") == {"decorators", "text"}


def test_a_doc_comment_edit_moves_only_doc() -> None:
    assert moved(SOURCE, SOURCE.replace("/// Puts one.", "/// Puts a value."), "Store.put") == {
        "doc"
    }
    assert moved(SOURCE, SOURCE.replace("/// A store.", "/// A  store."), "Store") == set()
    assert moved(SOURCE, SOURCE.replace("/// A store.", "/// A shop."), "Store") == {"doc"}


def test_place_ignores_line_shifts_but_moves_when_the_preceding_sibling_changes() -> None:
    assert moved(SOURCE, SOURCE.replace("use std::fmt;\n", "use std::fmt;\n\n\n"), "LIMIT") == set()
    inserted = SOURCE.replace("const LIMIT", "static OTHER: u8 = 1;\n\nconst LIMIT")
    assert moved(SOURCE, inserted, "LIMIT") == {"place"}


def test_a_syntax_error_is_flagged_on_the_definition_that_holds_it() -> None:
    broken = SOURCE.replace("{ a + b }", "{ a + }")
    sites = {site.qname: site for site in parse_source("rust", broken.encode()).sites()}
    assert sites["inner.helper"].has_error is True
    assert sites["Store.put"].has_error is False
