"""Moved, renamed and deleted code, through the real `moor` command."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from tests.conftest import Workspace

HELPERS = """
def checksum(data):
    total = 0
    for byte in data:
        total = (total * 31 + byte) % 65521
    return total


def unrelated():
    return 42
"""


def test_a_function_moved_to_another_file_is_moved_and_follow_fixes_the_reference(
    ws: Workspace,
) -> None:
    ws.write("pkg/util.py", HELPERS)
    ws.memory("sum", "pkg/util.py#checksum")
    ws.moor("bind", check=True)
    ws.write("pkg/util.py", "def unrelated():\n    return 42\n")
    ws.write("pkg/hashing.py", HELPERS.replace("def unrelated():\n    return 42\n", ""))
    anchor = ws.anchor("memories/sum.md")
    assert anchor["state"] == "moved"
    assert anchor["moved_to"] == "pkg/hashing.py#checksum"
    assert ws.moor("check").code == 1

    run = ws.moor("follow", "memories/sum.md")
    assert run.code == 0, run.err
    assert "pkg/hashing.py#checksum" in ws.read("memories/sum.md")
    assert "pkg/util.py#checksum" not in ws.read("memories/sum.md")
    assert ws.state("memories/sum.md") == "current"
    # Control: the followed anchor is really observed — changing the code drifts it.
    ws.write("pkg/hashing.py", HELPERS.replace("31", "37"))
    assert ws.state("memories/sum.md") == "drifted"


def test_a_function_renamed_with_an_identical_body_is_moved_as_renamed(ws: Workspace) -> None:
    ws.write("pkg/util.py", HELPERS)
    ws.memory("sum", "pkg/util.py#checksum")
    ws.moor("bind", check=True)
    ws.write("pkg/util.py", HELPERS.replace("def checksum", "def adler_like"))
    anchor = ws.anchor("memories/sum.md")
    assert anchor["state"] == "moved"
    assert anchor["moved_to"] == "pkg/util.py#adler_like"
    assert anchor["code"] == "renamed"
    ws.moor("follow", "memories/sum.md", check=True)
    assert ws.state("memories/sum.md") == "current"


def test_a_deleted_function_is_gone_not_unverified(ws: Workspace) -> None:
    ws.write("pkg/util.py", HELPERS)
    ws.memory("sum", "pkg/util.py#checksum")
    ws.memory("other", "pkg/util.py#unrelated")
    ws.moor("bind", check=True)
    ws.write("pkg/util.py", "def unrelated():\n    return 42\n")
    states = ws.states()
    assert states["memories/sum.md"]["state"] == "gone"
    # Control: the other memory in the same file is still observed and current.
    assert states["memories/other.md"]["state"] == "current"
    run = ws.moor("check")
    assert run.code == 1
    assert "gone" in run.out


def test_a_deleted_file_makes_its_whole_file_memory_gone(ws: Workspace) -> None:
    ws.write("docs/notes.txt", "alpha\nbeta\n")
    ws.memory("notes", "docs/notes.txt")
    ws.moor("bind", check=True)
    assert ws.state("memories/notes.md") == "current"
    (ws.root / "docs/notes.txt").unlink()
    assert ws.state("memories/notes.md") == "gone"


def test_a_renamed_file_is_followed_for_a_whole_file_reference(ws: Workspace) -> None:
    ws.write("docs/notes.txt", "alpha\nbeta\n")
    ws.memory("notes", "docs/notes.txt")
    ws.moor("bind", check=True)
    (ws.root / "docs/notes.txt").rename(ws.root / "docs/renamed.txt")
    anchor = ws.anchor("memories/notes.md")
    assert anchor["state"] == "moved"
    assert anchor["moved_to"] == "docs/renamed.txt"


def test_a_truly_ambiguous_name_is_unverified_and_lists_every_candidate_line(
    ws: Workspace,
) -> None:
    ws.write(
        "pkg/over.py",
        "def parse(x):\n    return x\n\n\nif FAST:\n    def parse(x, y):\n"
        "        return x + y\n\n\ndef ok():\n    return 1\n",
    )
    ws.memory("parse", "pkg/over.py#parse")
    ws.memory("ok", "pkg/over.py#ok")
    run = ws.moor("bind")
    assert run.code == 1
    assert "ambiguous_symbol" in run.err
    anchor = ws.anchor("memories/parse.md")
    assert anchor["state"] == "unverified"
    assert anchor["code"] == "ambiguous_symbol"
    assert "1, 6" in str(anchor["detail"])
    assert "pkg/over.py#parse@2 (line 6)" in str(anchor["detail"])  # the way to pick one
    # Control: the unambiguous neighbour binds and is current.
    assert ws.state("memories/ok.md") == "current"


PLATFORM = """
import sys

