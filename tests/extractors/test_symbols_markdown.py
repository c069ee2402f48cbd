"""Markdown sections: named by heading breadcrumb, compared by their words."""

from __future__ import annotations

from textwrap import dedent

from moor_extractors.model import AXES, DEFAULT_WATCH, Facts
from moor_extractors.symbols import parse_source

SOURCE = dedent(
    """
    # Storage #

    How things are kept.

    ## Journal

    The journal is append-only.
    Entries are never rewritten.

    ### Layout

    One row per entry.

    ## Lock *file*

    Sorted, diff-friendly.

    # Other

    ## Journal

    Unrelated.
    """
)


def facts_of(source: str, qname: str) -> Facts:
    parsed = parse_source("markdown", source.encode())
    [site] = [site for site in parsed.sites() if site.qname == qname]
    return parsed.facts(site)


def moved(before: str, after: str, qname: str) -> set[str]:
    old, new = facts_of(before, qname), facts_of(after, qname)
    return {axis for axis in AXES if old.axes[axis] != new.axes[axis]}


def test_sections_are_named_by_their_heading_breadcrumb() -> None:
    sites = parse_source("markdown", SOURCE.encode()).sites()
    assert [(site.qname, site.kind) for site in sites] == [
        ("Storage", "section"),
        ("Storage > Journal", "section"),
        ("Storage > Journal > Layout", "section"),
        ("Storage > Lock file", "section"),
        ("Other", "section"),
        ("Other > Journal", "section"),
    ]


def test_a_section_spans_its_subsections_and_ends_before_the_next_heading() -> None:
    parsed = parse_source("markdown", SOURCE.encode())
    [journal] = [site for site in parsed.sites() if site.qname == "Storage > Journal"]
    text = parsed.source_text(journal)
    assert text.startswith("## Journal") and "One row per entry." in text
    assert "## Lock" not in text
    assert journal.line == 6 and journal.end_line == 14


def test_same_named_sections_under_different_parents_resolve_independently() -> None:
    after = SOURCE.replace("Unrelated.", "Still unrelated.")
    assert "body" in moved(SOURCE, after, "Other > Journal")
    assert moved(SOURCE, after, "Storage > Journal") == set()


def test_rewrapping_a_paragraph_and_blank_lines_leave_the_content_unchanged() -> None:
    rewrapped = SOURCE.replace(
        "The journal is append-only.\nEntries are never rewritten.",
        "The journal is\nappend-only. Entries are never rewritten.\n\n",
    )
    assert moved(SOURCE, rewrapped, "Storage > Journal") == {"text"}
    changed = SOURCE.replace("never rewritten", "sometimes rewritten")
    assert set(DEFAULT_WATCH) & moved(SOURCE, changed, "Storage > Journal") == {"body"}


def test_a_subsection_edit_moves_its_ancestors_too() -> None:
    after = SOURCE.replace("One row per entry.", "Two rows per entry.")
    assert "body" in moved(SOURCE, after, "Storage > Journal > Layout")
    assert "body" in moved(SOURCE, after, "Storage")
    assert moved(SOURCE, after, "Storage > Lock file") == set()


def test_a_heading_level_change_moves_the_signature() -> None:
    after = SOURCE.replace("### Layout", "#### Layout")
    assert "signature" in moved(SOURCE, after, "Storage > Journal > Layout")
    assert "signature" not in moved(SOURCE, after, "Storage > Lock file")


def test_place_moves_when_the_preceding_section_changes() -> None:
    after = SOURCE.replace("## Lock *file*", "## Index\n\nNew.\n\n## Lock *file*")
    assert moved(SOURCE, after, "Storage > Lock file") == {"place"}
    assert moved(SOURCE, "\n\n" + SOURCE, "Storage > Lock file") == set()
