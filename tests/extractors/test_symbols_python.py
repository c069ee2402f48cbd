"""Python definitions: names by containment, and which axis each kind of edit moves."""

from __future__ import annotations

from textwrap import dedent

from moor_extractors.model import AXES, Facts
from moor_extractors.symbols import parse_source

SOURCE = dedent(
    '''
    import os

    LIMIT = 10


    class Store:
        """Keeps things."""

        def put(self, key: str, value: int = 1) -> None:
            """Put one."""
            total = (key + "x") * 2
            return total

        def get(self, key):
            def inner():
                return key
            return inner()


    class Cache:
        def put(self, key):
            return key


    @decorate(1)
    def helper(a, b):
        return a + b
    '''
)


def facts_of(source: str, qname: str) -> Facts:
    parsed = parse_source("python", source.encode())
    [site] = [site for site in parsed.sites() if site.qname == qname]
    return parsed.facts(site)


def moved(before: str, after: str, qname: str) -> set[str]:
    old, new = facts_of(before, qname), facts_of(after, qname)
    return {axis for axis in AXES if old.axes[axis] != new.axes[axis]}


def test_qualified_names_follow_containment_and_kinds_tell_methods_from_functions() -> None:
    sites = parse_source("python", SOURCE.encode()).sites()
    assert [(site.qname, site.kind) for site in sites] == [
        ("LIMIT", "constant"),
        ("Store", "class"),
        ("Store.put", "method"),
        ("Store.get", "method"),
        ("Store.get.inner", "function"),
        ("Cache", "class"),
        ("Cache.put", "method"),
        ("helper", "function"),
    ]


def test_every_axis_has_a_digest() -> None:
    assert set(facts_of(SOURCE, "Store.put").axes) == set(AXES)


def test_same_named_methods_in_two_classes_resolve_independently() -> None:
    after = SOURCE.replace(
        "    def put(self, key):\n        return key",
        "    def put(self, key):\n        return None",
    )
    assert moved(SOURCE, after, "Cache.put") == {"body", "text"}
    assert moved(SOURCE, after, "Store.put") == set()


def test_duplicate_qualified_names_are_all_listed_with_their_own_lines() -> None:
    source = dedent(
        """
        class A:
            @property
            def x(self):
                return 1

            @x.setter
            def x(self, value):
                pass
        """
    )
    sites = [
        site for site in parse_source("python", source.encode()).sites() if site.qname == "A.x"
    ]
    assert [site.line for site in sites] == [3, 7]


def test_a_decorated_definition_spans_its_decorators() -> None:
    parsed = parse_source("python", SOURCE.encode())
    [site] = [site for site in parsed.sites() if site.qname == "helper"]
    assert parsed.source_text(site).startswith("@decorate(1)\ndef helper")
    assert site.line == SOURCE.splitlines().index("@decorate(1)") + 1


def test_reindenting_comments_blank_lines_and_rewrapping_leave_every_default_axis_unchanged() -> (
    None
):
    cosmetic = SOURCE.replace(
        "    def put(self, key: str, value: int = 1) -> None:\n",
        "    def put(\n        self,\n        key: str,  # the key\n\n"
        "        value: int = 1,\n    ) -> None:\n",
    ).replace("        total = (key", "        # compute\n\n        total = (key")
    reindented = "\n".join(
        line.replace("    ", "  ") if line.startswith("    ") else line
        for line in SOURCE.split("\n")
    )
    assert moved(SOURCE, cosmetic, "Store.put") == {"text"}
    assert moved(SOURCE, reindented, "Store") == {"text"}
    # Positive control: a code token moves the body.
    assert "body" in moved(SOURCE, SOURCE.replace("* 2", "* 3"), "Store.put")


def test_quote_style_trailing_commas_and_redundant_parentheses_are_cosmetic() -> None:
    before = 'def f(a):\n    g("x", u"y", a)\n    return (a)\n'
    after = "def f(a,):\n    g('x', 'y', a,)\n    return a\n"
    assert moved(before, after, "f") == {"text"}
    assert "body" in moved(before, before.replace('"x"', '"z"'), "f")


def test_implicit_concatenation_equals_the_one_literal_it_spells() -> None:
    before = 'def f():\n    return "ab" "cd"\n'
    assert moved(before, 'def f():\n    return "abcd"\n', "f") == {"text"}
    assert "body" in moved(before, 'def f():\n    return "ab" "ce"\n', "f")


def test_bytes_and_str_with_the_same_characters_differ() -> None:
    before = 'def f():\n    return "ab"\n'
    assert "body" in moved(before, before.replace('"ab"', 'b"ab"'), "f")
    assert moved(before, before.replace('"ab"', "'ab'"), "f") == {"text"}


def test_an_edit_to_a_string_with_an_escape_sequence_moves_the_body() -> None:
    before = 'def f():\n    return "foo\\n"\n'
    assert moved(before, before.replace("foo", "bar"), "f") == {"body", "text"}
    assert moved(before, before.replace('"foo\\n"', "'foo\\n'"), "f") == {"text"}


def test_f_string_quote_style_is_cosmetic_but_its_content_and_format_spec_are_not() -> None:
    before = 'def f(x):\n    return f"a{x!r:>3}b"\n'
    assert moved(before, before.replace('f"a{x!r:>3}b"', "F'a{x!r:>3}b'"), "f") == {"text"}
    assert "body" in moved(before, before.replace(">3", ">4"), "f")
    assert "body" in moved(before, before.replace("a{", "c{"), "f")


