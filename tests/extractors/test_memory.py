"""Memory files (docs/memories.md): frontmatter, `about:` entries, positions, and never raising."""

from __future__ import annotations

import random
import time

import pytest
from moor_extractors.memory import (
    AboutEntry,
    Memory,
    ParsedMemory,
    Problem,
    effective_watch,
    hash_memory_text,
    normalise_memory_text,
    parse_memory,
)
from moor_extractors.model import AXES, DEFAULT_WATCH

DESIGN_EXAMPLE = """\
---
about:
  - store/moor_store/journal.py#Journal.append
  - ref: extractors/moor_extractors/python.py#qualified_name
    watch: [signature]
  - docs/architecture.md#Storage > Journal
watch: [signature, body]    # default for this memory's references
confidence: verified        # verified | inferred | unverified  (weighs in recall)
supersedes: memories/old-journal-layout.md
links:
  contradicts: [memories/x.md]
  see-also: [memories/y.md]
---
# The journal is append-only

Body in Markdown …

## When this changes, ask
- Does a reader still get entries in sequence order?
"""


def parse(text: str, path: str = "memories/note.md") -> ParsedMemory:
    return parse_memory(path, text.encode("utf-8"))


def valid(text: str, path: str = "memories/note.md") -> Memory:
    parsed = parse(text, path)
    assert parsed.problems == (), parsed.problems
    assert parsed.memory is not None
    return parsed.memory


def memory_with(front: str, body: str = "# Title\n") -> str:
    return f"---\n{front}---\n{body}"


def problems(text: str | bytes) -> list[Problem]:
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    parsed = parse_memory("memories/note.md", data)
    assert parsed.memory is None
    assert parsed.problems
    return list(parsed.problems)


def only(text: str | bytes) -> Problem:
    found = problems(text)
    assert len(found) == 1, found
    return found[0]


def codes(text: str | bytes) -> list[str]:
    return [p.code for p in problems(text)]


# --- a whole memory ---------------------------------------------------------------------------


def test_the_design_example_parses_into_every_field() -> None:
    memory = valid(DESIGN_EXAMPLE, "memories/journal.md")
    assert memory.path == "memories/journal.md"
    assert memory.title == "The journal is append-only"
    assert [entry.raw for entry in memory.about] == [
        "store/moor_store/journal.py#Journal.append",
        "extractors/moor_extractors/python.py#qualified_name",
        "docs/architecture.md#Storage > Journal",
    ]
    assert [entry.watch for entry in memory.about] == [None, ("signature",), None]
    assert memory.watch == ("signature", "body")
    assert memory.confidence == "verified"
    assert memory.supersedes == ("memories/old-journal-layout.md",)
    assert dict(memory.links) == {
        "contradicts": ("memories/x.md",),
        "see-also": ("memories/y.md",),
    }
    assert memory.questions == ("Does a reader still get entries in sequence order?",)
    assert memory.body.startswith("# The journal is append-only\n")
    assert memory.about_line == 2
    assert len(memory.content_hash) == 32


def test_about_entries_carry_the_position_of_the_reference_string_itself() -> None:
    memory = valid(DESIGN_EXAMPLE)
    first, second, third = memory.about
    assert (first.line, first.column) == (3, 5)
    assert (first.end_line, first.end_column) == (3, 5 + len(first.raw))
    assert (second.line, second.column) == (4, 10)  # after '  - ref: '
    assert (third.line, third.column) == (6, 5)


def test_a_quoted_reference_is_located_at_its_opening_quote() -> None:
    memory = valid(memory_with("about: [\"a.py#f\", 'b.py']\n"))
    assert [(e.raw, e.line, e.column, e.end_column) for e in memory.about] == [
        ("a.py#f", 2, 9, 17),
        ("b.py", 2, 19, 25),
    ]


