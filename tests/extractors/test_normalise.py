"""Shared machinery: languages by extension, the definition query, whole-file facts, limits."""

from __future__ import annotations

import pytest
from moor_extractors.digest import digest_tokens
from moor_extractors.languages import definition_query, language_for_path, split_patterns
from moor_extractors.model import AXES
from moor_extractors.normalise import comment_words
from moor_extractors.symbols import NORMALISER_VERSION, file_facts, parse_source


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("stubs/x.pyi", "python"),
        ("web/app.js", "javascript"),
        ("web/app.MJS", "javascript"),
        ("web/app.cjs", "javascript"),
        ("web/App.jsx", "javascript"),
        ("web/app.ts", "typescript"),
        ("web/app.mts", "typescript"),
        ("web/app.cts", "typescript"),
        ("web/App.tsx", "tsx"),
        ("main.go", "go"),
        ("src/lib.rs", "rust"),
        ("A.java", "java"),
        ("docs/x.md", "markdown"),
        ("docs/x.markdown", "markdown"),
        ("Makefile", None),
        ("notes.txt", None),
        ("archive.tar.gz", None),
    ],
)
def test_language_for_path_goes_by_extension(path: str, language: str | None) -> None:
    assert language_for_path(path) == language


def test_an_unknown_language_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        parse_source("cobol", b"IDENTIFICATION DIVISION.")
    with pytest.raises(KeyError):
        file_facts("cobol", b"")


def test_the_normaliser_version_is_a_positive_integer() -> None:
    assert isinstance(NORMALISER_VERSION, int) and NORMALISER_VERSION >= 1


def test_query_patterns_split_at_top_level_keeping_captures_and_ignoring_comments() -> None:
    source = (
        '; a comment with (parens\n(a (b) @x) @definition.a\n[(c) (d ")")] @y\n(e) @definition.e'
    )
    assert [pattern.strip() for pattern in split_patterns(source)] == [
        "(a (b) @x) @definition.a",
        '[(c) (d ")")] @y',
        "(e) @definition.e",
    ]


@pytest.mark.parametrize(
    "language", ["python", "javascript", "typescript", "tsx", "go", "rust", "java", "markdown"]
)
def test_every_definition_query_compiles_and_keeps_only_definitions(language: str) -> None:
    query = definition_query(language)
    names = {query.capture_name(index) for index in range(query.capture_count)}
    assert any(name.startswith("definition.") for name in names)
    assert not any(name.startswith("reference.") for name in names)


def test_comment_words_strip_markers_and_collapse_spacing() -> None:
    assert comment_words("/**\n * Puts one\n *   thing.\n */") == ["Puts", "one", "thing."]
    assert comment_words("/// Doc  text") == ["Doc", "text"]
    assert comment_words("//! Inner") == ["Inner"]
    assert comment_words("// a * b") == ["a", "*", "b"]


def test_file_facts_compare_code_files_by_their_tokens() -> None:
    before = file_facts("python", b"x = 1  # one\n\n\ndef f():\n    return x\n")
    cosmetic = file_facts("python", b"x = (1)\n\ndef f():\n  return x  # same\n")
    changed = file_facts("python", b"x = 2\n\ndef f():\n    return x\n")
    assert before.kind == "file" and set(before.axes) == set(AXES)
    assert before.axes["body"] == cosmetic.axes["body"]
    assert before.axes["text"] != cosmetic.axes["text"]
    assert before.axes["body"] != changed.axes["body"]


def test_file_facts_count_a_docstring_edit_as_content() -> None:
    before = file_facts("python", b'def f():\n    """One."""\n')
    after = file_facts("python", b'def f():\n    """Two."""\n')
    assert before.axes["body"] != after.axes["body"]
    assert before.axes["body"] == file_facts("python", b"def f():\n    '''One.'''\n").axes["body"]


def test_file_facts_of_markdown_compare_words() -> None:
    before = file_facts("markdown", b"# T\n\nsome words\nhere\n")
    assert before.axes["body"] == file_facts("markdown", b"# T\nsome words here\n\n").axes["body"]
    assert before.axes["body"] != file_facts("markdown", b"# T\nsome other words\n").axes["body"]


def test_file_facts_of_an_unknown_language_keep_indentation_but_not_trailing_space() -> None:
    before = file_facts(None, b"a:\n  b: 1\n")
    assert before.axes["body"] == file_facts(None, b"a:   \r\n  b: 1\n\n\n").axes["body"]
    assert before.axes["body"] != file_facts(None, b"a:\nb: 1\n").axes["body"]


def test_the_axes_a_whole_file_lacks_hold_the_empty_stream_digest() -> None:
    facts = file_facts("go", b"package p\n")
    empty = digest_tokens(())
    assert [axis for axis in AXES if facts.axes[axis] == empty] == [
        "signature",
        "decorators",
        "doc",
        "place",
    ]


def test_deeply_nested_expressions_do_not_exhaust_the_stack() -> None:
    source = "def f():\n    return " + " + ".join(["a"] * 5000) + "\n"
    parsed = parse_source("python", source.encode())
    [site] = parsed.sites()
    assert set(parsed.facts(site).axes) == set(AXES)


def test_a_file_with_errors_still_lists_its_definitions() -> None:
    parsed = parse_source("python", b"def ok():\n    pass\n\ndef broken(:\n    pass\n")
    sites = {site.qname: site for site in parsed.sites()}
    assert sites["ok"].has_error is False
    for site in parsed.sites():
        assert set(parsed.facts(site).axes) == set(AXES)


def test_sites_and_source_text_survive_invalid_utf8() -> None:
    parsed = parse_source("python", b"def f():\n    return '\xff'\n")
    [site] = parsed.sites()
    assert parsed.source_text(site).startswith("def f():")
    assert set(parsed.facts(site).axes) == set(AXES)