def test_else_holding_only_an_if_equals_elif() -> None:
    before = "def f(a):\n    if a:\n        x()\n    elif b:\n        y()\n"
    after = "def f(a):\n    if a:\n        x()\n    else:\n        if b:\n            y()\n"
    assert moved(before, after, "f") == {"text"}
    assert "body" in moved(before, before.replace("elif b", "elif c"), "f")


def test_a_parenthesised_annotation_equals_the_bare_one() -> None:
    before = "def f() -> Iterable[Tuple[str, int]]:\n    pass\n"
    after = "def f() -> (\n    Iterable[Tuple[str, int]]\n):\n    pass\n"
    assert moved(before, after, "f") == {"text"}
    assert "signature" in moved(before, before.replace("int", "str"), "f")


def test_numeric_literal_spelling_is_cosmetic_but_its_value_is_not() -> None:
    before = "def f():\n    return 0xFF + 1_000\n"
    assert moved(before, "def f():\n    return 0XFF + 1000\n", "f") == {"text"}
    assert "body" in moved(before, before.replace("1_000", "1_001"), "f")


def test_a_body_token_change_moves_only_the_body() -> None:
    after = SOURCE.replace("* 2", "* 3")
    assert moved(SOURCE, after, "Store.put") == {"body", "text"}
    assert moved(SOURCE, after, "Store") == {"body", "text"}


def test_an_added_parameter_moves_the_signature() -> None:
    after = SOURCE.replace("def get(self, key):", "def get(self, key, default=None):")
    assert moved(SOURCE, after, "Store.get") == {"signature", "text"}


def test_a_changed_default_annotation_or_return_type_moves_the_signature() -> None:
    for old, new in [("= 1", "= 2"), ("key: str", "key: bytes"), ("-> None", "-> int")]:
        assert moved(SOURCE, SOURCE.replace(old, new), "Store.put") == {"signature", "text"}


def test_async_moves_the_signature_and_a_base_class_moves_the_class_signature() -> None:
    assert "signature" in moved(SOURCE, SOURCE.replace("def helper", "async def helper"), "helper")
    assert moved(SOURCE, SOURCE.replace("class Cache:", "class Cache(Base):"), "Cache") == {
        "signature",
        "text",
    }
    assert moved(SOURCE, SOURCE.replace("class Cache:", "class Cache():"), "Cache") == {"text"}


def test_an_added_decorator_moves_only_the_decorators() -> None:
    after = SOURCE.replace("    def get(self, key):", "    @cached\n    def get(self, key):")
    assert moved(SOURCE, after, "Store.get") == {"decorators", "text"}
    assert moved(SOURCE, SOURCE.replace("@decorate(1)", "@decorate(2)"), "helper") == {
        "decorators",
        "text",
    }


def test_a_docstring_edit_moves_only_doc_even_for_the_enclosing_class() -> None:
    after = SOURCE.replace('"""Put one."""', '"""Put exactly one."""')
    assert moved(SOURCE, after, "Store.put") == {"doc", "text"}
    assert moved(SOURCE, after, "Store") == {"doc", "text"}
    rewrapped = SOURCE.replace('"""Put one."""', '"""Put\n        one.\n        """')
    assert moved(SOURCE, rewrapped, "Store.put") == {"text"}


def test_a_string_after_other_statements_is_code_not_a_docstring() -> None:
    before = 'def f():\n    x = 1\n    "note"\n'
    assert moved(before, before.replace('"note"', '"other"'), "f") == {"body", "text"}


def test_place_ignores_line_shifts_but_moves_when_the_preceding_sibling_changes() -> None:
    shifted = SOURCE.replace("import os\n", "import os\nimport sys\n\n\n")
    assert moved(SOURCE, shifted, "Cache") == set()
    swapped = SOURCE.replace("class Cache:", "class Other:\n    pass\n\n\nclass Cache:")
    assert moved(SOURCE, swapped, "Cache") == {"place"}
    assert moved(SOURCE, SOURCE, "Store.get") == set()
    assert (
        facts_of(SOURCE, "Store.put").axes["place"] != facts_of(SOURCE, "Store.get").axes["place"]
    )


def test_a_syntax_error_inside_a_definition_is_flagged_on_that_site_only() -> None:
    broken = SOURCE.replace("return inner()", "return inner(")
    sites = {site.qname: site for site in parse_source("python", broken.encode()).sites()}
    assert sites["Store.put"].has_error is False
    assert sites["LIMIT"].has_error is False
    assert any(site.has_error for site in sites.values())


def test_class_attributes_are_definitions_named_through_their_class() -> None:
    source = (
        b"class Client:\n    timeout = 30\n    name: str = 'x'\n\n"
        b"    def send(self):\n        return 1\n"
    )
    parsed = parse_source("python", source)
    names = {site.qname: site.kind for site in parsed.sites()}
    assert names["Client.timeout"] == "constant"
    assert names["Client.name"] == "constant"
    site = next(s for s in parsed.sites() if s.qname == "Client.timeout")
    changed = parse_source("python", source.replace(b"30", b"60"))
    moved = next(s for s in changed.sites() if s.qname == "Client.timeout")
    # The value is the body; the name is in no axis.
    assert parsed.facts(site).axes["body"] != changed.facts(moved).axes["body"]
    assert parsed.facts(site).axes["signature"] == changed.facts(moved).axes["signature"]
    # Control: an assignment inside a method is a local, not a definition.
    local = parse_source("python", b"class C:\n    def f(self):\n        x = 1\n        return x\n")
    assert [s.qname for s in local.sites()] == ["C", "C.f"]