def test_positions_are_unchanged_by_a_utf8_bom() -> None:
    plain = valid(DESIGN_EXAMPLE).about
    with_bom = parse_memory("m.md", b"\xef\xbb\xbf" + DESIGN_EXAMPLE.encode()).memory
    assert with_bom is not None
    assert [(e.line, e.column) for e in with_bom.about] == [(e.line, e.column) for e in plain]
    assert with_bom.title == "The journal is append-only"


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_positions_are_unchanged_by_crlf_and_lone_cr_line_endings(newline: str) -> None:
    plain = valid(DESIGN_EXAMPLE)
    other = valid(DESIGN_EXAMPLE.replace("\n", newline))
    assert [(e.raw, e.line, e.column) for e in other.about] == [
        (e.raw, e.line, e.column) for e in plain.about
    ]
    assert other.questions == plain.questions
    assert other.body == plain.body  # the body is given with '\n' line endings
    assert other.about_line == plain.about_line


def test_columns_count_code_points_not_bytes() -> None:
    memory = valid(memory_with("about: [é/ü.py, b.py]\n"))
    assert [(e.raw, e.column) for e in memory.about] == [("é/ü.py", 9), ("b.py", 17)]


def test_a_unicode_line_separator_does_not_shift_the_lines_editors_see() -> None:
    # YAML 1.1 treats U+2028 as a line break; editors and LSP do not. Lines are the editor's.
    memory = valid(memory_with('title: "a\u2028b"\nabout: [x.py]\n'))
    assert (memory.about[0].line, memory.about[0].column) == (3, 9)


# --- about entries and watch ------------------------------------------------------------------


def test_an_entry_may_be_a_mapping_with_ref_and_watch() -> None:
    memory = valid(memory_with("about:\n  - ref: a.py#f\n    watch: [doc, signature]\n"))
    assert memory.about == (AboutEntry("a.py#f", ("signature", "doc"), 3, 10, 3, 16),)


def test_a_single_reference_string_is_accepted_for_about() -> None:
    memory = valid(memory_with("about: src/a.py#f\n"))
    assert [e.raw for e in memory.about] == ["src/a.py#f"]


def test_watch_falls_back_from_entry_to_memory_to_the_default() -> None:
    memory = valid(
        memory_with("about:\n  - a.py\n  - ref: b.py\n    watch: [doc]\nwatch: [body]\n")
    )
    plain, own = memory.about
    assert effective_watch(memory, own) == ("doc",)
    assert effective_watch(memory, plain) == ("body",)
    bare = valid(memory_with("about: [a.py]\n"))
    assert bare.watch is None
    assert effective_watch(bare, bare.about[0]) == DEFAULT_WATCH


def test_watch_is_returned_in_axis_order_without_repeats() -> None:
    memory = valid(memory_with("about: [a.py]\nwatch: [text, body, kind, body]\n"))
    assert memory.watch == ("kind", "body", "text")
    assert set(memory.watch) <= set(AXES)


def test_watch_accepts_a_single_axis_and_an_empty_list() -> None:
    assert valid(memory_with("about: [a.py]\nwatch: doc\n")).watch == ("doc",)
    memory = valid(memory_with("about:\n  - ref: a.py\n    watch: []\n"))
    assert memory.about[0].watch == ()
    assert effective_watch(memory, memory.about[0]) == ()  # empty is not "inherit"


def test_a_memory_without_about_is_valid_and_ungrounded() -> None:
    for front in ["title: x\n", "about:\n", "about: []\n", "about: ~\n"]:
        memory = valid(memory_with(front))
        assert memory.about == ()
    assert valid(memory_with("about:\n")).about_line == 2
    assert valid(memory_with("title: x\n")).about_line == 0


def test_unknown_top_level_keys_are_allowed() -> None:
    memory = valid(memory_with("about: [a.py]\nowner: ana\ntags: [storage, {deep: [1, 2]}]\n"))
    assert memory.about[0].raw == "a.py"


def test_confidence_defaults_to_unverified() -> None:
    assert valid(memory_with("about: [a.py]\n")).confidence == "unverified"
    assert valid(memory_with("confidence: inferred\n")).confidence == "inferred"


def test_supersedes_accepts_a_string_or_a_list_and_normalises_paths() -> None:
    assert valid(memory_with("supersedes: ./memories/a.md\n")).supersedes == ("memories/a.md",)
    memory = valid(memory_with("supersedes: [memories/a.md, memories//b.md]\n"))
    assert memory.supersedes == ("memories/a.md", "memories/b.md")


