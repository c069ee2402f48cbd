"""Which definitions a symbol names: groups of same-named definitions, and the spelling
that picks one (`moor_extractors.resolve`)."""

from __future__ import annotations

from moor_extractors.reference import parse_reference
from moor_extractors.resolve import Ambiguous, Named, group_of, references, resolve
from moor_extractors.symbols import parse_source

EXTENSIONS = {"python": "py", "java": "java", "typescript": "ts", "rust": "rs", "go": "go"}


def lines(language: str, source: str, symbol: str) -> list[int] | str | None:
    """The lines of the definitions `symbol` names; 'ambiguous: …' with its candidates."""
    parsed = parse_source(language, source.encode())
    sites = parsed.sites()
    ref = parse_reference(f"a.{EXTENSIONS[language]}#{symbol}")
    assert not hasattr(ref, "code"), ref
    canonical = ref.symbol
    assert canonical is not None
    meaning = resolve(
        canonical,
        sites,
        language,
        lambda q: [i for i, s in enumerate(sites) if s.qname == q],
        lambda found: group_of(parsed.spec, [sites[i] for i in found], lambda: parsed),
    )
    if meaning is None:
        return None
    if isinstance(meaning, Ambiguous):
        return "ambiguous: " + ", ".join(f"{s} @{line}" for s, line in meaning.candidates)
    assert isinstance(meaning, Named)
    return [sites[i].line for i in meaning.indexes]


def listed(language: str, source: str) -> list[tuple[str, int]]:
    parsed = parse_source(language, source.encode())
    return [(r.symbol, r.variants) for r in references(parsed, f"a.{EXTENSIONS[language]}")]


PROPERTY = """\
class Box:
    @property
    def size(self):
        return 1

    @size.setter
    def size(self, value):
        pass

    def grow(self):
        pass

    def grow(self, by):
        pass
"""


def test_a_python_property_and_its_setter_are_one_symbol_but_a_redefinition_is_not() -> None:
    assert lines("python", PROPERTY, "Box.size") == [2, 6]
    # A redefinition replaces: the bare name is the one that runs, the replaced one an ordinal.
    assert lines("python", PROPERTY, "Box.grow") == [13]
    assert lines("python", PROPERTY, "Box.grow@1") == [10]
    assert lines("python", PROPERTY, "Box.grow@2") == [13]
    assert lines("python", PROPERTY, "Box.grow@3") is None
    assert ("Box.grow@1", 1) in listed("python", PROPERTY)
    assert ("Box.grow@2", 1) not in listed("python", PROPERTY)  # the bare name says it


REDEFINED = """def f():
    return 1


def g():
    pass


def f():
    return 2


if FAST:
    def h():
        return 1
def h():
    return 2
"""

INITS = """package p

func init() {
	register("a")
}

func init() {
	register("b")
}
"""


def test_each_plain_redefinition_and_each_go_init_has_a_spelling_that_names_it() -> None:
    assert lines("python", REDEFINED, "f") == [9]
    assert lines("python", REDEFINED, "f@1") == [1]
    assert [s for s, _ in listed("python", REDEFINED)] == ["f", "f@1", "g", "h@1", "h@2"]
    # Control: one `def h` inside an `if`, one after it — which one runs depends, so the
    # bare name stays ambiguous and names each by its ordinal.
    assert lines("python", REDEFINED, "h") == "ambiguous: h@1 @14, h@2 @16"
    assert lines("python", REDEFINED, "h@2") == [16]
    # Every Go `init` runs: none replaces another, so only ordinals name them.
    assert lines("go", INITS, "init") == "ambiguous: init@1 @3, init@2 @7"
    assert lines("go", INITS, "init@2") == [7]
    assert listed("go", INITS) == [("init@1", 1), ("init@2", 1)]
    assert lines("go", INITS, "init@0") is None


OVERLOADS = """\
from typing import overload
import typing

@overload
def parse(x: int) -> int: ...
@typing.overload
def parse(x: str) -> str: ...
def parse(x):
    return x

def other(x):
    return x

def other(x, y):
    return x
"""