if sys.platform == "win32":
    def terminal_size():
        return query_console()
else:
    def terminal_size():
        return ioctl_size()
"""


def test_definitions_in_branches_of_one_conditional_are_one_symbol_not_an_ambiguity(
    ws: Workspace,
) -> None:
    ws.write("pkg/term.py", PLATFORM)
    ws.memory("size", "pkg/term.py#terminal_size")
    ws.moor("bind", check=True)
    ws.write("pkg/term.py", PLATFORM.replace("        return", "        # comment\n        return"))
    assert ws.state("memories/size.md") == "current"
    # Control: a change in either branch is drift.
    ws.write("pkg/term.py", PLATFORM.replace("ioctl_size", "stty_size"))
    assert ws.state("memories/size.md") == "drifted"


def test_a_class_renamed_behind_a_compatibility_alias_is_moved_to_the_new_name(
    ws: Workspace,
) -> None:
    ws.write("pkg/group.py", "class RenderGroup:\n    def render(self):\n        return 1\n")
    ws.memory("group", "pkg/group.py#RenderGroup")
    ws.moor("bind", check=True)
    ws.write(
        "pkg/group.py",
        "class Group:\n    def render(self):\n        return 1\n\n\nRenderGroup = Group\n",
    )
    anchor = ws.anchor("memories/group.md")
    assert anchor["state"] == "moved"
    assert anchor["moved_to"] == "pkg/group.py#Group"
    # Control: an assignment of something else is not taken for an alias.
    ws.write(
        "pkg/group.py",
        "class Group:\n    def render(self):\n        return 1\n\n\nRenderGroup = make(Group)\n",
    )
    assert ws.anchor("memories/group.md")["state"] == "drifted"


def test_following_code_that_also_changed_on_the_way_leaves_it_drifted(ws: Workspace) -> None:
    ws.write("pkg/util.py", HELPERS)
    ws.memory("sum", "pkg/util.py#checksum")
    ws.moor("bind", check=True)
    ws.write("pkg/util.py", "def unrelated():\n    return 42\n")
    moved = HELPERS.replace("def unrelated():\n    return 42\n", "")
    ws.write("pkg/hashing.py", moved.replace("65521", "65537"))
    anchor = ws.anchor("memories/sum.md")
    assert anchor["state"] == "moved" and anchor["axes"] == ["body"]
    ws.moor("follow", "memories/sum.md", check=True)
    after = ws.anchor("memories/sum.md")
    assert after["ref"] == "pkg/hashing.py#checksum"
    assert after["state"] == "drifted" and after["axes"] == ["body"]
    assert "-        total = (total * 31 + byte) % 65521" in ws.moor("diff", "memories/sum.md").out


def test_two_definitions_in_the_same_branch_are_a_redefinition_not_variants(
    ws: Workspace,
) -> None:
    same = (
        "import sys\n\nif sys.platform == 'win32':\n    def size():\n        return 1\n"
        "    def size():\n        return 2\n"
    )
    ws.write("pkg/term.py", same)
    ws.memory("size", "pkg/term.py#size")
    ws.moor("bind", check=True)
    # The second replaces the first: the bare name watches it alone.
    ws.write("pkg/term.py", same.replace("return 1", "return 3"))
    assert ws.state("memories/size.md") == "current"
    # Control: the same two definitions in two branches are one symbol, watched together.
    both = same.replace(
        "    def size():\n        return 2", "else:\n    def size():\n        return 2"
    )
    ws.write("pkg/term.py", both)
    ws.memory("branches", "pkg/term.py#size")
    ws.moor("bind", "memories/branches.md", check=True)
    ws.write("pkg/term.py", both.replace("return 1", "return 3"))
    assert ws.state("memories/branches.md") == "drifted"


def test_moved_code_is_never_looked_for_behind_a_symlink_leaving_the_workspace(
    ws: Workspace,
) -> None:
    outside = ws.root.parent / "elsewhere"
    outside.mkdir()
    (outside / "hashing.py").write_text(HELPERS, encoding="utf-8")
    (ws.root / "pkg").mkdir()
    (ws.root / "pkg" / "linked.py").symlink_to(outside / "hashing.py")
    ws.write("pkg/util.py", HELPERS)
    ws.memory("sum", "pkg/util.py#checksum")
    ws.moor("bind", check=True)
    ws.write("pkg/util.py", "def unrelated():\n    return 42\n")
    assert ws.anchor("memories/sum.md")["state"] == "gone"
    # Control: the same code in a real file of the workspace is found.
    ws.write("pkg/real.py", HELPERS)
    assert ws.anchor("memories/sum.md")["moved_to"] == "pkg/real.py#checksum"


def test_a_deleted_stub_is_gone_not_renamed_onto_another_stub(ws: Workspace) -> None:
    ws.write("pkg/hooks.py", "def on_start():\n    pass\n\n\ndef on_stop():\n    pass\n")
    ws.memory("start", "pkg/hooks.py#on_start")
    ws.moor("bind", check=True)
    ws.write("pkg/hooks.py", "def on_stop():\n    pass\n")
    assert ws.anchor("memories/start.md")["state"] == "gone"
    # Control: a body that says something is evidence of a rename.
    ws.write(
        "pkg/wrap.py",
        "class W:\n    def __getattr__(self, name):\n"
        "        return getattr(self._files[name.lower()], name, self._default)\n",
    )
    ws.memory("wrap", "pkg/wrap.py#W.__getattr__")
    ws.moor("bind", "memories/wrap.md", check=True)
    ws.write("pkg/wrap.py", ws.read("pkg/wrap.py").replace("class W:", "class _W:"))
    assert ws.anchor("memories/wrap.md")["moved_to"] == "pkg/wrap.py#_W.__getattr__"


def test_a_declared_default_beside_its_definition_is_one_symbol(ws: Workspace) -> None:
    source = (
        "wrap = None\n\ntry:\n    import colorama\nexcept ImportError:\n    pass\n"
        "else:\n    def wrap(stream):\n        return colorama.wrap(stream)\n"
    )
    ws.write("pkg/ansi.py", source)
    ws.memory("wrap", "pkg/ansi.py#wrap")
    ws.moor("bind", check=True)
    ws.write("pkg/ansi.py", source.replace("    def wrap", "    # wrap a stream\n    def wrap"))
    assert ws.state("memories/wrap.md") == "current"
    ws.write("pkg/ansi.py", source.replace("colorama.wrap(stream)", "colorama.wrap(stream, True)"))
    assert ws.state("memories/wrap.md") == "drifted"


FRAMING = """
def framed(text, width=72):
    lines = [text[at : at + width] for at in range(0, len(text), width)]
    top = "+" + "-" * width + "+"
    return "\\n".join([top, *("|" + line.ljust(width) + "|" for line in lines), top])