def test_source_names_a_note_as_kind_and_name_or_is_a_positioned_problem() -> None:
    assert valid(memory_with("source: serena:retries\n")).source == "serena:retries"
    assert valid(memory_with("source: claude:MEMORY.v2\n")).source == "claude:MEMORY.v2"
    assert valid(memory_with("about: [a.py]\n")).source is None
    for bad in ("retries", "'serena:'", "serena:../x", "serena:a/b", "serena:.hidden", "[a, b]"):
        problem = only(memory_with(f"source: {bad}\n"))
        assert problem.code == "source_invalid", bad
        assert "KIND:NAME" in problem.message and (problem.line, problem.column) == (2, 9)


def test_links_map_relations_to_tuples_of_strings() -> None:
    memory = valid(memory_with("links:\n  see-also: memories/a.md\n  contradicts: []\n"))
    assert dict(memory.links) == {"see-also": ("memories/a.md",), "contradicts": ()}
    with pytest.raises(TypeError):
        memory.links["x"] = ()  # type: ignore[index]  # read-only


# --- title and questions ----------------------------------------------------------------------


def test_the_title_is_the_first_level_one_heading_of_the_body() -> None:
    body = "Intro\n\n```sh\n# not a title\n```\n\n## Sub\n\n# Real title #\n\n# Second\n"
    assert valid(memory_with("title: ignored\n", body)).title == "Real title"


def test_the_title_falls_back_to_frontmatter_then_to_the_file_stem() -> None:
    assert valid(memory_with("title: From  frontmatter\n", "no heading\n")).title == (
        "From frontmatter"
    )
    assert valid(memory_with("about: []\n", "## only h2\n"), "mem/x-y.md").title == "x-y"


def test_questions_are_the_bullets_under_the_when_this_changes_ask_heading() -> None:
    body = """\
# T

- not a question

### WHEN THIS CHANGES, ASK?
- First question?
* [ ] Second question that wraps
  onto a second line?
1. Third?

```
- not a question in code
```

#### A sub-heading still inside
+ Fourth?

## Next section
- not a question
"""
    memory = valid(memory_with("about: []\n", body))
    assert memory.questions == (
        "First question?",
        "Second question that wraps onto a second line?",
        "Third?",
        "Fourth?",
    )


@pytest.mark.parametrize(
    "heading",
    ["## When this changes, ask", "# when this changes, ask:", "## When  this changes, ask ?"],
)
def test_the_questions_heading_tolerates_level_case_and_trailing_punctuation(heading: str) -> None:
    memory = valid(memory_with("about: []\n", f"{heading}\n- Q?\n"))
    assert memory.questions == ("Q?",)
    other = valid(memory_with("about: []\n", "## When this changes\n- Q?\n"))
    assert other.questions == ()  # positive control: another heading collects nothing


# --- content hash -----------------------------------------------------------------------------


def test_the_content_hash_ignores_line_endings_bom_and_trailing_whitespace() -> None:
    base = valid(DESIGN_EXAMPLE).content_hash
    variants = [
        DESIGN_EXAMPLE.replace("\n", "\r\n"),
        DESIGN_EXAMPLE.replace("\n", "\r"),
        "\ufeff" + DESIGN_EXAMPLE,
        DESIGN_EXAMPLE.replace("\n", "  \t\n"),
        DESIGN_EXAMPLE + "\n\n   \n",
    ]
    for variant in variants:
        assert valid(variant).content_hash == base
    # Positive control: a real edit of one word changes it.
    assert valid(DESIGN_EXAMPLE.replace("append-only", "append only")).content_hash != base
    assert valid(DESIGN_EXAMPLE.replace("Body in", "Body  in")).content_hash != base


def test_normalised_text_is_what_the_hash_is_taken_over() -> None:
    assert normalise_memory_text("\ufeffa  \r\nb\t\r\rc\n\n") == "a\nb\n\nc"
    assert hash_memory_text("a\r\n") == hash_memory_text("a")
    assert hash_memory_text("a") != hash_memory_text("b")


