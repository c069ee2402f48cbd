"""What a syntax error may reshape (`ParsedFile.error_regions`, `error_reaching`; issue 23,
item 1; memory: parse-errors-reach-what-follows)."""

from __future__ import annotations

from moor_extractors.symbols import ParsedFile, parse_source


def reaching(parsed: ParsedFile, qname: str) -> bool:
    site = next(site for site in parsed.sites() if site.qname == qname)
    return parsed.error_reaching(site) is not None


CALLABLE = "type C = {\n  (): number\n  <U>(x: U): U\n}\n\n"
AFTER = "export function after(a: number): number {\n  return a + 1\n}\n"


def test_an_object_type_the_parser_cannot_read_reaches_only_itself() -> None:
    parsed = parse_source("typescript", (CALLABLE + AFTER).encode())
    assert len(parsed.error_regions()) == 1
    assert parsed.error_regions()[0].line == 2  # where the grammar gave up
    assert not reaching(parsed, "after")
    # Control: its own definition is reached.
    assert parsed.sites()[0].has_error


GO = (
    "package p\n\n"
    "func A(x int) int {\n\tif x > 0 {\n\t\treturn 1\n\t}\n\treturn 0\n}\n\n"
    "func B(y int) int {\n\treturn y * 2\n}\n\n"
    "// C doubles.\nfunc C(z int) int {\n\treturn z + z\n}\n"
)


def test_an_unclosed_brace_reaches_all_it_swallowed_and_a_stray_token_only_its_function() -> None:
    broken = parse_source("go", GO.replace("if x > 0 {", "if x > 0 { {").encode())
    # `A` swallows `B` and `C` (its `}` made up at the end of the file): one region from
    # the body that lacks it, holding both names, so neither can be called gone.
    [region] = broken.error_regions()
    assert region.line == 3  # the body that lacks its `}`
    assert [site.qname for site in broken.sites()] == ["A"]
    assert b"func C" in broken.source[region.start : region.end]
    # Control: a stray `)` in `B` is B's own region; C, after it, is not reached.
    stray = parse_source("go", GO.replace("return y * 2", "return y * 2 )").encode())
    [region] = stray.error_regions()
    assert stray.source[region.start : region.end].startswith(b"func B")
    assert not reaching(stray, "C")
    assert reaching(stray, "B")