"""


def test_a_file_git_records_as_renamed_carries_its_definition_past_a_weaker_namesake(
    ws: Workspace,
) -> None:
    ws.git("init", "-q")
    ws.write("pkg/framing.py", FRAMING)
    ws.memory("framed", "pkg/framing.py#framed")
    ws.moor("bind", check=True)
    ws.git("add", "-A")
    ws.git("commit", "-qm", "bound")
    # A test helper elsewhere defines a `framed` of its own, a near copy (an unrelated
    # namesake is no evidence at all: test_namesake_is_not_a_move.py).
    ws.write("tests/helpers.py", FRAMING.replace("width=72", "width=80").replace("+", "*"))
    (ws.root / "pkg/agents").mkdir()
    # Control: a move git does not record (a new untracked file) leaves two namesakes and
    # nothing to tell them apart, so nothing is followed.
    (ws.root / "pkg/framing.py").rename(ws.root / "pkg/agents/framing.py")
    anchor = ws.anchor("memories/framed.md")
    assert anchor["state"] == "gone"
    assert "2 definitions have the same qualified name" in str(anchor["detail"])
    # Staged by `git mv` (here: the same move, recorded), the renamed file's definition is
    # the move.
    (ws.root / "pkg/agents/framing.py").rename(ws.root / "pkg/framing.py")
    ws.git("mv", "pkg/framing.py", "pkg/agents/framing.py")
    anchor = ws.anchor("memories/framed.md")
    assert (anchor["state"], anchor["moved_to"]) == ("moved", "pkg/agents/framing.py#framed")
    # Committed, it still is.
    ws.git("add", "-A")
    ws.git("commit", "-qm", "moved into agents/")
    anchor = ws.anchor("memories/framed.md")
    assert (anchor["state"], anchor["moved_to"]) == ("moved", "pkg/agents/framing.py#framed")
    # Then rewritten around it over a later commit (too unlike the bound file to be paired
    # with it across both commits at once): each commit's rename still carries it.
    rest = "".join(f"\n\ndef helper_{n}(x):\n    return x * {n} + {n * n}\n" for n in range(30))
    ws.write("pkg/agents/framing.py", FRAMING + rest)
    ws.git("add", "-A")
    ws.git("commit", "-qm", "grown")
    anchor = ws.anchor("memories/framed.md")
    assert (anchor["state"], anchor["moved_to"]) == ("moved", "pkg/agents/framing.py#framed")
    ws.moor("follow", "memories/framed.md", check=True)
    assert ws.state("memories/framed.md") == "current"


LIMITS = """
def lower_bound(value):
    return value if value is not None else 0


