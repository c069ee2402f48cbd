"""Same-named definitions through the real `moor` command: one symbol watched together,
or each picked by its own spelling; and `moor symbols`, which lists those spellings."""

from __future__ import annotations

from tests.conftest import Workspace

PROPERTY = """
class Box:
    @property
    def size(self):
        return self._size

    @size.setter
    def size(self, value):
        self._size = value
"""

JAVA = """
class Registry {
    Object lookup(Key key) {
        return table.get(key);
    }

    Object lookup(String name, int depth) {
        return table.find(name, depth);
    }
}
"""

RUST = """
struct Pattern;

impl Display for Pattern {
    fn fmt(&self, f: &mut Formatter) -> Result {
        write!(f, "display")
    }
}

impl Debug for Pattern {
    fn fmt(&self, f: &mut Formatter) -> Result {
        write!(f, "debug")
    }
}
"""


def test_a_property_and_its_setter_bind_as_one_symbol_and_an_edited_setter_drifts_it(
    ws: Workspace,
) -> None:
    ws.write("pkg/box.py", PROPERTY)
    ws.memory("size", "pkg/box.py#Box.size")
    assert ws.moor("bind").code == 0
    assert ws.state("memories/size.md") == "current"
    ws.write("pkg/box.py", PROPERTY.replace("self._size = value", "self._size = abs(value)"))
    assert ws.state("memories/size.md") == "drifted"


def test_overload_stubs_and_implementation_bind_together_where_a_redefinition_cannot(
    ws: Workspace,
) -> None:
    code = (
        "from typing import overload\n\n\n@overload\ndef parse(x: int) -> int: ...\n\n\n"
        "@overload\ndef parse(x: str) -> str: ...\n\n\ndef parse(x):\n    return x\n"
    )
    ws.write("pkg/p.py", code)
    ws.memory("parse", "pkg/p.py#parse")
    assert ws.moor("bind").code == 0
    ws.write("pkg/p.py", code.replace("x: str) -> str", "x: bytes) -> bytes"))
    assert ws.anchor("memories/parse.md")["state"] == "drifted"
    # Control: without the `@overload` markers the same three are a redefinition, and the
    # bare name is only the last (the one that runs): an edit of another leaves it be.
    plain = code.replace("@overload\n", "")
    ws.write("pkg/q.py", plain)
    ws.memory("q", "pkg/q.py#parse")
    assert ws.moor("bind", "memories/q.md").code == 0
    ws.write("pkg/q.py", plain.replace("x: str) -> str", "x: bytes) -> bytes"))
    assert ws.anchor("memories/q.md")["state"] == "current"


def test_a_java_overload_picked_by_parameter_types_ignores_an_edit_of_the_other(
    ws: Workspace,
) -> None:
    ws.write("src/Registry.java", JAVA)
    ws.memory("all", "src/Registry.java#Registry.lookup")
    ws.memory("key", "src/Registry.java#Registry.lookup(Key)")
    ws.memory("name", "src/Registry.java#Registry.lookup(String,  int)")
    assert ws.moor("bind").code == 0
    ws.write("src/Registry.java", JAVA.replace("find(name, depth)", "find(name, depth + 1)"))
    states = ws.states()
    assert states["memories/key.md"]["state"] == "current"
    # Control: the edited overload, and the bare name (every overload), drift.
    assert states["memories/name.md"]["state"] == "drifted"
    assert states["memories/all.md"]["state"] == "drifted"


def test_rust_methods_of_two_trait_impls_are_ambiguous_bare_and_picked_by_their_trait(
    ws: Workspace,
) -> None:
    ws.write("src/pattern.rs", RUST)
    ws.memory("bare", "src/pattern.rs#Pattern.fmt")
    ws.memory("display", "src/pattern.rs#Pattern.fmt(Display)")
    assert ws.moor("bind").code == 1
    bare = ws.anchor("memories/bare.md")
    assert bare["code"] == "ambiguous_symbol"
    assert "src/pattern.rs#Pattern.fmt(Display) (line 4)" in str(bare["detail"])
    assert "src/pattern.rs#Pattern.fmt(Debug) (line 10)" in str(bare["detail"])
    assert ws.state("memories/display.md") == "current"
    ws.write("src/pattern.rs", RUST.replace('"debug"', '"dbg"'))
    assert ws.state("memories/display.md") == "current"
    # Control: an edit of the Display impl's own body drifts it.
    ws.write("src/pattern.rs", RUST.replace('"display"', '"disp"'))
    assert ws.state("memories/display.md") == "drifted"


