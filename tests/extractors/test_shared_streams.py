"""Work shared between the definitions of one parsed file never changes a digest.

`ParsedFile.facts()` replays the token streams of subtrees it has already written (a class's
body holds its methods), and reads plain string literals off their text rather than their
child nodes. Each shortcut must give what the plain walk gives.
"""

from __future__ import annotations

from textwrap import dedent

import moor_extractors.lang_python as lang_python
import pytest
from moor_extractors.model import Facts
from moor_extractors.symbols import parse_source
from tree_sitter import Node

PYTHON = dedent(
    '''
    """Module docstring."""

    LIMIT = 10


    class Outer:
        """Outer's docstring."""

        label: dict[str, int | None] = {}

        @property
        def name(self) -> str:
            """The name."""
            return f"{self.label!r:>10}" + 'it\\'s' + r"raw\\d" + b"\\x00".decode()

        def nested(self, a: list[int], *, b=(1, 2)) -> None:
            def inner():
                "Inner's docstring"
                return [x for x in a if x]

            class Local:
                def method(self):
                    """Nested method."""
                    if a:
                        pass
                    else:
                        if b:
                            return 0x1F
            return inner()

        class Inner:
            """Inner class."""

            def deep(self):
                return """multi
                line""" "joined"


    @decorate(1)
    def helper(a, b):
        # a comment
        return (a + b) * 2
    '''
)

JAVASCRIPT = dedent(
    """
    export class View {
      render(name) {
        const label = name.toUpperCase();
        return `<div>${label}</div>`;
      }
      static make = () => new View();
    }

    const f = function g(x) { return x * 2; };
    """
)

RUST = dedent(
    """
    /// A store.
    pub struct Store { items: Vec<u8> }

    impl Store {
        #[inline]
        pub fn put(&mut self, v: u8) { self.items.push(v); }
        fn len(&self) -> usize { vec![0; 3].len() }
    }

    mod inner {
        pub fn helper() -> &'static str { "x\\n" }
    }
    """
)

GO = dedent(
    """
    package store

    type Store struct { items map[string]int }

    func (s *Store) Put(key string, value int) error {
        f := func() int { return len(key) }
        s.items[key] = f() + value
        return nil
    }

    const Limit = 10

    func Helper(a, b int) int { return (a + b) * 2 }
    """
)

SAMPLES = {"python": PYTHON, "javascript": JAVASCRIPT, "rust": RUST, "go": GO}


def each_alone(language: str, source: bytes) -> list[Facts]:
    """Every definition's facts from a file parsed for it alone: nothing to replay."""
    count = len(parse_source(language, source).sites())
    result = []
    for index in range(count):
        parsed = parse_source(language, source)
        result.append(parsed.facts(parsed.sites()[index]))
    return result


@pytest.mark.parametrize("language", SAMPLES)
def test_facts_do_not_depend_on_which_definitions_were_asked_for_before(language: str) -> None:
    source = SAMPLES[language].encode()
    alone = each_alone(language, source)
    assert len(alone) >= 4

    outer_first = parse_source(language, source)
    assert [outer_first.facts(site) for site in outer_first.sites()] == alone

    inner_first = parse_source(language, source)
    backwards = [inner_first.facts(site) for site in reversed(inner_first.sites())]
    assert backwards[::-1] == alone

    twice = parse_source(language, source)
    [site, *_] = twice.sites()
    assert twice.facts(site) == twice.facts(site) == alone[0]


def test_non_ascii_text_before_a_definition_does_not_shift_its_tokens() -> None:
    code = "\ndef f(value):\n    return value + 'ok'\n"
    plain = parse_source("python", ("x = 'e'" + code).encode())
    accented = parse_source("python", ("x = 'é€𝄞'" + code).encode())
    [_, plain_f] = plain.sites()
    [_, accented_f] = accented.sites()
    for axis in ("signature", "body", "doc"):
        assert plain.facts(plain_f).axes[axis] == accented.facts(accented_f).axes[axis]


def strings(node: Node) -> list[Node]:
    found = [node] if node.type == "string" else []
    for child in node.children:
        found.extend(strings(child))
    return found


def test_plain_string_literals_read_off_their_text_have_the_value_of_their_parts() -> None:
    source = dedent(
        '''
        a = "plain", 'single', "", '', """triple""", \'\'\'triple\'\'\', """"""
        b = u"unicode", U"x", r"raw", R"x", b"bytes", B"x", rb"x", Rb"x", bR"x", BR"x"
        c = "a\\nb", r"a\\nb", b"a\\x00", "a\\\\b", "\\d", rb"\\d", "tab\\there"
        d = f"x{y}", F"x", rf"x{y}", fr"x", t"x{y}"
        e = """multi
        line with 'quotes' and "quotes" """, "é€𝄞", b"caf\\xc3\\xa9"
        g = """ends with quote\\"""", "{braces}", "a" "b"
        '''
    ).encode()
    crlf = source.replace(b"\n", b"\r\n")
    for text in (source, crlf):
        root = parse_source("python", text).tree.root_node
        nodes = strings(root)
        assert len(nodes) > 30
        for node in nodes:
            assert lang_python.literal_value(node, text) == lang_python._value_from_parts(node)
