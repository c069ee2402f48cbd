"""How well moor follows code that moved or was renamed, and whether drift survives the trip.

Cases are made, with a fixed seed, from real code on this machine that nobody here wrote: the
running interpreter's standard library (Python), npm's own sources (JavaScript), a fixed list
of Debian-packaged crates (Rust), Debian's ``golang-1.19-src`` (Go) and a JDK's ``src.zip``
(Java). A language whose sources are absent is skipped with a note. Definitions are picked
with moor's extractor; every mutated file must still parse without error nodes (and, for
Python, with ``ast``), and the cut or edited definition's text is compared byte for byte.

Categories, each per language (expected path for a memory bound before the change):

* ``rename+signature`` — new name and one parameter added: ``moved`` to the new name with
  ``signature`` among the changed axes; after ``follow``: ``drifted`` (signature);
* ``move`` — cut into a new file of the same language, unchanged: ``moved`` there with no
  changed axes; after ``follow``: ``current``;
* ``move+change`` — the same plus one changed code token in the body: ``moved`` with
  ``body``; after ``follow``: ``drifted`` (body);
* ``rename+body`` — new name plus a small body edit (one literal changed, or one identifier
  renamed throughout the body): ``gone`` with the new name as the first candidate; after
  ``follow --to`` that candidate: ``drifted`` (body);
* ``decoy`` — a definition whose body carries no evidence (too short) and has an exact twin
  elsewhere in the workspace is deleted: ``gone``, never ``moved`` onto the twin. Real twins
  first; a file without one gets a copy of one of its short definitions under another name
  (``synthetic`` in the case's detail);
* ``rename-in-place`` — a definition whose body carries no evidence (a one-liner, say) renamed
  where it stands, signature and body unchanged: ``moved`` to the new name; after
  ``follow``: ``current``;
* ``delete`` — a definition (as picked for the first four) deleted, nothing taking its
  place: ``gone`` with no candidate (a candidate offered is a *false candidate*).

Baseline, on the same cases in the same run: a naive relocator that, for a vanished symbol,
takes the definition (same kind family) with the most similar raw text
(``difflib.SequenceMatcher`` over source lines) in the workspace's files of the language and
re-binds to it as it is now — so it never preserves drift, and it relocates decoys.

    python bench/relocation.py [--limit N] [--json PATH] [--language L ...] [--jobs N]
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from typing import TYPE_CHECKING

from case_workspace import MEMORY_PATH, apply_change, write_workspace

if TYPE_CHECKING:
    from moor_extractors.model import DefinitionSite
    from moor_extractors.symbols import ParsedFile
    from tree_sitter import Node

LANGUAGES = ("python", "javascript", "typescript", "rust", "go", "java")
CATEGORIES = (
    "rename+signature",
    "move",
    "move+change",
    "rename+body",
    "decoy",
    "rename-in-place",
    "delete",
)
# The axis each category changes on the way, which must still show after the follow step.
CHANGED_AXIS = {"rename+signature": "signature", "move+change": "body", "rename+body": "body"}
SEED = 20261201
PER_CATEGORY = 40
# A body with fewer leaf tokens than this is too small to be an interesting relocation.
MIN_BODY_LEAVES = 25
MAX_FILE_BYTES = 60_000  # bigger files cost time and add nothing a smaller one lacks
MAX_FILES_SCANNED = 1500  # per language: enough to fill every category

# Debian-packaged crates read for Rust cases (directory names, so versions are fixed).
RUST_CRATES = (
    "aho-corasick-0.7.19",
    "crossbeam-channel-0.5.6",
    "flate2-1.0.25",
    "gimli-0.27.0",
    "hashbrown-0.12.3",
    "indexmap-1.9.2",
    "memchr-2.5.0",
    "object-0.30.0",
    "rayon-1.6.1",
    "regex-1.7.1",
    "regex-syntax-0.6.27",
    "serde_json-1.0.87",
    "syn-1.0.107",
)
CARGO_REGISTRY = Path("/usr/share/cargo/registry")
NPM_ROOT = Path("/usr/lib/node_modules/npm")
GO_ROOT = Path("/usr/share/go-1.19/src")  # Debian's golang-1.19-src
GO_PACKAGE = "golang-1.19-src"
# A JDK's sources; the first that exists is read (Debian's openjdk-17-source installs the
# second, which is otherwise a dangling link).
JAVA_SOURCES = (
    Path("/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip"),
    Path("/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip"),
)

EXTENSIONS = {
    "python": ".py",
    "javascript": ".js",
    "typescript": ".ts",
    "rust": ".rs",
    "go": ".go",
    "java": ".java",
}
# Definition node types per language (their own node, never a decorator wrapper).
DEF_TYPES = {
    "python": {"function_definition"},
    "javascript": {"function_declaration", "method_definition"},
    "typescript": {"function_declaration", "method_definition"},
    "rust": {"function_item"},
    "go": {"function_declaration", "method_declaration"},
    "java": {"method_declaration"},
}
# Containers a method may sit in (at the top level of its file), with their body field.
CONTAINER_TYPES = {
    "python": {"class_definition"},
    "javascript": {"class_declaration"},
    "typescript": {"class_declaration"},
    "rust": {"impl_item"},
    "go": set(),
    "java": {"class_declaration"},
}
# Nodes that only wrap a definition: still top level.
WRAPPERS = {"decorated_definition", "export_statement", "block", "class_body", "declaration_list"}
INTEGER_TYPES = {"integer", "number", "integer_literal", "int_literal", "decimal_integer_literal"}
SKIP_IDENTIFIERS = {"self", "cls", "this", "super", "_"}


# --------------------------------------------------------------------------------------------
# Where the sources are


@dataclass(frozen=True)
class Source:
    language: str
    identity: str  # published beside the numbers: another identity gives other cases
    files: Callable[[], list[tuple[str, Callable[[], bytes]]]]  # sorted (rel, read)


def _tree_files(
    root: Path, suffix: str, skip: set[str], prefix: str = ""
) -> list[tuple[str, Callable[[], bytes]]]:
    found = []
    for path in sorted(root.rglob(f"*{suffix}")):
        rel = path.relative_to(root)
        if skip.intersection(rel.parts) or not path.is_file() or path.is_symlink():
            continue
        found.append((prefix + rel.as_posix(), path.read_bytes))
    return found


def _python_source() -> Source | None:
    root = Path(sysconfig.get_paths()["stdlib"])
    if not root.is_dir():
        return None
    skip = {"test", "tests", "idle_test", "site-packages", "__pycache__"}
    return Source(
        "python",
        f"Python {platform.python_version()} stdlib",
        lambda: _tree_files(root, ".py", skip),
    )


def _npm_source() -> Source | None:
    manifest = NPM_ROOT / "package.json"
    if not manifest.is_file():
        return None
    version = json.loads(manifest.read_text(encoding="utf-8")).get("version", "?")

    def files() -> list[tuple[str, Callable[[], bytes]]]:
        # moor never looks into `node_modules` for moved code: the cases live under `deps/`.
        return [
            (rel.replace("node_modules/", "deps/"), read)
            for rel, read in _tree_files(NPM_ROOT, ".js", {"test", "tests"}, "npm/")
            if not rel.endswith(".min.js")
        ]

    return Source("javascript", f"npm {version}", files)


def _rust_source() -> Source | None:
    crates = [name for name in RUST_CRATES if (CARGO_REGISTRY / name / "src").is_dir()]
    if not crates:
        return None

    def files() -> list[tuple[str, Callable[[], bytes]]]:
        found = []
        for name in crates:
            found += _tree_files(CARGO_REGISTRY / name / "src", ".rs", set(), f"{name}/src/")
        return sorted(found)

    return Source("rust", f"{len(crates)} Debian crates", files)


def _dpkg_version(package: str) -> str | None:
    try:
        done = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", package],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _go_source() -> Source | None:
    if not GO_ROOT.is_dir():
        return None
    version = _dpkg_version(GO_PACKAGE) or "?"

    def files() -> list[tuple[str, Callable[[], bytes]]]:
        found = _tree_files(GO_ROOT, ".go", {"testdata", "vendor"}, "go/")
        # Only the package's own files: golang-1.19-go adds generated ones (zversion.go, …)
        # to the same tree, and the cases must not depend on whether it is installed.
        owned = _dpkg_files(GO_PACKAGE)
        if owned is None:
            return found
        return [(rel, read) for rel, read in found if str(GO_ROOT) + rel[2:] in owned]

    return Source("go", f"Go {version} ({GO_PACKAGE})", files)


def _dpkg_files(package: str) -> set[str] | None:
    listing = Path("/var/lib/dpkg/info") / f"{package}.list"
    if not listing.is_file():
        return None
    return set(listing.read_text(encoding="utf-8", errors="replace").splitlines())


def _java_source() -> Source | None:
    archive = next((path for path in JAVA_SOURCES if path.is_file()), None)
    if archive is None:
        return None
    release = archive.parent.parent / "release"
    fields = {}
    if release.is_file():
        for line in release.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition("=")
            fields[key.strip()] = value.strip().strip('"')
    version = fields.get("IMPLEMENTOR_VERSION") or fields.get("JAVA_VERSION") or "?"

    def files() -> list[tuple[str, Callable[[], bytes]]]:
        handle = zipfile.ZipFile(archive)
        names = sorted(n for n in handle.namelist() if n.endswith(".java"))

        def reader(name: str) -> Callable[[], bytes]:
            return lambda: handle.read(name)

        return [(name, reader(name)) for name in names]

    return Source("java", f"JDK {version} src.zip", files)


# TypeScript: no package on the machine ships TypeScript with bodies, so the cases are made
# from a public repository's git directory already on the machine (the real-history trial's
# zustand), read at a fixed commit with `git cat-file`; the git directory is never written.
TYPESCRIPT_GIT = Path(os.environ.get("MOOR_MIRROR", "/work/.mirror")) / "pmndrs+zustand" / "repo"
TYPESCRIPT_COMMIT = "f094eebe9bd3b4b0d77b997f69ab1d273f69a877"


def _git(*args: str) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", f"--git-dir={TYPESCRIPT_GIT}", *args],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _typescript_source() -> Source | None:
    listing = (
        _git("ls-tree", "-r", "--name-only", TYPESCRIPT_COMMIT) if TYPESCRIPT_GIT.is_dir() else None
    )
    if listing is None:
        return None
    names = sorted(
        name
        for name in listing.decode("utf-8", "replace").splitlines()
        if name.endswith(".ts") and not name.endswith(".d.ts")
    )

    def files() -> list[tuple[str, Callable[[], bytes]]]:
        def reader(name: str) -> Callable[[], bytes]:
            return lambda: _git("cat-file", "blob", f"{TYPESCRIPT_COMMIT}:{name}") or b""

        return [(f"zustand/{name}", reader(name)) for name in names]

    return Source("typescript", f"pmndrs/zustand {TYPESCRIPT_COMMIT[:8]} (git)", files)


def find_source(language: str) -> Source | None:
    """The real sources for a language on this machine; None (with no error) if absent."""
    finders: dict[str, Callable[[], Source | None]] = {
        "python": _python_source,
        "javascript": _npm_source,
        "typescript": _typescript_source,
        "rust": _rust_source,
        "go": _go_source,
        "java": _java_source,
    }
    finder = finders.get(language)
    return finder() if finder is not None else None


SKIPPED_NOTE = {
    "typescript": f"no git directory of pmndrs/zustand at {TYPESCRIPT_GIT} (npm, the JDK and "
    "the crates ship no TypeScript with bodies)",
    "go": f"{GO_ROOT} is missing (Debian package {GO_PACKAGE}: bench/setup.sh installs it)",
    "java": "no JDK src.zip found (" + ", ".join(str(p) for p in JAVA_SOURCES) + ")",
    "rust": f"none of the fixed crates is in {CARGO_REGISTRY}",
    "javascript": f"{NPM_ROOT} is missing",
    "python": "the standard library is missing",
}


# --------------------------------------------------------------------------------------------
# Cases


@dataclass(frozen=True)
class Case:
    id: str
    language: str
    category: str
    detail: str
    ref: str  # what the memory is bound to
    before: dict[str, str]
    after: dict[str, str | None]  # None: deleted
    expected_ref: str | None  # where it should be found (None for decoys)


@dataclass
class Unit:
    """One real file, parsed once: its definitions and the nodes behind them."""

    language: str
    rel: str
    text: str
    parsed: ParsedFile
    nodes: dict[int, Node]  # site end byte -> its definition node

    @property
    def source(self) -> bytes:
        return self.parsed.source

    def qname_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for site in self.parsed.sites():
            counts[site.qname] = counts.get(site.qname, 0) + 1
        return counts


def parse_unit(language: str, rel: str, data: bytes) -> Unit | None:
    from moor_extractors.symbols import parse_source

    if len(data) > MAX_FILE_BYTES or b"\r" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if language == "javascript" and any(len(line) > 400 for line in text.split("\n")):
        return None  # minified or generated
    parsed = parse_source(language, data)
    if parsed.tree.root_node.has_error:
        return None
    if language == "python" and not _python_parses(text):
        return None
    nodes: dict[int, Node] = {}
    stack = [parsed.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in DEF_TYPES[language]:
            nodes[node.end_byte] = node
        stack.extend(node.named_children)
    return Unit(language, rel, text, parsed, nodes)


def _python_parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def clean_parse(language: str, text: str) -> ParsedFile | None:
    """The parse of `text` when it has no error node anywhere (and, for Python, `ast` agrees)."""
    from moor_extractors.symbols import parse_source

    parsed = parse_source(language, text.encode("utf-8"))
    if parsed.tree.root_node.has_error:
        return None
    if language == "python" and not _python_parses(text):
        return None
    return parsed


@dataclass(frozen=True)
class Target:
    site: DefinitionSite
    node: Node
    container: Node | None  # the class / impl it is a method of

    @property
    def qname(self) -> str:
        return self.site.qname

    @property
    def own(self) -> str:
        return self.qname.rpartition(".")[2]


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def top_level(unit: Unit, node: Node) -> tuple[bool, Node | None]:
    """Whether a definition is a top-level function or a method of a top-level container,
    and that container."""
    container = None
    parent = node.parent
    while parent is not None and parent.type != unit.parsed.tree.root_node.type:
        if parent.type in CONTAINER_TYPES[unit.language] and container is None:
            container = parent
        elif parent.type not in WRAPPERS:
            return False, None
        parent = parent.parent
    if container is not None and container.parent is not None:
        owner = container.parent
        while owner.type in WRAPPERS:
            if owner.parent is None:
                break
            owner = owner.parent
        if owner.type != unit.parsed.tree.root_node.type:
            return False, None
    return parent is not None, container


def body_leaves(node: Node) -> list[Node]:
    """Code leaves of a definition's body: comments and a leading docstring left out."""
    body = node.child_by_field_name("body")
    if body is None:
        return []
    skip: set[int] = set()
    first = body.named_children[0] if body.named_children else None
    if (
        first is not None
        and first.type == "expression_statement"
        and first.named_children
        and first.named_children[0].type == "string"
    ):
        skip.add(first.id)
    leaves: list[Node] = []
    stack = [body]
    while stack:
        current = stack.pop()
        if current.id in skip or "comment" in current.type:
            continue
        if current.child_count == 0:
            leaves.append(current)
        else:
            stack.extend(reversed(current.children))
    return leaves