def _or_inf(value):
    return value if value is not None else INF


def upper_bound(value):
    return value if value is not None else INF
"""


def test_a_one_line_definition_renamed_where_it_stands_is_moved_and_a_deleted_twin_is_gone(
    ws: Workspace,
) -> None:
    ws.write("pkg/limits.py", LIMITS)
    ws.memory("inf", "pkg/limits.py#_or_inf")
    ws.memory("upper", "pkg/limits.py#upper_bound")
    ws.moor("bind", check=True)
    ws.write("pkg/limits.py", LIMITS.replace("def _or_inf", "def none_as_inf"))
    anchor = ws.anchor("memories/inf.md")
    assert (anchor["state"], anchor["moved_to"], anchor["code"]) == (
        "moved",
        "pkg/limits.py#none_as_inf",
        "renamed",
    )
    # Control: deleted, its twin (`upper_bound`, same signature and body, already there) is
    # never taken for it, and the twin's own memory is current.
    ws.write("pkg/limits.py", LIMITS.replace(LIMITS.split("\n\n\n")[1] + "\n\n\n", ""))
    assert "_or_inf" not in ws.read("pkg/limits.py")
    assert ws.anchor("memories/inf.md")["state"] == "gone"
    assert ws.state("memories/upper.md") == "current"


def test_a_rename_in_place_is_told_from_git_history_in_a_clone_without_the_journal(
    ws: Workspace,
) -> None:
    ws.git("init", "-q")
    ws.write("pkg/limits.py", LIMITS)
    ws.memory("inf", "pkg/limits.py#_or_inf")
    ws.moor("bind", check=True)
    ws.git("add", "-A")
    ws.git("commit", "-qm", "bound")
    ws.write("pkg/limits.py", LIMITS.replace("def _or_inf", "def none_as_inf"))
    shutil.rmtree(ws.root / ".moor")
    anchor = ws.anchor("memories/inf.md")
    assert (anchor["state"], anchor["moved_to"]) == ("moved", "pkg/limits.py#none_as_inf")
    # Control: renamed to a place between other neighbours, it is not the same place.
    shutil.rmtree(ws.root / ".moor")
    moved = LIMITS.replace(LIMITS.split("\n\n\n")[1] + "\n\n\n", "") + (
        "\n\ndef none_as_inf(value):\n    return value if value is not None else INF\n"
    )
    ws.write("pkg/limits.py", moved)
    assert ws.anchor("memories/inf.md")["state"] == "gone"


def test_check_says_a_moved_definition_also_changed_on_the_way(ws: Workspace) -> None:
    ws.write("pkg/util.py", HELPERS)
    ws.memory("sum", "pkg/util.py#checksum")
    ws.moor("bind", check=True)
    moved = HELPERS.replace("def unrelated():\n    return 42\n", "")
    ws.write("pkg/util.py", "def unrelated():\n    return 42\n")
    # Control: moved unchanged, it says moved and nothing more.
    ws.write("pkg/hashing.py", moved)
    run = ws.moor("check")
    assert "moved: now pkg/hashing.py#checksum —" in run.out, run.out
    assert "changed" not in run.out
    ws.write("pkg/hashing.py", moved.replace("31", "37"))
    run = ws.moor("check")
    assert "moved: now pkg/hashing.py#checksum, and its body changed" in run.out, run.out


def test_follow_with_nothing_to_follow_is_a_no_op_that_says_so_and_exits_0(ws: Workspace) -> None:
    ws.write("pkg/util.py", HELPERS)
    ws.memory("sum", "pkg/util.py#checksum")
    ws.moor("bind", check=True)
    lock = (ws.root / "moor.lock").read_bytes()
    run = ws.moor("follow", "memories/sum.md")
    assert run.code == 0, run.err
    assert "nothing moved, nothing to follow: a no-op, not a refusal" in run.out
    assert (ws.root / "moor.lock").read_bytes() == lock
    # Control: a follow that is refused says so and exits 1, as docs/cli.md says.
    run = ws.moor("follow", "memories/sum.md", "--to", "pkg/util.py#missing")
    assert run.code == 1
    assert "say which reference goes to pkg/util.py#missing" in run.err
    table = (Path(__file__).resolve().parents[2] / "docs/cli.md").read_text(encoding="utf-8")
    row = next(line for line in table.splitlines() if line.startswith("| `moor follow"))
    assert row.rstrip(" |").endswith("0 when nothing moved (a no-op, said so); 1 if refused")


FEATURES = """
class Factory:
    def set_feature(self, name, value):
        if name is None:
            raise ValueError("the feature name is missing")
        self.features[name] = bool(value)
        self.changed = True

    def get_feature(self, name):
        if name is None:
            raise ValueError("the feature name is missing")
        return self.features[name]
