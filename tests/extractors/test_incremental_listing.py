"""Re-parsing from an earlier version lists the same definitions, with the same facts, as
parsing from scratch — for random edits, in every language, broken code included."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import pytest
from moor_extractors.symbols import ParsedFile, parse_source

from tests.extractors import test_members as members
from tests.extractors import test_symbols_go as go
from tests.extractors import test_symbols_java as java
from tests.extractors import test_symbols_javascript as javascript
from tests.extractors import test_symbols_markdown as markdown
from tests.extractors import test_symbols_rust as rust
from tests.extractors import test_symbols_typescript as typescript

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SNIPPETS = {
    "go": go.SOURCE,
    "java": java.SOURCE,
    "javascript": javascript.SOURCE,
    "markdown": markdown.SOURCE,
    "rust": rust.SOURCE,
    "typescript": typescript.SOURCE,
}
LINES = [b"    pass\n", b"\n", b"# note\n", b"def added():\n    return 1\n", b"}\n", b"x = (\n"]


def listing(parsed: ParsedFile) -> list[tuple[object, ...]]:
    """Every site with its facts: all that anything downstream reads."""
    return [(site, parsed.facts_key(site), parsed.facts(site)) for site in parsed.sites()]


def edited(source: bytes, rng: random.Random) -> bytes:
    lines = source.splitlines(keepends=True)
    at = rng.randrange(len(lines) + 1)
    roll = rng.random()
    if roll < 0.4:
        lines.insert(at, rng.choice(LINES))
    elif roll < 0.7 and lines:
        del lines[min(at, len(lines) - 1)]
    elif lines:
        line = lines[min(at, len(lines) - 1)]
        column = rng.randrange(len(line) + 1)
        line = line[:column] + rng.choice([b"a", b"(", b"", b" 1", b"'"]) + line[column + 1 :]
        lines[min(at, len(lines) - 1)] = line
    return b"".join(lines)


def replay(language: str, source: bytes, edits: int, seed: int) -> int:
    """Apply random edits one after another, comparing each re-parse with a fresh parse;
    returns how many re-parses listed definitions incrementally."""
    rng = random.Random(seed)
    earlier = parse_source(language, source)
    earlier.sites()
    incremental = 0
    for _ in range(edits):
        source = edited(source, rng)
        again = parse_source(language, source, earlier)
        assert listing(again) == listing(parse_source(language, source))
        incremental += again.relisted
        earlier = again
    return incremental


@pytest.mark.parametrize("name", ["textwrap.py", "argparse.py", "tkinter/__init__.py"])
def test_python_files_re_listed_after_random_edits_match_a_fresh_parse(name: str) -> None:
    source = (STDLIB / name).read_bytes()
    assert replay("python", source, 20, seed=len(name)) >= 16


@pytest.mark.parametrize("language", sorted(SNIPPETS))
def test_other_languages_re_listed_after_random_edits_match_a_fresh_parse(language: str) -> None:
    source = SNIPPETS[language].encode()
    assert replay(language, source, 30, seed=7) >= 20


def test_a_re_parse_lists_only_the_edited_region_again() -> None:
    source = (STDLIB / "tkinter/__init__.py").read_bytes()
    earlier = parse_source("python", source)
    sites = earlier.sites()
    target = next(s for s in sites if s.qname == "Misc.destroy")
    at = source.index(b"\n", target.start_byte) + 1
    again = parse_source("python", source[:at] + b"        pass\n" + source[at:], earlier)
    found = again.sites()
    assert again.relisted
    assert len(found) == len(sites)
    # The definitions after the edit are the earlier ones, one line further on.
    last_before, last_after = sites[-1], found[-1]
    assert (last_after.qname, last_after.line) == (last_before.qname, last_before.line + 1)
    # Control: without the earlier parse there is nothing to re-list from.
    fresh = parse_source("python", source)
    fresh.sites()
    assert not fresh.relisted


def test_a_definition_not_where_the_re_listing_carried_it_is_listed_again_from_scratch() -> None:
    source = (STDLIB / "textwrap.py").read_bytes()
    earlier = parse_source("python", source)
    earlier.sites()
    changed = source.replace(
        b"def wrap(text, width=70, **kwargs):", b"def wrap(text, width=70, **kwargs):\n    pass", 1
    )
    assert changed != source
    again = parse_source("python", changed, earlier)
    sites = again.sites()
    assert again.relisted
    site = next(s for s in sites if s.qname == "indent")  # after the edit: carried
    carried = again._index()[site]
    assert carried.node is None  # found in the new tree only when wanted
    carried.node_start += 1  # as if the carrying had gone wrong
    fresh = parse_source("python", changed)
    assert again.facts(site) == fresh.facts(site)
    assert not again.relisted  # it listed everything again to find it
    # Control: a carried definition where it should be is found without listing again.
    other = parse_source("python", changed, earlier)
    other.sites()
    assert other.facts(site) == fresh.facts(site) and other.relisted


@pytest.mark.parametrize(
    ("language", "source"),
    [
        ("rust", members.BACKTRACE_RS + members.ERROR_IMPLS_RS + members.ENSURE_RS),
        ("go", members.CLI_GO),
        ("typescript", members.STORE_TS),
    ],
    ids=["rust", "go", "typescript"],
)
def test_members_and_impls_re_listed_after_random_edits_match_a_fresh_parse(
    language: str, source: str
) -> None:
    # Places skip members and pass through impls (`placeless`, `transparent`): a re-listing
    # that carries definitions past an edit must place them as a fresh listing does.
    assert replay(language, source.encode(), 30, seed=11) >= 15