def targets(unit: Unit) -> list[Target]:
    """Functions and methods whose qualified name is unique in the file, at the top level or
    in a top-level class/impl, with a name, parameters and a body."""
    counts = unit.qname_counts()
    found = []
    for site in unit.parsed.sites():
        node = unit.nodes.get(site.end_byte)
        name = node.child_by_field_name("name") if node is not None else None
        if (
            node is None
            or name is None
            or site.has_error
            or counts[site.qname] != 1
            or site.kind not in ("function", "method")
            or node.child_by_field_name("parameters") is None
            or node.child_by_field_name("body") is None
            or _text(name) != site.qname.rpartition(".")[2]
        ):
            continue
        is_top, container = top_level(unit, node)
        if is_top:
            found.append(Target(site, node, container))
    return found


# --- edits ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    start: int  # byte offsets into the unit's source
    end: int
    text: str


def apply_edits(source: bytes, edits: Iterable[Edit]) -> str:
    out = source
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        out = out[: edit.start] + edit.text.encode("utf-8") + out[edit.end :]
    return out.decode("utf-8")


def new_name(language: str, own: str) -> str:
    return own + ("_renamed" if language in ("python", "rust") else "Renamed")


def rename_edit(target: Target, language: str) -> tuple[Edit, str]:
    name = target.node.child_by_field_name("name")
    assert name is not None
    fresh = new_name(language, target.own)
    container = target.qname.rpartition(".")[0]
    return Edit(
        name.start_byte, name.end_byte, fresh
    ), f"{container}.{fresh}" if container else fresh