"""


def test_deleted_code_offers_no_sibling_that_stood_beside_it_as_where_it_went(
    ws: Workspace,
) -> None:
    ws.write("pkg/factory.py", FEATURES)
    ws.memory("set", "pkg/factory.py#Factory.set_feature")
    ws.moor("bind", check=True)
    deleted = FEATURES.split("    def get_feature")[0].split("    def set_feature")[0] + (
        "    def get_feature" + FEATURES.split("    def get_feature")[1]
    )
    ws.write("pkg/factory.py", deleted)
    anchor = ws.anchor("memories/set.md")
    assert (anchor["state"], anchor["candidates"]) == ("gone", [])
    run = ws.moor("check")
    assert "perhaps now" not in run.out and "moor follow" not in run.out, run.out
    # Control: the same code renamed, with a small edit, is offered (and first).
    ws.write(
        "pkg/factory.py",
        FEATURES.replace("def set_feature", "def put_feature").replace("bool(value)", "value"),
    )
    anchor = ws.anchor("memories/set.md")
    assert anchor["state"] == "gone"
    assert anchor["candidates"][0]["ref"] == "pkg/factory.py#Factory.put_feature"
    assert "moor follow memories/set.md --from" in ws.moor("check").out


ENTITIES = """
public class Entities {
    static void escape(Appendable accum, String string, boolean inAttribute) throws IOException {
        for (int offset = 0; offset < string.length(); offset++) {
            char c = string.charAt(offset);
            if (c == '&') {
                accum.append("&amp;");
            } else if (c == '<' && !inAttribute) {
                accum.append("&lt;");
            } else {
                accum.append(c);
            }
        }
    }