def test_python_overload_stubs_and_their_implementation_are_one_symbol() -> None:
    assert lines("python", OVERLOADS, "parse") == [4, 6, 8]
    # Control: without `@overload`, a redefinition: the bare name is only the last.
    assert lines("python", OVERLOADS, "other") == [14]


JAVA = """\
class Registry {
    Object lookup(Key key) { return null; }
    Object lookup(final @Nullable String name, int depth) { return null; }
    void put(java.util.Map<String, Integer> m, int values[], String... rest) {}
}
"""


def test_java_overloads_are_one_symbol_and_their_parameter_types_pick_one() -> None:
    assert lines("java", JAVA, "Registry.lookup") == [2, 3]
    assert lines("java", JAVA, "Registry.lookup(Key)") == [2]
    assert lines("java", JAVA, "Registry.lookup(String,int)") == [3]
    assert lines("java", JAVA, "Registry.lookup(int)") is None
    # Types as written: generics kept, `int values[]` is `int[]`, varargs end in `...`.
    assert lines(
        "java", JAVA, "Registry.put(java.util.Map<String, Integer>, int[], String...)"
    ) == [4]
    assert listed("java", JAVA) == [
        ("Registry", 1),
        ("Registry.lookup", 2),
        ("Registry.lookup(Key)", 1),
        ("Registry.lookup(String, int)", 1),
        ("Registry.put", 1),
    ]


TYPESCRIPT = """\
export function area(side: number): number;
export function area(w: number, h?: number, ...rest: string[]): number;
export function area(w: any, h?: any): number { return w * (h ?? w); }

class Shape {
    get name(): string { return ""; }
    set name(value: string) {}
    scale(by: number): void;
    scale(x: number, y: number): void;
    scale(x: number, y?: number) {}
}
"""


def test_typescript_overload_signatures_and_implementation_are_one_symbol() -> None:
    assert lines("typescript", TYPESCRIPT, "area") == [1, 2, 3]
    assert lines("typescript", TYPESCRIPT, "area(number)") == [1]
    assert lines("typescript", TYPESCRIPT, "area(number, number?, ...string[])") == [2]
    assert lines("typescript", TYPESCRIPT, "area(any, any?)") == [3]
    assert lines("typescript", TYPESCRIPT, "Shape.name") == [6, 7]
    assert lines("typescript", TYPESCRIPT, "Shape.scale(number, number)") == [9]


RUST = """\
struct Pattern;

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}

impl From<Vec<u8>> for Pattern {
    fn from(v: Vec<u8>) -> Self { Pattern }
}

impl Pattern {
    fn new() -> Self { Pattern }
    fn from(s: &str) -> Self { Pattern }
}

#[cfg(unix)]
fn home() -> &'static str { "/home" }

#[cfg(windows)]
fn home() -> &'static str { "C:/Users" }
"""


def test_rust_trait_impl_methods_are_picked_by_their_trait_and_ambiguous_bare() -> None:
    assert lines("rust", RUST, "Pattern.fmt") == (
        "ambiguous: Pattern.fmt(fmt::Display) @4, Pattern.fmt(fmt::Debug) @8"
    )
    assert lines("rust", RUST, "Pattern.fmt(fmt::Display)") == [4]
    assert lines("rust", RUST, "Pattern.fmt(fmt::Debug)") == [8]
    # The inherent method is what `Pattern::from` calls, so it is what the bare name means.
    assert lines("rust", RUST, "Pattern.from") == [17]
    assert lines("rust", RUST, "Pattern.from(From<Vec<u8>>)") == [12]


def test_rust_cfg_variants_of_one_function_are_one_symbol() -> None:
    assert lines("rust", RUST, "home") == [20, 23]
    uncfg = RUST.replace("#[cfg(windows)]\n", "")
    assert str(lines("rust", uncfg, "home")).startswith("ambiguous")


def test_pasted_spellings_of_rust_and_go_resolve() -> None:
    assert lines("rust", RUST, "Pattern::new") == [16]
    go = "package l\n\ntype List struct{}\n\nfunc (l *List) Push(v int) {}\n"
    assert lines("go", go, "(*List).Push") == [5]
    assert lines("go", go, "List.Push") == [5]
    assert lines("go", go, "(*List).Pop") is None