def parameter_edit(target: Target, language: str) -> Edit | None:
    """One parameter added where the language allows it (never after a rest parameter)."""
    params = target.node.child_by_field_name("parameters")
    assert params is not None
    named = [c for c in params.named_children if "comment" not in c.type]
    extra = {
        "python": "moor_extra=None",
        "javascript": "moorExtra",
        "typescript": "moorExtra?: number",
        "rust": "moor_extra: u8",
        "go": "moorExtra int",
        "java": "int moorExtra",
    }[language]
    if language == "go" and any(
        c.type == "variadic_parameter_declaration"
        or (c.type == "parameter_declaration" and c.child_by_field_name("name") is None)
        for c in named
    ):
        return None
    if language == "java" and any(c.type == "spread_parameter" for c in named):
        return None
    if language == "rust" and any(c.type == "variadic_parameter" for c in named):
        return None
    if not named:
        close = params.end_byte - 1
        return Edit(close, close, extra)
    last = named[-1]
    pattern = last.child_by_field_name("pattern") if last.type == "required_parameter" else None
    if last.type in ("dictionary_splat_pattern", "rest_pattern") or (
        pattern is not None and pattern.type == "rest_pattern"
    ):
        return Edit(last.start_byte, last.start_byte, extra + ", ")
    return Edit(last.end_byte, last.end_byte, ", " + extra)


def line_span(unit: Unit, site: DefinitionSite) -> tuple[int, int] | None:
    """The whole lines a definition occupies, if nothing else shares them."""
    source = unit.source
    start = source.rfind(b"\n", 0, site.start_byte) + 1
    end = source.find(b"\n", site.end_byte)
    end = len(source) if end < 0 else end + 1
    if source[start : site.start_byte].strip() or source[site.end_byte : end].strip():
        return None
    return start, end


def body_token_edit(unit: Unit, target: Target, rng: random.Random) -> tuple[Edit, str] | None:
    """One code token of the body changed: an integer literal plus one, else an identifier."""
    leaves = body_leaves(target.node)
    integers = [leaf for leaf in leaves if leaf.type in INTEGER_TYPES and _text(leaf).isdigit()]
    if integers:
        leaf = rng.choice(integers)
        value = _text(leaf)
        return Edit(leaf.start_byte, leaf.end_byte, str(int(value) + 1)), f"literal {value}"
    names = [leaf for leaf in leaves if leaf.type == "identifier"]
    names = [leaf for leaf in names if _text(leaf) not in SKIP_IDENTIFIERS]
    if not names:
        return None
    leaf = rng.choice(names)
    value = _text(leaf)
    return Edit(leaf.start_byte, leaf.end_byte, value + "X"), f"identifier {value}"