    static String escape(String string) {
        StringBuilder accum = new StringBuilder();
        escape(accum, string, false);
        return accum.toString();
    }
}
"""


def test_a_java_overload_whose_parameter_type_changed_is_that_overload_not_the_group(
    ws: Workspace,
) -> None:
    ws.write("src/Entities.java", ENTITIES)
    ws.memory("esc", "src/Entities.java#Entities.escape(Appendable, String, boolean)")
    ws.memory("short", "src/Entities.java#Entities.escape(String)")
    ws.moor("bind", check=True)
    ws.write("src/Entities.java", ENTITIES.replace("(Appendable accum", "(QuietAppendable accum"))
    anchor = ws.anchor("memories/esc.md")
    assert (anchor["state"], anchor["moved_to"], anchor["axes"]) == (
        "moved",
        "src/Entities.java#Entities.escape(QuietAppendable, String, boolean)",
        ["signature"],
    )
    # Control: the overload that did not change is current.
    assert ws.state("memories/short.md") == "current"
    ws.moor("follow", "memories/esc.md", check=True)
    after = ws.anchor("memories/esc.md")
    assert after["ref"] == "src/Entities.java#Entities.escape(QuietAppendable, String, boolean)"
    assert (after["state"], after["axes"]) == ("drifted", ["signature"])


def test_the_outline_of_a_file_is_sealed_once_for_all_the_anchors_bound_in_it(
    ws: Workspace,
) -> None:
    ws.write("pkg/limits.py", LIMITS)
    ws.write("pkg/other.py", LIMITS.replace("_or_inf", "_or_nan"))
    ws.memory("inf", "pkg/limits.py#_or_inf")
    ws.memory("upper", "pkg/limits.py#upper_bound")
    ws.memory("lower", "pkg/limits.py#lower_bound")
    ws.moor("bind", check=True)

    def outlines() -> int:
        with sqlite3.connect(ws.root / ".moor" / "journal.sqlite") as db:
            query = "SELECT count(*) FROM snapshots WHERE address LIKE 'outline:%'"
            return int(db.execute(query).fetchone()[0])

    assert outlines() == 1
    # Control: an anchor in another file seals that file's outline.
    ws.memory("nan", "pkg/other.py#_or_nan")
    ws.moor("bind", check=True)
    assert outlines() == 2


def test_follow_to_a_whole_overload_group_is_refused_listing_its_overloads(
    ws: Workspace,
) -> None:
    ws.write("src/Entities.java", ENTITIES)
    ws.memory("esc", "src/Entities.java#Entities.escape(Appendable, String, boolean)")
    ws.moor("bind", check=True)
    ws.write("src/Entities.java", ENTITIES.replace("(Appendable accum", "(QuietAppendable accum"))
    lock = ws.read("moor.lock")
    run = ws.moor("follow", "memories/esc.md", "--to", "src/Entities.java#Entities.escape")
    assert run.code == 1, run.out + run.err
    said = run.out + run.err
    assert "Entities.escape names 2 overloads" in said, said
    assert "Entities.escape(QuietAppendable, String, boolean)" in said
    assert "Entities.escape(String)" in said
    assert ws.read("moor.lock") == lock  # nothing was written
    # Control: naming one overload is followed.
    one = "src/Entities.java#Entities.escape(QuietAppendable, String, boolean)"
    ws.moor("follow", "memories/esc.md", "--to", one, check=True)
    assert ws.anchor("memories/esc.md")["ref"] == one