# --- problems: the file as a whole ------------------------------------------------------------


def test_invalid_utf8_is_reported_at_the_line_and_column_of_the_bad_byte() -> None:
    good = DESIGN_EXAMPLE.encode()
    assert parse_memory("m.md", good).memory is not None  # positive control
    bad = good.replace(b"Body in", b"Body \xff in")
    problem = only(bad)
    assert problem.code == "invalid_utf8"
    assert (problem.line, problem.column) == (16, 6)
    with_bom_and_crlf = b"\xef\xbb\xbf" + bad.replace(b"\n", b"\r\n")
    problem = only(with_bom_and_crlf)
    assert (problem.code, problem.line, problem.column) == ("invalid_utf8", 16, 6)


def test_a_truncated_multibyte_character_is_invalid_utf8() -> None:
    data = memory_with("title: é\n").encode()
    cut = data[: data.index("é".encode()) + 1]
    problem = only(cut)
    assert (problem.code, problem.line, problem.column) == ("invalid_utf8", 2, 8)


def test_a_file_without_frontmatter_is_reported_at_line_one() -> None:
    for text in ["# Just markdown\n", "", "\n---\nabout: []\n---\n", "--- x\n---\n"]:
        problem = only(text)
        assert (problem.code, problem.line, problem.column) == ("missing_frontmatter", 1, 1)
    assert valid("---  \nabout: []\n---\n").about == ()  # trailing blanks on '---' are fine


def test_unclosed_frontmatter_is_reported_at_the_opening_delimiter() -> None:
    problem = only("---\nabout: [a.py]\n# Title\n")
    assert (problem.code, problem.line, problem.column) == ("unclosed_frontmatter", 1, 1)
    assert valid("---\nabout: [a.py]\n...\n# Title\n").about[0].raw == "a.py"


def test_empty_frontmatter_is_reported() -> None:
    for front in ["", "\n\n", "# only a comment\n"]:
        problem = only(memory_with(front))
        assert (problem.code, problem.line) == ("empty_frontmatter", 1)
    assert valid(memory_with("title: x\n")).title == "Title"


def test_a_yaml_syntax_error_is_reported_at_yamls_position_in_the_file() -> None:
    text = memory_with("about:\n  - a.py\n - b.py\n")
    problem = only(text)
    assert problem.code == "yaml_syntax"
    assert (problem.line, problem.column) == (4, 2)
    assert "YAML" in problem.message
    for variant in ["\ufeff" + text, text.replace("\n", "\r\n"), text.replace("\n", "\r")]:
        again = only(variant)
        assert (again.code, again.line, again.column) == ("yaml_syntax", 4, 2)
    assert valid(memory_with("about:\n  - a.py\n  - b.py\n")).about  # positive control


def test_a_yaml_error_at_the_end_of_the_frontmatter_stays_inside_the_file() -> None:
    problem = only(memory_with('title: "never closed\n'))
    assert problem.code == "yaml_syntax"
    assert problem.line == 3  # the closing '---', not past it
    assert only(memory_with("about: [a.py\n")).code == "yaml_syntax"


def test_a_control_character_in_the_frontmatter_is_a_yaml_problem_at_its_position() -> None:
    problem = only(memory_with("title: ok\nowner: a\x01b\n"))
    assert (problem.code, problem.line, problem.column) == ("yaml_syntax", 3, 9)
    assert "U+0001" in problem.message
    assert valid(memory_with("title: ok\n", "body with \x01 is fine\n"))


@pytest.mark.parametrize("front", ["- a.py\n- b.py\n", "just a string\n", "42\n"])
def test_frontmatter_that_is_not_a_mapping_is_reported(front: str) -> None:
    problem = only(memory_with(front))
    assert (problem.code, problem.line, problem.column) == ("frontmatter_not_a_mapping", 2, 1)


# --- problems: keys and types -----------------------------------------------------------------


def test_duplicate_key_is_reported_at_its_second_occurrence() -> None:
    problem = only(memory_with("about: [a.py]\ntitle: x\nabout: [b.py]\n"))
    assert (problem.code, problem.line, problem.column) == ("duplicate_key", 4, 1)
    assert "line 2" in problem.message