def body_rename_edits(
    unit: Unit, target: Target, rng: random.Random
) -> tuple[list[Edit], str] | None:
    """One identifier renamed at every occurrence in the body (parameters left alone), or
    one integer literal changed — whichever the seed picks among those the body has."""
    leaves = body_leaves(target.node)
    params = target.node.child_by_field_name("parameters")
    param_text = _text(params) if params is not None else ""
    occurrences: dict[str, list[Node]] = {}
    for leaf in leaves:
        name = _text(leaf)
        if (
            leaf.type == "identifier"
            and name not in SKIP_IDENTIFIERS
            and not re.search(rf"\b{re.escape(name)}\b", param_text)
        ):
            occurrences.setdefault(name, []).append(leaf)
    caught = {name for name, found in occurrences.items() if any(map(_catch_binder, found))}
    names = sorted(
        name for name, found in occurrences.items() if len(found) >= 2 and name not in caught
    )
    integers = [leaf for leaf in leaves if leaf.type in INTEGER_TYPES and _text(leaf).isdigit()]
    options = (["identifier"] if names else []) + (["literal"] if integers else [])
    if not options:
        return None
    if rng.choice(options) == "literal":
        leaf = rng.choice(integers)
        value = _text(leaf)
        return [Edit(leaf.start_byte, leaf.end_byte, str(int(value) + 1))], f"literal {value}"
    name = rng.choice(names)
    fresh = name + "Local"
    if re.search(rf"\b{re.escape(fresh)}\b", unit.text):
        return None
    edits = [Edit(leaf.start_byte, leaf.end_byte, fresh) for leaf in occurrences[name]]
    return edits, f"identifier {name} (x{len(edits)})"


def _catch_binder(leaf: Node) -> bool:
    """Whether `leaf` is the variable a catch/except clause binds. Renaming that variable
    throughout its clause is no change of behaviour, and moor reads it as none (memory
    a-renamed-catch-variable-is-not-drift), so a rename+body case never picks it."""
    parent = leaf.parent
    if parent is None:
        return False
    if parent.type in ("catch_formal_parameter", "catch_clause"):  # Java; JavaScript/TS
        return True
    before = leaf.prev_sibling
    return parent.type in ("except_clause", "as_pattern_target") or (
        before is not None and before.type == "as" and parent.type == "as_pattern"
    )


def container_wrapper(unit: Unit, target: Target) -> tuple[str, str]:
    """Text to put before and after a cut method in its new file so that it has the same
    qualified name there (its class or impl header; Go's package clause)."""
    if unit.language == "go":
        package = next(
            (c for c in unit.parsed.tree.root_node.named_children if c.type == "package_clause"),
            None,
        )
        return (_text(package) + "\n\n" if package is not None else ""), ""
    if target.container is None:
        return "", ""
    body = target.container.child_by_field_name("body")
    assert body is not None
    header = unit.source[target.container.start_byte : body.start_byte].decode("utf-8")
    if unit.language == "python":
        return header.rstrip() + "\n", ""
    return header.rstrip() + " {\n", "}\n"


def moved_path(rel: str) -> str:
    folder, _, name = rel.rpartition("/")
    return f"{folder}/moved_{name}" if folder else f"moved_{name}"


# --- the categories -------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    detail: str
    ref: str  # what the memory is bound to
    before: str  # the case file as bound (differs from the real file only for synthetic decoys)
    after: dict[str, str | None]
    expected_ref: str | None


def _ref(unit: Unit, target: Target) -> str:
    return f"{unit.rel}#{target.qname}"


def _site_text(parsed: ParsedFile, qname: str) -> str | None:
    found = [site for site in parsed.sites() if site.qname == qname]
    return parsed.source_text(found[0]) if len(found) == 1 else None


def _present(parsed: ParsedFile, qname: str) -> bool:
    return any(site.qname == qname for site in parsed.sites())


def mutate_rename_signature(
    unit: Unit, target: Target, rng: random.Random, avoid: set[str]
) -> Mutation | None:
    if not unit.parsed.carries_evidence(target.site):
        return None
    rename, qname = rename_edit(target, unit.language)
    params = parameter_edit(target, unit.language)
    if params is None or qname in avoid or _present(unit.parsed, qname):
        return None
    text = apply_edits(unit.source, [rename, params])
    parsed = clean_parse(unit.language, text)
    if parsed is None or _present(parsed, target.qname) or _site_text(parsed, qname) is None:
        return None
    return Mutation(
        "parameter added", _ref(unit, target), unit.text, {unit.rel: text}, f"{unit.rel}#{qname}"
    )


def _cut(unit: Unit, target: Target, change: Edit | None) -> tuple[str, str] | None:
    """(the file without the definition, the new file holding it) — both clean parses."""
    span = line_span(unit, target.site)
    if span is None:
        return None
    start, end = span
    lines = unit.source[start:end]
    if change is not None:
        lines = lines[: change.start - start] + change.text.encode() + lines[change.end - start :]
    head, tail = container_wrapper(unit, target)
    new_text = head + lines.decode("utf-8").rstrip("\n") + "\n" + tail
    old_text = (unit.source[:start] + unit.source[end:]).decode("utf-8")
    old = clean_parse(unit.language, old_text)
    new = clean_parse(unit.language, new_text)
    if old is None or new is None or _present(old, target.qname):
        return None
    moved = _site_text(new, target.qname)
    want = unit.parsed.source_text(target.site)
    if change is not None:
        offset = target.site.start_byte
        want = apply_edits(
            want.encode("utf-8"),
            [Edit(change.start - offset, change.end - offset, change.text)],
        )
    if moved != want:
        return None
    return old_text, new_text


def mutate_move(unit: Unit, target: Target, rng: random.Random, avoid: set[str]) -> Mutation | None:
    new_rel = moved_path(unit.rel)
    cut = _cut(unit, target, None)
    if cut is None:
        return None
    detail = "method with its container header" if target.container else "top-level"
    after: dict[str, str | None] = {unit.rel: cut[0], new_rel: cut[1]}
    return Mutation(detail, _ref(unit, target), unit.text, after, f"{new_rel}#{target.qname}")


def mutate_move_change(
    unit: Unit, target: Target, rng: random.Random, avoid: set[str]
) -> Mutation | None:
    edit = body_token_edit(unit, target, rng)
    if edit is None:
        return None
    new_rel = moved_path(unit.rel)
    cut = _cut(unit, target, edit[0])
    if cut is None:
        return None
    after: dict[str, str | None] = {unit.rel: cut[0], new_rel: cut[1]}
    return Mutation(edit[1], _ref(unit, target), unit.text, after, f"{new_rel}#{target.qname}")