def test_rust_cfg_variants_bind_as_one_function_and_an_edit_of_either_drifts_it(
    ws: Workspace,
) -> None:
    code = (
        '#[cfg(unix)]\nfn home() -> &\'static str {\n    "/home"\n}\n\n'
        '#[cfg(windows)]\nfn home() -> &\'static str {\n    "C:/Users"\n}\n'
    )
    ws.write("src/home.rs", code)
    ws.memory("home", "src/home.rs#home")
    assert ws.moor("bind").code == 0
    ws.write("src/home.rs", code.replace("C:/Users", "D:/Users"))
    assert ws.state("memories/home.md") == "drifted"


def test_moor_symbols_lists_every_reference_that_names_a_definition(ws: Workspace) -> None:
    ws.write("src/Registry.java", JAVA)
    ws.write("src/pattern.rs", RUST)
    run = ws.moor("symbols", "src/Registry.java", check=True)
    assert run.out.splitlines() == [
        "src/Registry.java#Registry",
        "src/Registry.java#Registry.lookup",
        "src/Registry.java#Registry.lookup(Key)",
        "src/Registry.java#Registry.lookup(String, int)",
    ]
    listing = ws.moor("symbols", "src/pattern.rs", "--format", "json", check=True).json()
    assert listing["path"] == "src/pattern.rs"
    assert listing["symbols"] == [
        {
            "ref": "src/pattern.rs#Pattern",
            "kind": "struct",
            "line": 1,
            "end_line": 1,
            "variants": 1,
        },
        {
            "ref": "src/pattern.rs#Pattern(Display)",
            "kind": "impl",
            "line": 3,
            "end_line": 7,
            "variants": 1,
        },
        {
            "ref": "src/pattern.rs#Pattern(Debug)",
            "kind": "impl",
            "line": 9,
            "end_line": 13,
            "variants": 1,
        },
        {
            "ref": "src/pattern.rs#Pattern.fmt(Display)",
            "kind": "method",
            "line": 4,
            "end_line": 6,
            "variants": 1,
        },
        {
            "ref": "src/pattern.rs#Pattern.fmt(Debug)",
            "kind": "method",
            "line": 10,
            "end_line": 12,
            "variants": 1,
        },
    ]
    # Every listed reference binds.
    refs = [row["ref"] for row in listing["symbols"]]
    ws.memory("every", [*run.out.splitlines(), *refs])
    assert ws.moor("bind").code == 0


def test_moor_symbols_refuses_a_missing_file_or_one_without_a_grammar(ws: Workspace) -> None:
    ws.write("src/keep.txt", "")
    missing = ws.moor("symbols", "src/nope.py")
    assert missing.code == 2
    assert "src/nope.py: no such file" in missing.err
    ws.write("notes.txt", "plain text\n")
    plain = ws.moor("symbols", "notes.txt")
    assert plain.code == 2
    assert "no grammar" in plain.err
    outside = ws.moor("symbols", "../elsewhere.py")
    assert outside.code == 2
    folder = ws.moor("symbols", "src")
    assert folder.code == 2
    assert "src: a folder" in folder.err
    # Control: a file in a language moor parses lists its definitions.
    ws.write("src/a.py", "def f():\n    return 1\n")
    assert ws.moor("symbols", "src/a.py").out == "src/a.py#f\n"


def test_values_are_definitions_and_methods_in_constants_are_named_through_them(
    ws: Workspace,
) -> None:
    ws.write(
        "src/limits.ts",
        "export const limits = {\n  retries: 3,\n};\n\nclass Pool {\n  size = 4;\n}\n",
    )
    ws.write("src/Codecs.java", CODECS)
    listed = ws.moor("symbols", "src/Codecs.java", check=True).out.splitlines()
    assert "src/Codecs.java#Codecs.INT.decode" in listed
    assert "src/Codecs.java#Codecs.Mode.FAST.apply" in listed
    assert "src/Codecs.java#Codecs.Mode.apply" in listed  # the abstract one, alone
    ws.memory("limits", "src/limits.ts#limits")
    ws.memory("size", "src/limits.ts#Pool.size")
    ws.memory("int", "src/Codecs.java#Codecs.INT.decode")
    ws.memory("fast", "src/Codecs.java#Codecs.Mode.FAST.apply")
    assert ws.moor("bind").code == 0
    ws.write(
        "src/limits.ts",
        "export const limits = {\n  retries: 5,\n};\n\nclass Pool {\n  size = 4;\n}\n",
    )
    ws.write(
        "src/Codecs.java",
        ws.read("src/Codecs.java").replace("go(2)", "go(3)").replace("return 2", "return 3"),
    )
    states = ws.states()
    assert states["memories/limits.md"]["state"] == "drifted"
    assert states["memories/size.md"]["state"] == "current"
    # The other constant's and the other field's methods changed; these did not.
    assert states["memories/int.md"]["state"] == "current"
    assert states["memories/fast.md"]["state"] == "current"
    # Control: an edit inside FAST's own body drifts it.
    ws.write("src/Codecs.java", ws.read("src/Codecs.java").replace("go(1)", "go(0)"))
    assert ws.state("memories/fast.md") == "drifted"


