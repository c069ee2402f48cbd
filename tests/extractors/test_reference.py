"""`about:` reference grammar (docs/memories.md) and workspace confinement of paths."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from moor_extractors.model import Failure, Reason
from moor_extractors.reference import (
    Reference,
    normalise_path,
    parse_reference,
    resolve_path,
)


def ok(raw: str) -> Reference:
    parsed = parse_reference(raw)
    assert isinstance(parsed, Reference), parsed
    return parsed


def refused(raw: str) -> Failure:
    parsed = parse_reference(raw)
    assert isinstance(parsed, Failure), parsed
    assert parsed.reason is Reason.UNEVALUABLE
    assert parsed.detail  # a clear message, never empty
    return parsed


# --- grammar ----------------------------------------------------------------------------------


def test_a_bare_path_refers_to_the_whole_file() -> None:
    ref = ok("store/moor_store/journal.py")
    assert ref == Reference(path="store/moor_store/journal.py", symbol=None, anchor=None)
    assert ref.canonical() == "store/moor_store/journal.py"


def test_path_hash_symbol_names_a_qualified_symbol() -> None:
    ref = ok("store/moor_store/journal.py#Journal.append")
    assert ref.path == "store/moor_store/journal.py"
    assert ref.symbol == "Journal.append"
    assert ref.anchor is None
    assert ref.canonical() == "store/moor_store/journal.py#Journal.append"


def test_anchor_prefix_names_a_custom_anchor() -> None:
    ref = ok("anchor:test-roster")
    assert ref == Reference(path=None, symbol=None, anchor="test-roster")
    assert ref.canonical() == "anchor:test-roster"


def test_an_invalid_anchor_name_is_refused() -> None:
    assert refused("anchor:").code == "bad_reference"
    assert refused("anchor:has space").code == "bad_reference"
    assert refused("anchor:a/b").code == "bad_reference"
    assert ok("anchor:my_anchor.v2").anchor == "my_anchor.v2"


def test_the_same_reference_written_differently_has_one_canonical_form() -> None:
    spellings = ["./src/a.py#C.m", "src/./a.py#C.m", "src//a.py#C.m", "src/a.py#C.m"]
    assert {ok(s).canonical() for s in spellings} == {"src/a.py#C.m"}
    assert ok("src/a.py#C.n").canonical() != "src/a.py#C.m"  # positive control


def test_the_canonical_form_parses_back_to_the_same_reference() -> None:
    for raw in ["./a/b.py#X.y", "docs/x.md#A>B", "anchor:n", "a.py"]:
        ref = ok(raw)
        assert ok(ref.canonical()) == ref


def test_markdown_breadcrumbs_are_normalised_around_the_separator() -> None:
    for raw in [
        "docs/a.md#Storage>Journal",
        "docs/a.md#Storage  >   Journal",
        "docs/a.md# Storage > Journal",
    ]:
        assert ok(raw).symbol == "Storage > Journal"
    assert ok("docs/A.MARKDOWN#Top >Sub  heading").symbol == "Top > Sub heading"
    assert ok("docs/a.md#Storage > Journal").is_markdown
    # Code symbols are not breadcrumbs: '>' is not a separator there.
    assert not ok("src/a.py#Journal").is_markdown


def test_a_breadcrumb_with_an_empty_level_is_refused() -> None:
    assert refused("docs/a.md#A > > B").code == "bad_reference"
    assert refused("docs/a.md#> A").code == "bad_reference"
    assert ok("docs/a.md#A > B").symbol == "A > B"


def test_a_hash_inside_the_symbol_belongs_to_the_symbol() -> None:
    assert ok("docs/lang.md#C# tips").symbol == "C# tips"


def test_an_empty_reference_is_refused() -> None:
    assert refused("").code == "bad_reference"
    assert refused("   ").code == "bad_reference"
    assert ok("a.py").path == "a.py"


def test_an_empty_symbol_after_the_hash_is_refused() -> None:
    assert "empty symbol" in refused("src/a.py#").detail
    assert refused("src/a.py#   ").code == "bad_reference"
    assert ok("src/a.py#f").symbol == "f"


def test_a_symbol_without_a_path_is_refused() -> None:
    assert refused("#Journal.append").code == "bad_reference"
    assert ok("j.py#Journal.append").symbol == "Journal.append"


def test_a_code_symbol_with_an_empty_level_or_whitespace_is_refused() -> None:
    for raw in ["a.py#Journal..append", "a.py#.append", "a.py#Journal.", "a.py#Jour nal"]:
        assert refused(raw).code == "bad_reference", raw
    assert ok("a.py#outer.inner.deep").symbol == "outer.inner.deep"


def test_a_parenthesised_list_after_the_last_level_may_hold_normalised_whitespace() -> None:
    assert ok("R.java#Registry.lookup(String,   int)").symbol == "Registry.lookup(String, int)"
    assert ok("R.java#R.put( Map< K ,V > ,int [] )").symbol == "R.put(Map<K, V>, int[])"
    assert ok("a.rs#B.f(From<&str>  for Box<dyn Error + 'a>)").symbol == (
        "B.f(From<&str> for Box<dyn Error + 'a>)"
    )
    assert ok("R.java#R.run()").symbol == "R.run()"
    assert ok("a.ts#f(keyof T)").symbol == "f(keyof T)"  # a space between words is meaning
    assert ok("a.rs#Pattern.fmt(fmt::Display)").symbol == "Pattern.fmt(fmt::Display)"
    # Each canonical form is its own fixed point.
    for raw in ["R.java#R.put(Map<K, V>, int[])", "a.ts#f(keyof T, (x: number) => void)"]:
        assert ok(ok(raw).canonical()).canonical() == ok(raw).canonical()


def test_a_spelling_pasted_from_another_tool_is_canonical_as_its_language_reads_it() -> None:
    assert ok("src/x.rs#Client::send").canonical() == "src/x.rs#Client.send"
    assert ok("a.go#(*List).Push").symbol == "List.Push"
    assert ok("a.go#(List[T]).Push").symbol == "List.Push"
    assert ok("A.java#Outer/Inner.run(String)").symbol == "Outer.Inner.run(String)"
    assert ok("a.py#Client/send").symbol == "Client.send"
    # Only the name: a Rust trait path inside the picking list stays as written.
    assert ok("a.rs#Pattern::fmt(fmt::Display)").symbol == "Pattern.fmt(fmt::Display)"
    # Controls: a string or computed key is a name as it stands, and a file with no
    # language (or a Markdown heading) has no other tool's spelling.
    assert ok('a.js#A."a/b"').symbol == 'A."a/b"'
    assert ok('a.js#A.["c::d"]').symbol == 'A.["c::d"]'
    assert ok("notes.txt#A::b").symbol == "A::b"
    assert ok("doc.md#Setup / Linux").symbol == "Setup / Linux"
    refused = parse_reference("a.rs#::send")
    assert isinstance(refused, Failure) and refused.code == "bad_reference"
    assert "'::send' has an empty level" in refused.detail  # as written, not as rewritten


def test_whitespace_outside_the_parenthesised_list_or_unbalanced_brackets_are_refused() -> None:
    for raw in [
        "R.java#R.my method(int)",
        "R.java#R.run (int)",
        "R.java#R.run(Map<K, int)",
        "R.java#R.run(int,)",
        "R.java#R.run(,)",
    ]:
        assert refused(raw).code == "bad_reference", raw
    assert ok("R.java#R.run(int)").symbol == "R.run(int)"


def test_whitespace_only_or_padded_path_parts_are_refused() -> None:
    for raw in ["src/ /a.py", " src/a.py", "src/a.py ", "src /a.py", "src/a.py #f"]:
        assert refused(raw).code == "bad_reference", raw
    assert ok("my docs/a file.md").path == "my docs/a file.md"


def test_backslash_separators_are_refused() -> None:
    failure = refused("src\\moor\\a.py")
    assert failure.code == "bad_reference"
    assert "/" in failure.detail
    assert ok("src/moor/a.py").path == "src/moor/a.py"


@pytest.mark.parametrize("char", ["\x00", "\x01", "\t", "\n", "\x7f", "\x9b", "\u202e", "\u2028"])
def test_control_and_bidi_characters_are_refused(char: str) -> None:
    assert refused(f"src/a{char}b.py").code == "bad_reference"
    assert refused(f"src/ab.py#f{char}").code == "bad_reference"
    assert ok("src/ab.py#f").symbol == "f"


@pytest.mark.parametrize(
    "raw", ["/etc/passwd", "//host/share/a.py", "C:\\x", "C:/x", "c:x.py", "\\x.py", "~/a.py"]
)
def test_absolute_paths_are_refused_as_outside_the_workspace(raw: str) -> None:
    failure = refused(raw)
    assert failure.code == "outside_workspace"
    assert ok("etc/passwd").path == "etc/passwd"


def test_dot_dot_climbing_out_of_the_workspace_is_outside_the_workspace() -> None:
    assert refused("../outside.py").code == "outside_workspace"
    assert refused("a/../../outside.py").code == "outside_workspace"
    assert refused("a/../b/../../c.py#f").code == "outside_workspace"
    assert ok("a/b/outside.py").path == "a/b/outside.py"


def test_dot_dot_that_stays_inside_is_still_refused_as_malformed() -> None:
    failure = refused("a/../b.py")
    assert failure.code == "bad_reference"
    assert ".." in failure.detail
    assert ok("b.py").path == "b.py"


def test_a_path_naming_only_the_workspace_root_is_refused() -> None:
    assert refused(".").code == "bad_reference"
    assert refused("./").code == "bad_reference"
    assert ok("./a.py").path == "a.py"


def test_a_url_is_not_a_reference() -> None:
    assert refused("https://example.com/a.py").code == "bad_reference"
    assert ok("example.com/a.py").path == "example.com/a.py"


def test_normalise_path_drops_dot_and_empty_segments() -> None:
    assert normalise_path("./a//b/./c.md") == "a/b/c.md"
    assert normalise_path("a/b/") == "a/b"
    bad = normalise_path("../x.md")
    assert isinstance(bad, Failure) and bad.code == "outside_workspace"


def test_parse_reference_never_raises_on_odd_strings() -> None:
    odd = ["#", "##", "anchor", "anchor:#", "a.py##", "\ud800", "a" * 10_000, "é/ü.py#ñ", ">", ".."]
    for raw in odd:
        result = parse_reference(raw)
        assert isinstance(result, Reference | Failure)
    assert ok("é/ü.py#ñ").canonical() == "é/ü.py#ñ"


# --- resolve_path -----------------------------------------------------------------------------


def test_resolve_path_returns_the_real_location_inside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    resolved = resolve_path(tmp_path, "src/a.py")
    assert resolved == (tmp_path / "src" / "a.py").resolve()


def test_resolve_path_accepts_a_missing_file_so_that_it_is_observed_as_not_found(
    tmp_path: Path,
) -> None:
    resolved = resolve_path(tmp_path, "src/gone.py")
    assert isinstance(resolved, Path)
    assert not resolved.exists()


def test_resolve_path_refuses_dot_dot_and_absolute_paths(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "outside.py").write_text("secret = 1\n")
    for rel in ["../outside.py", "/etc/passwd", str(tmp_path / "outside.py")]:
        failure = resolve_path(workspace, rel)
        assert isinstance(failure, Failure), rel
        assert failure.code == "outside_workspace"
    (workspace / "inside.py").write_text("x = 1\n")
    assert isinstance(resolve_path(workspace, "inside.py"), Path)


def test_a_symlink_inside_the_workspace_pointing_outside_is_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (tmp_path / "secret.py").write_text("password = 'x'\n")
    os.symlink(tmp_path / "secret.py", workspace / "src" / "leak.py")
    os.symlink(tmp_path, workspace / "up")  # a directory link leaving the root
    for rel in ["src/leak.py", "up/secret.py"]:
        failure = resolve_path(workspace, rel)
        assert isinstance(failure, Failure), rel
        assert failure.code == "outside_workspace"
        assert failure.reason is Reason.UNEVALUABLE
    # Positive control: a symlink that stays inside the workspace is followed.
    (workspace / "src" / "real.py").write_text("x = 1\n")
    os.symlink(workspace / "src" / "real.py", workspace / "alias.py")
    assert resolve_path(workspace, "alias.py") == (workspace / "src" / "real.py").resolve()


def test_a_workspace_reached_through_a_symlink_is_still_the_workspace(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.py").write_text("x = 1\n")
    os.symlink(real, tmp_path / "link")
    assert resolve_path(tmp_path / "link", "a.py") == (real / "a.py").resolve()
    failure = resolve_path(tmp_path / "link", "../real/a.py")
    assert isinstance(failure, Failure) and failure.code == "outside_workspace"


def _finishes(call: Callable[[], object], timeout: float = 60.0) -> object:
    """Run `call` in a daemon thread; fail the test if it blocks (e.g. by opening a FIFO):
    a hang guard (a blocked open never ends), generous for a loaded machine."""
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(call()), daemon=True)
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), "resolve_path blocked: it opened the target"
    return result[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_resolve_path_never_opens_the_target(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # Opening a FIFO for reading blocks until a writer appears: resolving must not open it.
    os.mkfifo(tmp_path / "outside.fifo")
    os.symlink(tmp_path / "outside.fifo", workspace / "pipe.py")
    refusal = _finishes(lambda: resolve_path(workspace, "pipe.py"))
    assert isinstance(refusal, Failure) and refusal.code == "outside_workspace"
    # An unreadable file outside: refused as outside, never a permission error.
    (tmp_path / "locked.py").write_text("x = 1\n")
    (tmp_path / "locked.py").chmod(0)
    os.symlink(tmp_path / "locked.py", workspace / "locked.py")
    refusal = _finishes(lambda: resolve_path(workspace, "locked.py"))
    assert isinstance(refusal, Failure) and refusal.code == "outside_workspace"
    # Positive control: a FIFO and an unreadable file inside resolve without blocking.
    os.mkfifo(workspace / "inside.fifo")
    (workspace / "inside_locked.py").write_text("x = 1\n")
    (workspace / "inside_locked.py").chmod(0)
    inside = _finishes(lambda: resolve_path(workspace, "inside.fifo"))
    assert inside == (workspace / "inside.fifo").resolve()
    assert isinstance(inside, Path) and stat.S_ISFIFO(os.lstat(inside).st_mode)
    locked = _finishes(lambda: resolve_path(workspace, "inside_locked.py"))
    assert locked == (workspace / "inside_locked.py").resolve()
    (tmp_path / "locked.py").chmod(0o600)
    (workspace / "inside_locked.py").chmod(0o600)


def test_a_symlink_loop_is_not_a_crash(tmp_path: Path) -> None:
    os.symlink(tmp_path / "loop2", tmp_path / "loop1")
    os.symlink(tmp_path / "loop1", tmp_path / "loop2")
    result = resolve_path(tmp_path, "loop1")
    assert isinstance(result, Path | Failure)
    (tmp_path / "fine.py").write_text("")
    assert isinstance(resolve_path(tmp_path, "fine.py"), Path)