def mutate_rename_body(
    unit: Unit, target: Target, rng: random.Random, avoid: set[str]
) -> Mutation | None:
    rename, qname = rename_edit(target, unit.language)
    body = body_rename_edits(unit, target, rng)
    if body is None or qname in avoid or _present(unit.parsed, qname):
        return None
    text = apply_edits(unit.source, [rename, *body[0]])
    parsed = clean_parse(unit.language, text)
    if parsed is None or _present(parsed, target.qname) or _site_text(parsed, qname) is None:
        return None
    return Mutation(body[1], _ref(unit, target), unit.text, {unit.rel: text}, f"{unit.rel}#{qname}")


def mutate_rename_in_place(
    unit: Unit, target: Target, rng: random.Random, avoid: set[str]
) -> Mutation | None:
    if unit.parsed.carries_evidence(target.site):
        return None
    rename, qname = rename_edit(target, unit.language)
    if qname in avoid or _present(unit.parsed, qname) or len(unit.parsed.sites()) < 2:
        return None
    text = apply_edits(unit.source, [rename])
    parsed = clean_parse(unit.language, text)
    if parsed is None or _present(parsed, target.qname) or _site_text(parsed, qname) is None:
        return None
    body = unit.parsed.facts(target.site).axes.get("body", "")
    twins = sum(
        unit.parsed.facts(site).axes.get("body", "") == body
        for site in unit.parsed.sites()
        if site.kind == target.site.kind and site.qname != target.qname
    )
    detail = f"{len(body_leaves(target.node))} leaves" + (
        f", {twins} twin(s) in file" if twins else ""
    )
    return Mutation(detail, _ref(unit, target), unit.text, {unit.rel: text}, f"{unit.rel}#{qname}")


def mutate_delete(
    unit: Unit, target: Target, rng: random.Random, avoid: set[str]
) -> Mutation | None:
    deleted = _delete(unit, unit.source, target.site)
    if deleted is None:
        return None
    detail = "method" if target.container else "top-level"
    return Mutation(detail, _ref(unit, target), unit.text, {unit.rel: deleted}, None)


def decoy_in(
    unit: Unit, others: list[Unit], rng: random.Random, avoid: set[str]
) -> Mutation | None:
    """Delete a short-bodied definition that has an exact twin (same kind and body digest) in
    the workspace; without a real twin, copy a short definition of the file under another
    name before binding."""
    counts = unit.qname_counts()
    short = []
    for site in unit.parsed.sites():
        node = unit.nodes.get(site.end_byte)
        if (
            node is None
            or site.has_error
            or counts[site.qname] != 1
            or site.qname in avoid
            or site.kind not in ("function", "method")
            or node.child_by_field_name("body") is None
            or unit.parsed.carries_evidence(site)
            or not top_level(unit, node)[0]
        ):
            continue
        short.append(site)
    if not short:
        return None
    rng.shuffle(short)
    bodies: dict[tuple[str, str], list[str]] = {}
    for other in [unit, *others]:
        for site in other.parsed.sites():
            if site.kind in ("function", "method") and not site.has_error:
                body = other.parsed.facts(site).axes.get("body", "")
                bodies.setdefault((site.kind, body), []).append(f"{other.rel}#{site.qname}")
    for site in short:
        key = (site.kind, unit.parsed.facts(site).axes.get("body", ""))
        twins = [ref for ref in bodies.get(key, []) if ref != f"{unit.rel}#{site.qname}"]
        if twins:
            deleted = _delete(unit, unit.source, site)
            if deleted is not None:
                ref = f"{unit.rel}#{site.qname}"
                return Mutation(f"real twin {twins[0]}", ref, unit.text, {unit.rel: deleted}, None)
    for site in short[:5]:
        synthetic = _synthetic_twin(unit, site)
        if synthetic is not None:
            return synthetic
    return None


def _delete(unit: Unit, source: bytes, site: DefinitionSite) -> str | None:
    start = source.rfind(b"\n", 0, site.start_byte) + 1
    end = source.find(b"\n", site.end_byte)
    end = len(source) if end < 0 else end + 1
    if source[start : site.start_byte].strip() or source[site.end_byte : end].strip():
        return None
    text = (source[:start] + source[end:]).decode("utf-8")
    parsed = clean_parse(unit.language, text)
    return text if parsed is not None and not _present(parsed, site.qname) else None


def _synthetic_twin(unit: Unit, site: DefinitionSite) -> Mutation | None:
    node = unit.nodes[site.end_byte]
    name = node.child_by_field_name("name")
    span = line_span(unit, site)
    if name is None or span is None:
        return None
    start, end = span
    twin_name = new_name(unit.language, _text(name)) + "Twin"
    copy = (
        unit.source[start : name.start_byte] + twin_name.encode() + unit.source[name.end_byte : end]
    )
    if not copy.endswith(b"\n"):
        copy = b"\n" + copy
    before = unit.source[:end] + copy + unit.source[end:]
    before_text = before.decode("utf-8")
    parsed = clean_parse(unit.language, before_text)
    container = site.qname.rpartition(".")[0]
    twin_qname = f"{container}.{twin_name}" if container else twin_name
    if parsed is None or _site_text(parsed, twin_qname) is None:
        return None
    original = next(s for s in parsed.sites() if s.qname == site.qname)
    deleted = _delete(unit, before, original)
    if deleted is None:
        return None
    ref = f"{unit.rel}#{site.qname}"
    return Mutation(f"synthetic twin {twin_qname}", ref, before_text, {unit.rel: deleted}, None)


Mutator = Callable[[Unit, Target, random.Random, set[str]], "Mutation | None"]
MUTATORS: dict[str, Mutator] = {
    "rename+signature": mutate_rename_signature,
    "move": mutate_move,
    "move+change": mutate_move_change,
    "rename+body": mutate_rename_body,
    "rename-in-place": mutate_rename_in_place,
    "delete": mutate_delete,
}


def _good_target(unit: Unit, target: Target, bodies: dict[str, int]) -> bool:
    """Big enough to be worth following, and with a body no other definition shares (so a
    rename has one right answer)."""
    if len(body_leaves(target.node)) < MIN_BODY_LEAVES:
        return False
    return bodies.get(unit.parsed.facts(target.site).axes.get("body", ""), 0) == 1