CODECS = """
class Codecs {
    static final Codec INT = new Codec() {
        int decode() { return 1; }
    };
    static final Codec STR = new Codec() {
        int decode() { return 2; }
    };
    enum Mode {
        FAST { void apply() { go(1); } },
        SLOW { void apply() { go(2); } };
        abstract void apply();
    }
}
"""


def test_a_markdown_heading_with_markup_binds_by_visible_text_or_github_anchor(
    ws: Workspace,
) -> None:
    doc = '# Help\n\n## <a id="oom"></a> OutOfMemoryError when `Foo` runs\n\nRaise the heap.\n'
    ws.write("docs/help.md", doc)
    assert ws.moor("symbols", "docs/help.md", check=True).out.splitlines() == [
        "docs/help.md#Help",
        "docs/help.md#Help > OutOfMemoryError when Foo runs",
    ]
    ws.memory("visible", "docs/help.md#Help > OutOfMemoryError when Foo runs")
    ws.memory("anchor", "docs/help.md#outofmemoryerror-when-foo-runs")
    assert ws.moor("bind").code == 0
    ws.write("docs/help.md", doc.replace("Raise the heap.", "Lower the load."))
    states = ws.states()
    assert states["memories/visible.md"]["state"] == "drifted"
    assert states["memories/anchor.md"]["state"] == "drifted"


def test_an_explicit_html_anchor_in_a_heading_names_its_section(ws: Workspace) -> None:
    guide = (
        "# Guide\n\n"
        '## <a id="oom"></a> OutOfMemoryError when `Loader` runs\n\nRaise the heap.\n\n'
        "## Other\n\nUnrelated.\n"
    )
    ws.write("docs/guide.md", guide)
    ws.memory("oom", ["docs/guide.md#oom", "docs/guide.md##oom"])
    ws.moor("bind", check=True)
    assert ws.state("memories/oom.md") == "current"
    # The id outlives a reworded heading: a link to it still works, so the memory holds.
    ws.write("docs/guide.md", guide.replace("when `Loader` runs", "while loading"))
    assert ws.state("memories/oom.md") == "current"
    # Control: a change to the section's text drifts it.
    ws.write("docs/guide.md", guide.replace("Raise the heap.", "Lower the heap."))
    assert ws.state("memories/oom.md") == "drifted"
    # Control: an id no heading has names nothing.
    ws.memory("none", "docs/guide.md#nowhere")
    assert ws.state("memories/none.md") == "gone"


INITS = """
package reg

func init() {
	register("a")
}

func init() {
	register("b")
}
"""

REDEFINED = """
def handler(event):
    return event


def handler(event):
    return event.payload
"""


def test_each_go_init_and_a_python_redefinition_is_listed_and_binds_alone(
    ws: Workspace,
) -> None:
    ws.write("reg/reg.go", INITS)
    ws.write("app/h.py", REDEFINED)
    listing = ws.moor("symbols", "reg/reg.go", check=True).out.split()
    assert "reg/reg.go#init@1" in listing and "reg/reg.go#init@2" in listing
    assert "reg/reg.go#init" not in listing  # every init runs: the bare name is none of them
    assert ws.moor("symbols", "app/h.py", check=True).out.split() == [
        "app/h.py#handler",
        "app/h.py#handler@1",
    ]
    ws.memory("second", "reg/reg.go#init@2")
    ws.memory("live", "app/h.py#handler")
    ws.memory("replaced", "app/h.py#handler@1")
    ws.memory("bare", "reg/reg.go#init")
    run = ws.moor("bind")
    assert run.code == 1  # the bare `init` cannot be bound, and says how to pick one
    assert "write reg/reg.go#init@1 (line 3) or reg/reg.go#init@2 (line 7)" in run.out + run.err
    ws.write("reg/reg.go", INITS.replace('register("a")', 'register("A")'))
    ws.write("app/h.py", REDEFINED.replace("return event\n", "return [event]\n", 1))
    states = ws.states()
    # An edit of the other init, or of the replaced handler, leaves the picked one be.
    assert states["memories/second.md"]["state"] == "current"
    assert states["memories/live.md"]["state"] == "current"
    # Control: the definition each one names drifts when it is the one edited.
    assert states["memories/replaced.md"]["state"] == "drifted"
    ws.write("reg/reg.go", INITS.replace('register("b")', 'register("B")'))
    assert ws.state("memories/second.md") == "drifted"