def test_duplicate_keys_are_reported_at_any_depth() -> None:
    nested = memory_with("about:\n  - ref: a.py\n    watch: [doc]\n    ref: b.py\n")
    assert [(p.code, p.line, p.column) for p in problems(nested)] == [("duplicate_key", 5, 5)]
    user = memory_with("about: []\nmeta:\n  owner: a\n  deep: {x: 1, x: 2}\n")
    assert [(p.code, p.line, p.column) for p in problems(user)] == [("duplicate_key", 5, 16)]
    links = memory_with("links:\n  see-also: [a.md]\n  see-also: [b.md]\n")
    assert codes(links) == ["duplicate_key"]
    # Positive control: equal keys in different mappings are not duplicates.
    valid(memory_with("about: []\na: {x: 1}\nb: {x: 1}\n"))


def test_keys_that_differ_only_in_type_are_not_duplicates() -> None:
    valid(memory_with("meta: {1: a, '1': b, true: c}\n"))
    assert codes(memory_with("meta: {1: a, 0x1: b}\n")) == ["duplicate_key"]


def test_about_that_is_neither_a_string_nor_a_list_is_reported() -> None:
    problem = only(memory_with("about:\n  ref: a.py\n"))
    assert (problem.code, problem.line, problem.column) == ("about_not_a_list", 3, 3)
    assert only(memory_with("about: 42\n")).code == "about_not_a_list"
    assert only(memory_with("about: true\n")).code == "about_not_a_list"


def test_an_entry_that_is_neither_a_string_nor_a_ref_mapping_is_reported() -> None:
    text = memory_with("about:\n  - a.py\n  - 42\n  - [b.py]\n  -\n")
    assert [(p.code, p.line, p.column) for p in problems(text)] == [
        ("about_entry_invalid", 4, 5),
        ("about_entry_invalid", 5, 5),
        ("about_entry_invalid", 6, 4),
    ]


def test_an_entry_whose_ref_is_not_a_string_is_reported_at_the_ref() -> None:
    problem = only(memory_with("about:\n  - ref: [a.py]\n"))
    assert (problem.code, problem.line, problem.column) == ("about_entry_invalid", 3, 10)
    assert valid(memory_with("about:\n  - ref: a.py\n")).about[0].raw == "a.py"


def test_an_entry_without_ref_is_reported() -> None:
    problem = only(memory_with("about:\n  - watch: [body]\n"))
    assert (problem.code, problem.line, problem.column) == ("about_entry_missing_ref", 3, 5)


def test_an_unknown_key_in_an_entry_is_reported_at_the_key() -> None:
    problem = only(memory_with("about:\n  - ref: a.py\n    watches: [body]\n"))
    assert (problem.code, problem.line, problem.column) == ("about_entry_unknown_key", 4, 5)
    assert "watches" in problem.message


def test_a_malformed_reference_is_reported_at_the_reference() -> None:
    text = memory_with("about:\n  - src/a.py#\n  - ref: 'src\\b.py'\n")
    assert [(p.code, p.line, p.column) for p in problems(text)] == [
        ("bad_reference", 3, 5),
        ("bad_reference", 4, 10),
    ]


@pytest.mark.parametrize("raw", ["../outside.py", "/etc/passwd", "C:/x.py", "a/../../b.py"])
def test_a_reference_leaving_the_workspace_is_reported_as_outside_workspace(raw: str) -> None:
    problem = only(memory_with(f"about:\n  - '{raw}'\n"))
    assert (problem.code, problem.line, problem.column) == ("outside_workspace", 3, 5)
    assert valid(memory_with("about:\n  - 'inside.py'\n")).about  # positive control


def test_the_same_anchor_twice_is_reported_at_the_second_entry() -> None:
    problem = only(memory_with("about:\n  - a.py#f\n  - ./a.py#f\n"))
    assert (problem.code, problem.line, problem.column) == ("duplicate_reference", 4, 5)
    assert len(valid(memory_with("about:\n  - a.py#f\n  - a.py#g\n")).about) == 2