def cases_for(source: Source, per_category: int) -> list[Case]:
    """Up to `per_category` cases per category, at most one per file and category.

    Files are visited in a seeded shuffle; each case's workspace holds its file and the file
    visited before it (the *neighbour*, so relocation has somewhere wrong to look); each
    (file, category) draws from its own seeded generator, so a smaller `per_category` yields
    exactly the first cases of a larger one.
    """
    files = source.files()
    random.Random(f"{SEED}/{source.language}").shuffle(files)
    chosen: dict[str, list[Case]] = {category: [] for category in CATEGORIES}
    neighbour: Unit | None = None
    for rel, read in files[:MAX_FILES_SCANNED]:
        if all(len(found) >= per_category for found in chosen.values()):
            break
        unit = parse_unit(source.language, rel, read())
        if unit is None:
            continue
        others = [neighbour] if neighbour is not None else []
        avoid = {site.qname for other in others for site in other.parsed.sites()}
        bodies: dict[str, int] = {}
        for other in [unit, *others]:
            for site in other.parsed.sites():
                digest = other.parsed.facts(site).axes.get("body", "")
                bodies[digest] = bodies.get(digest, 0) + 1
        found = [t for t in targets(unit) if t.qname not in avoid]
        for category in CATEGORIES:
            if len(chosen[category]) >= per_category:
                continue
            rng = random.Random(f"{SEED}/{unit.rel}/{category}")
            mutation: Mutation | None = None
            if category == "decoy":
                mutation = decoy_in(unit, others, rng, avoid)
            elif category == "rename-in-place":
                small = [t for t in found if not unit.parsed.carries_evidence(t.site)]
                rng.shuffle(small)
                for target in small[:5]:
                    mutation = mutate_rename_in_place(unit, target, rng, avoid)
                    if mutation is not None:
                        break
            else:
                pool = [t for t in found if _good_target(unit, t, bodies)]
                rng.shuffle(pool)
                for target in pool[:5]:
                    mutation = MUTATORS[category](unit, target, rng, avoid)
                    if mutation is not None:
                        break
            if mutation is None:
                continue
            number = len(chosen[category]) + 1
            before = {unit.rel: mutation.before}
            for other in others:
                before[other.rel] = other.text
            chosen[category].append(
                Case(
                    id=f"{source.language}-{category}-{number:03d}",
                    language=source.language,
                    category=category,
                    detail=mutation.detail,
                    ref=mutation.ref,
                    before=before,
                    after=mutation.after,
                    expected_ref=mutation.expected_ref,
                )
            )
        neighbour = unit
    return [case for category in CATEGORIES for case in chosen[category]]


# --------------------------------------------------------------------------------------------
# Running moor and the baseline


@dataclass(frozen=True)
class Outcome:
    """What moor said after the change, and after the follow step it suggests."""

    state: str
    moved_to: str | None = None
    axes: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()
    similarities: tuple[float | None, ...] = ()
    followed: str | None = None  # "follow" or "follow --to REF"
    final_state: str | None = None
    final_ref: str | None = None
    final_axes: tuple[str, ...] = ()
    note: str = ""


def run_moor(case: Case, scratch: Path) -> Outcome:
    """Bind, change, check; then the follow step moor offers (`follow` for moved, `follow
    --to` its first candidate for gone) and check again — each step in a fresh Session."""
    from moor_engine.grounding.actions import bind, follow
    from moor_engine.session import Session

    root = scratch / case.id
    try:
        write_workspace(root, case.ref, case.id, case.before, "A note.")
        with Session.open(root) as session:
            bound = bind(session, [])
        if bound.refused:
            return Outcome("bind-refused", note="; ".join(r.message for r in bound.refused))
        apply_change(root, case.before, case.after)
        with Session.open(root) as session:
            anchor = session.check(session.select([])).memories[0].anchors[0]
        outcome = Outcome(
            anchor.state.value,
            anchor.moved_to,
            tuple(anchor.axes),
            tuple(c.ref for c in anchor.candidates),
            tuple(c.similarity for c in anchor.candidates),
            note=anchor.detail or "",
        )
        if case.category in ("decoy", "delete"):
            return outcome
        to = None
        if anchor.state.value == "gone" and anchor.candidates:
            to = anchor.candidates[0].ref
        elif anchor.state.value != "moved":
            return outcome
        with Session.open(root) as session:
            followed = follow(session, MEMORY_PATH, to=to, why="relocation benchmark")
        if followed.refused:
            return _with(
                outcome, followed="refused", note="; ".join(r.message for r in followed.refused)
            )
        with Session.open(root) as session:
            final = session.check(session.select([])).memories[0].anchors[0]
        return _with(
            outcome,
            followed="follow" if to is None else f"follow --to {to}",
            final_state=final.state.value,
            final_ref=final.canonical,
            final_axes=tuple(final.axes),
        )
    except Exception as error:  # a crash is a wrong answer, reported with its cause
        return Outcome("error", note=f"{type(error).__name__}: {error}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _with(outcome: Outcome, **changes: object) -> Outcome:
    from dataclasses import replace

    return replace(outcome, **changes)  # type: ignore[arg-type]


_FAMILY = {"function": "callable", "method": "callable"}


def naive_relocation(case: Case) -> str | None:
    """The baseline: the definition of the same kind family whose raw source lines are most
    like the bound code's, in any of the workspace's files of the language, after the change
    (ties: first by path, then position). Re-bound as it is now."""
    from moor_extractors.symbols import parse_source

    path, _, qname = case.ref.partition("#")
    bound = parse_source(case.language, case.before[path].encode("utf-8"))
    site = next(s for s in bound.sites() if s.qname == qname)
    old_lines = bound.source_text(site).split("\n")
    family = _FAMILY.get(site.kind, site.kind)
    files: dict[str, str | None] = {**case.before, **case.after}
    best: tuple[float, str] | None = None
    for rel in sorted(files):
        text = files[rel]
        if text is None or not rel.endswith(EXTENSIONS[case.language]):
            continue
        parsed = parse_source(case.language, text.encode("utf-8"))
        for other in parsed.sites():
            if _FAMILY.get(other.kind, other.kind) != family:
                continue
            ratio = difflib.SequenceMatcher(
                None, old_lines, parsed.source_text(other).split("\n"), autojunk=False
            ).ratio()
            if best is None or ratio > best[0]:
                best = (ratio, f"{rel}#{other.qname}")
    return best[1] if best else None


@dataclass(frozen=True)
class Verdict:
    case: Case
    moor: Outcome
    baseline: str | None  # where the naive relocator re-bound the memory

    # --- moor ---
    @property
    def moor_wrong_relocation(self) -> bool:
        return self.moor.state == "moved" and self.moor.moved_to != self.case.expected_ref

    @property
    def moor_clean(self) -> bool:
        """A clean relocation recognised: `moved` to the right place (category 2 with no
        changed axis, category 1 with the signature among them)."""
        if self.case.category not in ("move", "rename+signature"):
            return False
        right = self.moor.state == "moved" and self.moor.moved_to == self.case.expected_ref
        if self.case.category == "move":
            return right and self.moor.axes == ()
        return right and "signature" in self.moor.axes

    @property
    def moor_candidate_first(self) -> bool:
        return (
            self.case.category == "rename+body"
            and self.moor.state == "gone"
            and self.moor.candidates[:1] == (self.case.expected_ref,)
        )

    @property
    def moor_in_place(self) -> bool:
        return (
            self.case.category == "rename-in-place"
            and self.moor.state == "moved"
            and self.moor.moved_to == self.case.expected_ref
        )

    @property
    def moor_false_candidate(self) -> bool:
        return self.case.category == "delete" and bool(self.moor.candidates)

    @property
    def moor_drift_preserved(self) -> bool:
        axis = CHANGED_AXIS.get(self.case.category)
        return (
            axis is not None
            and self.moor.final_state == "drifted"
            and axis in self.moor.final_axes
            and self.moor.final_ref == self.case.expected_ref
        )

    @property
    def moor_right(self) -> bool:
        """The whole expected path (see the module's docstring)."""
        category = self.case.category
        if category == "decoy":
            return self.moor.state == "gone"
        if category == "delete":
            return self.moor.state == "gone" and not self.moor.candidates
        if category == "rename-in-place":
            return self.moor_in_place and self.moor.final_state == "current"
        if category == "move":
            return (
                self.moor_clean
                and self.moor.final_state == "current"
                and self.moor.final_ref == self.case.expected_ref
            )
        if category == "rename+signature":
            return self.moor_clean and self.moor_drift_preserved
        if category == "move+change":
            return (
                self.moor.state == "moved"
                and self.moor.moved_to == self.case.expected_ref
                and "body" in self.moor.axes
                and self.moor_drift_preserved
            )
        return self.moor_candidate_first and self.moor_drift_preserved

    # --- baseline ---
    @property
    def baseline_wrong_relocation(self) -> bool:
        return self.baseline is not None and self.baseline != self.case.expected_ref

    @property
    def baseline_right_place(self) -> bool:
        return self.baseline is not None and self.baseline == self.case.expected_ref

    @property
    def baseline_right(self) -> bool:
        """Re-binding accepts the code as it is: right only where nothing changed on the way
        (a clean move) and it picked the right place; a decoy is right only if it found
        nothing to pick."""
        if self.case.category in ("decoy", "delete"):
            return self.baseline is None
        if self.case.category == "rename-in-place":
            return self.baseline_right_place
        return self.case.category == "move" and self.baseline_right_place


def judge_one(case: Case, scratch: Path) -> Verdict:
    return Verdict(case, run_moor(case, scratch), naive_relocation(case))


def judge(cases: list[Case], scratch: Path, jobs: int = 1) -> list[Verdict]:
    if jobs <= 1:
        return [judge_one(case, scratch) for case in cases]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(judge_one, cases, [scratch] * len(cases), chunksize=4))


