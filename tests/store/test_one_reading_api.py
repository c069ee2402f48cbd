"""Every file moor reads goes through `moor_store.inside` (or, for moor's own installed
source, `moor_store.own_files`): no package above the store opens a file itself. A raw
read is easy to write by accident — `path.read_bytes()` follows a link out of the
workspace and blocks forever on a FIFO — so the source of every package but the store is
scanned for one, and each is named by file and line. The few that are justified are listed
below, each with its reason."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGES = ("extractors", "engine", "lsp", "mcp", "cli")

# Modules whose `open`-like functions are raw file access, by module and name.
RAW_FUNCTIONS = {
    "builtins": {"open"},
    "io": {"open", "open_code", "FileIO"},
    "os": {"open", "fdopen", "openpty"},
    "codecs": {"open"},
    "tomllib": {"load"},
    "json": {"load"},
    "pickle": {"load"},
    "marshal": {"load"},
    "sqlite3": {"connect"},
    "shutil": {"copy", "copy2", "copyfile", "copyfileobj", "copytree"},
    "linecache": {"getline", "getlines"},
    "fileinput": {"input"},
    "mmap": {"mmap"},
}
# Methods that read or write a whole file, whatever they are called on (pathlib's).
RAW_METHODS = {"read_text", "read_bytes", "write_text", "write_bytes"}
# `.open(...)` is pathlib's `Path.open` when it is called as pathlib calls it: no argument,
# a mode string first, or one of its keywords. moor's own `Session.open(root)`,
# `Workspace.open(start)` and a token writer's `writer.open(kind, field)` are not.
OPEN_KEYWORDS = {"mode", "buffering", "encoding", "errors", "newline"}
MODE = set("rwxabt+")

# (file, enclosing function) -> why that raw access is right. "*": the whole module.
ALLOWED = {
    # A tree-sitter grammar package's own query file: an installed package, never a
    # workspace's. extractors do not import the store (ARCHITECTURE.md, layers).
    ("extractors/moor_extractors/languages.py", "_tags_source"): "grammar package file",
    # moor's own installed metadata (`moor_memory-*.dist-info/METADATA` on `sys.path`), read
    # for `moor --version` before the store is imported, as `importlib.metadata` would.
    ("engine/moor_engine/workspace/distribution.py", "_dist_info_version"): "own metadata",
    # The MCP HTTP bearer token: moor's own secret, in `.moor/` (reached through
    # `open_inside_dir`) or a `--token-file` the user names, which may be anywhere. Opened
    # by descriptor, O_NOFOLLOW, and refused unless a regular file (tests/mcp).
    ("mcp/moor_mcp/bearer.py", "*"): "the token file, a user-named path",
    # The user's list of trusted workspaces, kept in their state folder outside every
    # workspace (one inside is refused before it is read or written), O_NOFOLLOW, regular
    # files only, replaced atomically (tests/cli/test_anchor_trust.py).
    ("engine/moor_engine/anchors/trust.py", "*"): "the user's trust list, outside workspaces",
    # Descriptors of folders (the workspace root, `.moor/`) opened O_DIRECTORY|O_NOFOLLOW
    # to reach the hook server's socket; nothing is read. The hook client answers before
    # moor_store is imported, to start fast.
    ("cli/moor/hook_client.py", "state_folder"): "folder descriptors, nothing read",
    ("cli/moor/hook_client.py", "connect"): "the current folder, to come back to",
    # The hook server's lock file in `.moor/` (a descriptor from `open_inside_dir`),
    # O_NOFOLLOW, only ever flock'ed; and the current folder, to come back to.
    ("cli/moor/hook_server.py", "serve"): "the guard lock, never read",
    ("cli/moor/hook_server.py", "_listen"): "the current folder, to come back to",
    # /dev/null as stdout once the reader went away (`moor log | head`).
    ("cli/moor/guard.py", "run_guarded"): "/dev/null",
    # The language server's test-only clock: a number in a file the test names through the
    # server's environment (no client can set it), outside any workspace; read as a float.
    ("lsp/moor_lsp/clock.py", "now"): "a test's clock file, not workspace content",
    # The MCP stdio server's own stdin, taken as a file (a descriptor moor was given) with
    # /dev/null put in its place, so no other code reads the wire.
    ("mcp/moor_mcp/stdio.py", "_claimed_stdin"): "stdin and /dev/null, not files",
}


@dataclass(frozen=True)
class RawAccess:
    path: str
    line: int
    function: str  # the enclosing function's name ("" at module level)
    call: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.call} (in {self.function or 'the module'})"


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _is_path_open(call: ast.Call, func: ast.Attribute) -> bool:
    if _dotted(func.value) in ("Path", "pathlib.Path", "PurePath"):
        return True  # `Path.open(p)`, the unbound method
    if any(k.arg in OPEN_KEYWORDS for k in call.keywords):
        return True
    if not call.args:
        return not call.keywords
    first = call.args[0]
    return (
        isinstance(first, ast.Constant)
        and isinstance(first.value, str)
        and bool(first.value)
        and set(first.value) <= MODE
    )


class _Scanner(ast.NodeVisitor):
    def __init__(self, path: str) -> None:
        self.path = path
        self.found: list[RawAccess] = []
        self.functions: list[str] = []
        self.aliases: dict[str, str] = {}  # local name -> "module.function" it stands for

    def _report(self, node: ast.AST, text: str) -> None:
        function = self.functions[-1] if self.functions else ""
        self.found.append(RawAccess(self.path, getattr(node, "lineno", 0), function, text))

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if node.module in RAW_FUNCTIONS and alias.name in RAW_FUNCTIONS[node.module]:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                self._report(node, f"from {node.module} import {alias.name}")

    def visit_Call(self, node: ast.Call) -> None:
        if self._raw(node):
            self._report(node, ast.unparse(node)[:100])
        self.generic_visit(node)

    def _raw(self, call: ast.Call) -> bool:
        func = call.func
        name = _dotted(func)
        if name == "open" or name in self.aliases:
            return True
        module, _dot, attr = (name or "").rpartition(".")
        if module in RAW_FUNCTIONS and attr in RAW_FUNCTIONS[module]:
            return True
        if not isinstance(func, ast.Attribute):
            return False
        # Also on an expression (`(a / b).read_bytes()`), not only on a name.
        return func.attr in RAW_METHODS or (func.attr == "open" and _is_path_open(call, func))


def raw_accesses(source: str, path: str) -> list[RawAccess]:
    scanner = _Scanner(path)
    scanner.visit(ast.parse(source, filename=path))
    return scanner.found


def _allowed(found: RawAccess) -> bool:
    return (found.path, found.function) in ALLOWED or (found.path, "*") in ALLOWED


def _package_files() -> list[Path]:
    files = [f for package in PACKAGES for f in sorted((REPOSITORY / package).rglob("*.py"))]
    assert len(files) > 100  # the scan looked where the code is
    return files


def test_no_package_but_the_store_reads_or_writes_a_file_itself() -> None:
    found = []
    for file in _package_files():
        rel = file.relative_to(REPOSITORY).as_posix()
        found += raw_accesses(file.read_text(encoding="utf-8"), rel)
    forbidden = [str(f) for f in found if not _allowed(f)]
    assert not forbidden, (
        "read through moor_store.inside (read_inside, stat_inside, open_inside_dir), or, "
        "for moor's own installed source, moor_store.own_files; a justified exception goes "
        "in ALLOWED with its reason:\n" + "\n".join(forbidden)
    )
    # Every exception is still needed: one that matches nothing is a stale licence (one
    # for a module this branch does not have yet waits for it).
    used = {(f.path, f.function) for f in found} | {(f.path, "*") for f in found}
    stale = {entry for entry in set(ALLOWED) - used if (REPOSITORY / entry[0]).exists()}
    assert not stale, stale


PLANTED = textwrap.dedent(
    """
    import io, os, codecs, json, tomllib, sqlite3, shutil, pathlib
    from os import open as os_open
    from pathlib import Path

    def reads(path, root, name):
        open(path)
        io.open(path)
        os.open(path, os.O_RDONLY)
        os.fdopen(3)
        codecs.open(path)
        os_open(path, 0)
        path.read_text()
        path.read_bytes()
        (root / name).read_bytes()
        Path(name).read_text(encoding="utf-8")
        path.write_text("x")
        path.write_bytes(b"x")
        path.open()
        path.open("rb")
        path.open(encoding="utf-8")
        Path.open(path)
        tomllib.load(path.open("rb"))
        json.load(handle)
        sqlite3.connect(path)
        shutil.copy(path, name)

    def fine(session, writer, field, root):
        session.open(root)
        writer.open("modifiers", field)
        Session.open(root)
    """
)


def _body(function: str) -> set[str]:
    """The statements of a function of PLANTED, one per line."""
    body = PLANTED.split(f"def {function}(")[1].split("\ndef ")[0]
    return {line.strip() for line in body.splitlines()[1:] if line.strip()}


def test_the_scan_flags_every_raw_form_and_leaves_other_open_methods_alone() -> None:
    found = raw_accesses(PLANTED, "planted.py")
    lines = PLANTED.splitlines()
    flagged = {lines[f.line - 1].strip() for f in found}
    assert "from os import open as os_open" in flagged
    raw = _body("reads")
    assert len(raw) == 20 and raw <= flagged, raw - flagged  # every form, each on its line
    # Control: moor's own `.open` methods are not file access, and are not flagged.
    fine = _body("fine")
    assert len(fine) == 3 and not fine & flagged, fine & flagged


def test_a_planted_raw_read_in_a_package_is_named_by_file_and_line() -> None:
    source = "def cached(path):\n    return path.read_bytes()\n"
    (found,) = raw_accesses(source, "engine/moor_engine/planted.py")
    assert str(found) == ("engine/moor_engine/planted.py:2: path.read_bytes() (in cached)")
    assert not _allowed(found)
    # Control: the same call where an exception is listed is allowed.
    assert _allowed(RawAccess("mcp/moor_mcp/bearer.py", 2, "cached", found.call))


def test_moors_own_source_is_the_only_file_read_outside_and_nothing_else_is(
    tmp_path: Path,
) -> None:
    import moor_store.inside as inside_module
    from moor_store.own_files import NotOwnSource, read_own_sources

    own = Path(inside_module.__file__)
    assert read_own_sources([own, None]) == own.read_bytes()  # control: moor's own module
    import moor_engine.grounding.relocate as in_sub_package

    sub = Path(in_sub_package.__file__)
    assert read_own_sources([sub]) == sub.read_bytes()  # a sub-package's module is moor's
    planted = tmp_path / "app.py"
    planted.write_text("secret = 1\n", encoding="utf-8")
    (tmp_path / "moor_store" / "data").mkdir(parents=True)
    not_a_package = tmp_path / "moor_store" / "data" / "x.py"  # no __init__.py between
    not_a_package.write_text("secret = 1\n", encoding="utf-8")
    for path in (
        planted,
        tmp_path / "moor_store/notes.txt",
        own.with_suffix(".pyc"),
        not_a_package,
    ):
        with pytest.raises(NotOwnSource):
            read_own_sources([path])


def test_moors_own_data_files_are_read_by_name_and_nothing_else_is() -> None:
    from moor_store.own_files import NotOwnSource, read_own_asset

    assert "<" in read_own_asset("moor", "atlas_body.html")  # control: shipped with moor
    for package, name in (
        ("moor", "../moor_store/inside.py"),
        ("moor", "/etc/passwd"),
        ("moor", "main.py"),
        ("moor", ""),
        ("yaml", "__init__.py"),
        ("json", "tool.txt"),
    ):
        with pytest.raises(NotOwnSource):
            read_own_asset(package, name)