PLATFORMS = """\
import os, sys

if os.name == "nt":
    def find(name):
        return name
elif os.name == "posix":
    if sys.platform == "darwin":
        def find(name):
            return "lib" + name
    else:
        def find(name):
            return name + ".so"

    class Popen:
        def wait(self):
            return 0
else:
    class Popen:
        def wait(self):
            return 1

        def wait(self):
            return 2
"""


def test_definitions_in_nested_branches_and_methods_of_per_branch_classes_are_variants() -> None:
    assert lines("python", PLATFORMS, "find") == [4, 8, 11]
    assert lines("python", PLATFORMS, "Popen") == [14, 18]
    # Control: the two `wait` in the `else:` class are a redefinition, so with them the
    # three are not variants of one method.
    assert str(lines("python", PLATFORMS, "Popen.wait")).startswith("ambiguous")
    single = PLATFORMS.replace("\n        def wait(self):\n            return 2\n", "\n")
    assert lines("python", single, "Popen.wait") == [15, 19]


HEADINGS = """\
# Troubleshooting

## <a id="oom"></a> OutOfMemoryError when `Foo` runs *twice*

Raise the heap.

## See [the guide](guide.md)

Read it.
"""


def markdown(symbol: str) -> list[int] | str | None:
    parsed = parse_source("markdown", HEADINGS.encode())
    sites = parsed.sites()
    ref = parse_reference(f"docs/t.md#{symbol}")
    canonical = ref.symbol  # type: ignore[union-attr]
    assert canonical is not None
    meaning = resolve(
        canonical,
        sites,
        "markdown",
        lambda q: [i for i, s in enumerate(sites) if s.qname == q],
        lambda found: group_of(parsed.spec, [sites[i] for i in found], lambda: parsed),
    )
    return [sites[i].line for i in meaning.indexes] if isinstance(meaning, Named) else None


def test_markdown_headings_with_markup_are_named_by_their_visible_text_or_anchor() -> None:
    visible = "Troubleshooting > OutOfMemoryError when Foo runs twice"
    assert [s.qname for s in parse_source("markdown", HEADINGS.encode()).sites()] == [
        "Troubleshooting",
        visible,
        "Troubleshooting > See the guide",
    ]
    assert markdown(visible) == [3]
    assert markdown("OutOfMemoryError when Foo runs twice") == [3]
    # Written as in the source, markup and all, it is the same heading (HTML aside: its
    # `>` would split the breadcrumb).
    assert markdown("Troubleshooting > OutOfMemoryError when `Foo` runs *twice*") == [3]
    assert markdown("outofmemoryerror-when-foo-runs-twice") == [3]
    assert markdown("see-the-guide") == [7]
    assert markdown("see-the-manual") is None


BOXES = """\
impl From<&str> for Box<str> {
    fn from(s: &str) -> Self { todo!() }
}

impl From<&str> for Box<dyn Error> {
    fn from(s: &str) -> Self { todo!() }
}

impl From<String> for Box<str> {
    fn from(s: String) -> Self { todo!() }
}

impl Box<dyn Any> {
    fn downcast(self) {}
}

impl Box<dyn Any + Send> {
    fn downcast(self) {}
}
"""


def test_rust_impls_the_trait_cannot_tell_apart_are_picked_by_their_whole_header() -> None:
    assert lines("rust", BOXES, "Box.from(From<&str> for Box<str>)") == [2]
    assert lines("rust", BOXES, "Box.from(From<&str>  for  Box<dyn Error>)") == [6]
    assert lines("rust", BOXES, "Box.from(From<String>)") == [10]  # its trait is enough
    assert lines("rust", BOXES, "Box.from(From<&str>)") is None  # two have it: not a pick
    assert lines("rust", BOXES, "Box.downcast(Box<dyn Any + Send>)") == [18]
    assert lines("rust", BOXES, "Box.downcast") == (
        "ambiguous: Box.downcast(Box<dyn Any>) @14, Box.downcast(Box<dyn Any + Send>) @18"
    )