# --------------------------------------------------------------------------------------------
# Results


METRICS = (
    "drift_preserved",
    "wrong_relocations",
    "candidate_first",
    "clean_relocations",
    "in_place",
    "false_candidates",
)
# Which categories each metric is measured over, and its goal.
METRIC_CATEGORIES = {
    "drift_preserved": ("rename+signature", "move+change", "rename+body"),
    "wrong_relocations": CATEGORIES,
    "candidate_first": ("rename+body",),
    "clean_relocations": ("move", "rename+signature"),
    "in_place": ("rename-in-place",),
    "false_candidates": ("delete",),
}
# Metrics published as a count of cases (the fewer the better), not a share.
COUNTS = ("wrong_relocations", "false_candidates")
GOALS = {
    "drift_preserved": "100%",
    "wrong_relocations": "0",
    "candidate_first": ">= 90%",
    "clean_relocations": "100%",
    "in_place": ">= 95%",
    "false_candidates": "0",
}


@dataclass
class Tally:
    """One language's (or all languages') numbers: per metric (moor, baseline, out of)."""

    cases: int = 0
    by_category: dict[str, list[int]] = field(default_factory=dict)  # [cases, moor, baseline]
    metrics: dict[str, list[int]] = field(default_factory=dict)  # [moor, baseline, out of]
    misses: list[Verdict] = field(default_factory=list)
    synthetic_decoys: int = 0  # decoys whose twin the benchmark made (no real one in the file)
    # Per gone case with candidates: (category, whether the first is the right place, their
    # similarities) — what the candidates' floor is decided on.
    offered: list[tuple[str, bool, tuple[float | None, ...]]] = field(default_factory=list)

    def add(self, verdict: Verdict) -> None:
        category = verdict.case.category
        self.cases += 1
        self.synthetic_decoys += verdict.case.detail.startswith("synthetic")
        row = self.by_category.setdefault(category, [0, 0, 0])
        row[0] += 1
        row[1] += verdict.moor_right
        row[2] += verdict.baseline_right
        values = {
            "drift_preserved": (verdict.moor_drift_preserved, False),
            "wrong_relocations": (
                verdict.moor_wrong_relocation,
                verdict.baseline_wrong_relocation,
            ),
            "candidate_first": (verdict.moor_candidate_first, verdict.baseline_right_place),
            "clean_relocations": (verdict.moor_clean, verdict.baseline_right_place),
            "in_place": (verdict.moor_in_place, verdict.baseline_right_place),
            # The baseline always re-binds: it never says a deleted definition is gone.
            "false_candidates": (verdict.moor_false_candidate, verdict.baseline is not None),
        }
        for metric, (moor, baseline) in values.items():
            if category in METRIC_CATEGORIES[metric]:
                cell = self.metrics.setdefault(metric, [0, 0, 0])
                cell[0] += moor
                cell[1] += baseline
                cell[2] += 1
        if not verdict.moor_right:
            self.misses.append(verdict)
        if verdict.moor.state == "gone" and verdict.moor.candidates:
            first = verdict.moor.candidates[0] == verdict.case.expected_ref
            self.offered.append((category, first, verdict.moor.similarities))

    def row(self) -> tuple[int, ...]:
        """cases, then (moor, baseline, out of) per metric — what the README publishes."""
        cells = [self.cases]
        for metric in METRICS:
            cells.extend(self.metrics.get(metric, [0, 0, 0]))
        return tuple(cells)


@dataclass
class LanguageResult:
    language: str
    identity: str | None  # None: skipped (no sources)
    tally: Tally
    seconds: float
    note: str = ""


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def describe_miss(verdict: Verdict) -> str:
    case, moor = verdict.case, verdict.moor
    want = {
        "rename+signature": f"moved -> {case.expected_ref} [signature], then drifted",
        "move": f"moved -> {case.expected_ref} [], then current",
        "move+change": f"moved -> {case.expected_ref} [body], then drifted",
        "rename+body": f"gone, candidates[0] {case.expected_ref}, then drifted",
        "decoy": "gone",
        "rename-in-place": f"moved -> {case.expected_ref}, then current",
        "delete": "gone, no candidates",
    }[case.category]
    got = moor.state
    if moor.moved_to:
        got += f" -> {moor.moved_to} [{', '.join(moor.axes)}]"
    if moor.state == "gone":
        got += f", candidates {list(moor.candidates)}"
    if moor.followed:
        got += f"; {moor.followed}: {moor.final_state} [{', '.join(moor.final_axes)}]"
        if moor.final_ref != case.expected_ref:
            got += f" at {moor.final_ref}"
    if moor.note and moor.state not in ("moved", "gone", "drifted"):
        got += f"  ({moor.note})"
    return f"{case.id} {case.ref} ({case.detail}): expected {want}; got {got}"


