"""Helpers shared by the per-language extractor tests: which axes a change moved."""

from __future__ import annotations

from moor_extractors.model import AXES, Facts
from moor_extractors.symbols import parse_source


def facts_of(language: str, source: str, qname: str, index: int = 0) -> Facts:
    parsed = parse_source(language, source.encode())
    sites = [site for site in parsed.sites() if site.qname == qname]
    return parsed.facts(sites[index])


def moved(language: str, before: str, after: str, qname: str, index: int = 0) -> set[str]:
    old = facts_of(language, before, qname, index)
    new = facts_of(language, after, qname, index)
    return {axis for axis in AXES if old.axes[axis] != new.axes[axis]}


def tabs_for_spaces(source: str) -> str:
    """Every two-space indentation step becomes a tab: a whole-file re-indent."""
    return "\n".join(
        "\t" * ((len(line) - len(line.lstrip(" "))) // 2) + line.lstrip(" ")
        for line in source.split("\n")
    )


def assert_only_text_moves_anywhere(language: str, before: str, after: str) -> None:
    """Every definition keeps every axis but `text`, and at least one `text` did move."""
    old_file, new_file = (
        parse_source(language, before.encode()),
        parse_source(language, after.encode()),
    )
    texts_moved = 0
    for old, new in zip(old_file.sites(), new_file.sites(), strict=True):
        old_axes, new_axes = old_file.facts(old).axes, new_file.facts(new).axes
        assert old.qname == new.qname
        assert {axis for axis in AXES if old_axes[axis] != new_axes[axis]} <= {"text"}
        texts_moved += old_axes["text"] != new_axes["text"]
    assert texts_moved > 0  # positive control: the edit was seen