def test_a_watch_that_is_not_a_list_of_strings_is_reported() -> None:
    assert [(p.code, p.line, p.column) for p in problems(memory_with("watch: {a: b}\n"))] == [
        ("watch_not_a_list", 2, 8)
    ]
    entry = memory_with("about:\n  - ref: a.py\n    watch: [body, 3]\n")
    assert [(p.code, p.line, p.column) for p in problems(entry)] == [("watch_not_a_list", 4, 19)]


def test_a_watch_axis_that_does_not_exist_is_reported_at_the_axis() -> None:
    problem = only(memory_with("about: [a.py]\nwatch: [body, sig]\n"))
    assert (problem.code, problem.line, problem.column) == ("unknown_watch_axis", 3, 15)
    assert "signature" in problem.message  # lists the axes
    entry = memory_with("about:\n  - ref: a.py\n    watch: Body\n")
    assert codes(entry) == ["unknown_watch_axis"]


def test_confidence_outside_the_three_levels_is_reported() -> None:
    for value in ["sure", "Verified", "1", "[verified]"]:
        problem = only(memory_with(f"confidence: {value}\n"))
        assert (problem.code, problem.line, problem.column) == ("confidence_invalid", 2, 13)
    for level in ["verified", "inferred", "unverified"]:
        assert valid(memory_with(f"confidence: {level}\n")).confidence == level


def test_supersedes_that_is_not_a_string_or_list_of_strings_is_reported() -> None:
    assert only(memory_with("supersedes: {a: b}\n")).code == "supersedes_not_a_list"
    problem = only(memory_with("supersedes: [a.md, 3]\n"))
    assert (problem.code, problem.line, problem.column) == ("supersedes_not_a_list", 2, 20)
    assert only(memory_with("supersedes: ../x.md\n")).code == "outside_workspace"


def test_links_that_are_not_a_mapping_of_lists_of_strings_are_reported() -> None:
    assert only(memory_with("links: [a.md]\n")).code == "links_not_a_mapping"
    assert only(memory_with("links: {[x]: a.md}\n")).code == "links_not_a_mapping"
    problem = only(memory_with("links:\n  see-also: {a: b}\n"))
    assert (problem.code, problem.line, problem.column) == ("links_not_a_list", 3, 13)
    problem = only(memory_with("links:\n  see-also: [a.md, null]\n"))
    assert (problem.code, problem.line, problem.column) == ("links_not_a_list", 3, 20)


def test_a_title_that_is_a_collection_is_reported() -> None:
    assert only(memory_with("title: [a, b]\n", "no heading\n")).code == "title_not_a_string"
    assert valid(memory_with("title: 1984\n", "no heading\n")).title == "1984"


def test_every_problem_is_reported_not_just_the_first() -> None:
    text = memory_with("about: [../x.py]\nconfidence: high\nwatch: [nope]\n")
    assert codes(text) == ["outside_workspace", "confidence_invalid", "unknown_watch_axis"]


# --- YAML features that could smuggle values --------------------------------------------------


def test_python_tags_are_reported_and_never_executed() -> None:
    text = memory_with("about: !!python/object/apply:os.system [echo pwned]\n")
    problem = only(text)
    assert problem.code == "about_not_a_list"
    assert "python/object/apply" in problem.message
    entry = memory_with("about:\n  - !!python/name:os.system a.py\n")
    assert only(entry).code == "about_entry_invalid"
    key = memory_with("? !!python/name:os.system\n: 1\nabout: [a.py]\n")
    assert valid(key).about[0].raw == "a.py"  # an odd key in user metadata is ignored


def test_custom_tags_on_required_strings_are_reported() -> None:
    assert only(memory_with("about: [!ref a.py]\n")).code == "about_entry_invalid"
    assert only(memory_with("confidence: !x verified\n")).code == "confidence_invalid"
    assert only(memory_with("about:\n  - !!set {a.py}\n")).code == "about_entry_invalid"
    assert valid(memory_with("about: [!!str a.py]\n")).about[0].raw == "a.py"