def print_result(result: LanguageResult) -> None:
    if result.identity is None:
        print(f"\n{result.language}: skipped — {result.note}")
        return
    t = result.tally
    print(f"\n{result.language}: {result.identity}  [{t.cases} cases, {result.seconds:.1f} s]")
    header = f"  {'category':<17} {'cases':>5}  {'moor right':>14}  {'baseline right':>14}"
    print(header)
    for category in CATEGORIES:
        if category in t.by_category:
            cases, moor, baseline = t.by_category[category]
            print(f"  {category:<17} {cases:>5}  {_cell(moor, cases)}  {_cell(baseline, cases)}")
    if "decoy" in t.by_category:
        real = t.by_category["decoy"][0] - t.synthetic_decoys
        print(f"  decoys: {real} with a real twin, {t.synthetic_decoys} with a synthetic one")
    print(f"  {'metric':<26} {'moor':>14}  {'baseline':>14}  goal")
    for metric in METRICS:
        if metric in t.metrics:
            moor, baseline, whole = t.metrics[metric]
            if metric in COUNTS:
                print(f"  {metric:<26} {moor:>14}  {baseline:>14}  {GOALS[metric]} (of {whole})")
            else:
                print(
                    f"  {metric:<26} {_cell(moor, whole)}  {_cell(baseline, whole)}  "
                    f"{GOALS[metric]}"
                )
    if t.misses:
        print(f"  moor got {len(t.misses)} case(s) wrong:")
        for verdict in t.misses:
            print(f"    {describe_miss(verdict)}")


def _cell(part: int, whole: int) -> str:
    return f"{part:>4} ({percent(part, whole):>6})"


def run_language(language: str, limit: int | None, scratch: Path, jobs: int) -> LanguageResult:
    started = time.perf_counter()
    source = find_source(language)
    if source is None:
        return LanguageResult(language, None, Tally(), 0.0, SKIPPED_NOTE[language])
    cases = cases_for(source, PER_CATEGORY if limit is None else limit)
    tally = Tally()
    for verdict in judge(cases, scratch, jobs):
        tally.add(verdict)
    return LanguageResult(language, source.identity, tally, time.perf_counter() - started)


def scratch_parent() -> str | None:
    """Workspaces live in memory where the machine has a tmpfs: each case opens four
    journals, and their fsyncs, not moor's work, would otherwise be most of the run."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def run(
    languages: Iterable[str], limit: int | None, jobs: int = 1, quiet: bool = False
) -> list[LanguageResult]:
    results = []
    with tempfile.TemporaryDirectory(prefix="moor-relocation-", dir=scratch_parent()) as scratch:
        for language in languages:
            result = run_language(language, limit, Path(scratch), jobs)
            if not quiet:
                print_result(result)
            results.append(result)
    return results


def overall(results: list[LanguageResult]) -> Tally:
    total = Tally()
    for result in results:
        for verdict in result.tally.misses:
            total.misses.append(verdict)
        total.cases += result.tally.cases
        total.synthetic_decoys += result.tally.synthetic_decoys
        total.offered += result.tally.offered
        for category, row in result.tally.by_category.items():
            mine = total.by_category.setdefault(category, [0, 0, 0])
            for i, value in enumerate(row):
                mine[i] += value
        for metric, cell in result.tally.metrics.items():
            mine = total.metrics.setdefault(metric, [0, 0, 0])
            for i, value in enumerate(cell):
                mine[i] += value
    return total


def as_json(results: list[LanguageResult], limit: int | None) -> dict[str, object]:
    def numbers(t: Tally) -> dict[str, object]:
        return {
            "cases": t.cases,
            "synthetic_decoys": t.synthetic_decoys,
            "categories": {
                c: dict(zip(("cases", "moor", "baseline"), row, strict=True))
                for c, row in t.by_category.items()
            },
            "metrics": {
                m: dict(zip(("moor", "baseline", "of"), cell, strict=True))
                for m, cell in t.metrics.items()
            },
            "offered": [
                {"category": c, "first_right": f, "similarities": list(sims)}
                for c, f, sims in t.offered
            ],
        }

    return {
        "seed": SEED,
        "limit": limit,
        "languages": {
            r.language: (
                {"source": r.identity, **numbers(r.tally)}
                if r.identity is not None
                else {"skipped": r.note}
            )
            for r in results
        },
        "all": numbers(overall(results)),
        "wrong": [
            {
                "id": v.case.id,
                "reference": v.case.ref,
                "detail": v.case.detail,
                "expected_ref": v.case.expected_ref,
                "got": {
                    "state": v.moor.state,
                    "moved_to": v.moor.moved_to,
                    "axes": list(v.moor.axes),
                    "candidates": list(v.moor.candidates),
                    "similarities": list(v.moor.similarities),
                    "followed": v.moor.followed,
                    "final_state": v.moor.final_state,
                    "final_ref": v.moor.final_ref,
                    "final_axes": list(v.moor.final_axes),
                    "note": v.moor.note,
                },
            }
            for r in results
            for v in r.tally.misses
        ],
    }


def print_overall(results: list[LanguageResult]) -> None:
    ran = [r for r in results if r.identity is not None]
    if len(ran) < 2:
        return
    t = overall(ran)
    print(f"\nall languages: {t.cases} cases")
    for metric in METRICS:
        if metric in t.metrics:
            moor, baseline, whole = t.metrics[metric]
            print(f"  {metric:<26} moor {moor}/{whole}  baseline {baseline}/{whole}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--limit", type=int, default=None, help="cases per category and language")
    parser.add_argument("--json", type=Path, default=None, help="write the numbers here")
    parser.add_argument(
        "--language", choices=LANGUAGES, action="append", help="default: every language"
    )
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: CPUs)"
    )
    args = parser.parse_args(argv)
    languages = args.language or list(LANGUAGES)
    print(f"moor relocation — seed {SEED}, up to {args.limit or PER_CATEGORY} cases per category")
    results = run(languages, args.limit, args.jobs)
    print_overall(results)
    if args.json is not None:
        args.json.write_text(json.dumps(as_json(results, args.limit), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