def test_aliases_are_followed_and_non_strings_behind_them_are_reported() -> None:
    ok = valid(memory_with("x: &p src/a.py\nabout: [*p]\n"))
    assert ok.about[0].raw == "src/a.py"
    assert (ok.about[0].line, ok.about[0].column) == (2, 4)  # at its anchor, where the text is
    problem = only(memory_with("x: &l [a.py]\nabout:\n  - *l\n"))
    assert (problem.code, problem.line, problem.column) == ("about_entry_invalid", 2, 4)
    recursive = memory_with("about: &r\n  - ref: *r\n")
    assert codes(recursive) == ["about_entry_invalid"]


def test_merge_keys_are_honoured_in_about_entries() -> None:
    memory = valid(memory_with("base: &b {watch: [doc]}\nabout:\n  - <<: *b\n    ref: a.py\n"))
    assert memory.about[0].watch == ("doc",)
    assert only(memory_with("about:\n  - <<: 3\n    ref: a.py\n")).code == "yaml_syntax"


def _best_parse_seconds(front: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        memory = valid(memory_with(front + "\nabout: [a.py]\n"))
        best = min(best, time.perf_counter() - started)
        assert memory.about[0].raw == "a.py"
    return best


def test_an_alias_bomb_is_parsed_without_expanding_it() -> None:
    bomb, plain = ["a: &a [x, x, x, x, x, x, x, x, x, x]"], ["a: [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 12):
        prev = chr(ord("a") + level - 1)
        name = chr(ord("a") + level)
        bomb.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
        plain.append(f"{name}: [" + ", ".join([prev] * 10) + "]")  # the baseline: no aliases
    # Measured: both ~0.4 ms. Expanded, the bomb is 10**12 nodes: even a millionth of that
    # walked is seconds, far past this bound, which leaves room for a busy machine.
    baseline = _best_parse_seconds("\n".join(plain))
    assert _best_parse_seconds("\n".join(bomb)) < 50 * baseline + 0.5, baseline


def test_deep_nesting_is_a_problem_not_a_crash() -> None:
    deep = memory_with("meta: " + "[" * 5000 + "]" * 5000 + "\n")
    assert codes(deep) == ["yaml_syntax"]
    assert valid(memory_with("meta: " + "[" * 50 + "]" * 50 + "\n"))


# --- never raising ----------------------------------------------------------------------------


def _check_result(data: bytes, parsed: ParsedMemory) -> None:
    assert isinstance(parsed, ParsedMemory)
    assert (parsed.memory is None) == bool(parsed.problems)
    line_count = data.count(b"\n") + data.count(b"\r") + 1
    for problem in parsed.problems:
        assert problem.code != "internal_error", (data, problem)
        assert 1 <= problem.line <= line_count, (data, problem)
        assert problem.column >= 1
        assert problem.message


def test_random_truncated_and_binary_input_gives_problems_never_an_exception() -> None:
    rng = random.Random(20260501)
    seed = DESIGN_EXAMPLE.encode()
    samples: list[bytes] = [b"", b"\x00", b"\xff\xfe", b"---", b"---\n", b"---\n---", b"\r\r\r"]
    samples += [seed[:cut] for cut in range(0, len(seed), 7)]
    alphabet = b"-:#[]{}&*!|>'\"\n\r\t ,?.a\x00\xc3\xa9\xff"
    for _ in range(1500):
        kind = rng.randrange(4)
        if kind == 0:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
        elif kind == 1:
            data = b"---\n" + bytes(rng.choice(alphabet) for _ in range(rng.randrange(120)))
            data += b"\n---\n"
        else:
            mutated = bytearray(seed)
            for _ in range(rng.randrange(1, 6)):
                position = rng.randrange(len(mutated))
                mutated[position] = rng.choice(alphabet)
            data = bytes(mutated)
        samples.append(data)
    results = [(data, parse_memory("memories/fuzz.md", data)) for data in samples]
    for data, parsed in results:
        _check_result(data, parsed)
    # Positive control: the unmutated seed is a valid memory.
    assert parse_memory("memories/fuzz.md", seed).memory is not None
    assert any(parsed.memory is None for _, parsed in results)
