"""How well moor tells real drift from noise, against two naive baselines, per category.

Two sources of cases, each a symbol before and after a change with the trust state a memory
bound to it should then have:

* ``corpus`` — the labelled public drift corpus (real history of pallets/click and
  Textualize/rich), read at run time from ``$MOOR_SHARED/corpus/`` (by default, a
  ``shared`` folder beside the checkout);
* ``stdlib`` — mutations of the running interpreter's standard library, made and verified
  with Python's own ``ast`` and ``tokenize`` (never tree-sitter, which is what is tested).

Baselines, measured on the same cases in the same run: a whole-file hash (``current`` iff the
file's bytes are unchanged, ``gone`` if the file is deleted, else ``drifted``) and the raw
bytes of the symbol (``current`` iff byte-identical, ``gone`` if not found, else ``drifted``).
Neither can name a new place, so neither is ever right about a move.

    python bench/drift_quality.py [--limit N] [--json PATH] [--source corpus|stdlib]
"""

from __future__ import annotations

import argparse
import ast
import copy
import gzip
import io
import json
import keyword
import os
import platform
import random
import re
import shutil
import sys
import sysconfig
import tempfile
import time
import tokenize
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import member_cases
from case_workspace import apply_change, write_workspace

CATEGORIES = ("unchanged", "cosmetic", "docstring", "semantic", "moved", "renamed", "deleted")
# Share of cases moor must get right (the targets docs/benchmarks.md publishes).
TARGETS = {
    "unchanged": 1.0,
    "cosmetic": 1.0,
    "docstring": 0.95,
    "semantic": 1.0,
    "moved": 0.95,
    "renamed": 0.95,
    "deleted": 1.0,
}
SEED = 20240601
STDLIB_PER_CATEGORY = 100
MIN_BODY_STATEMENTS = 3
SHOWN_MISSES = 8


# --------------------------------------------------------------------------------------------
# Cases and verdicts


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    detail: str
    file_old: str
    symbol_old: str
    before: dict[str, str]
    after: dict[str, str | None]  # None: the file is deleted
    expected: str  # the trust state a bound memory should now have
    moved_to: str | None = None  # for `moved`: the reference it must name


@dataclass(frozen=True)
class Verdict:
    case: Case
    moor: str
    moor_moved_to: str | None
    file_hash: str
    symbol_bytes: str
    note: str = ""

    @property
    def moor_correct(self) -> bool:
        return is_correct(self.case, self.moor, self.moor_moved_to)

    @property
    def file_hash_correct(self) -> bool:
        return is_correct(self.case, self.file_hash, None)

    @property
    def symbol_bytes_correct(self) -> bool:
        return is_correct(self.case, self.symbol_bytes, None)


def is_correct(case: Case, state: str, moved_to: str | None) -> bool:
    if state != case.expected:
        return False
    return case.expected != "moved" or moved_to == case.moved_to


def expected_state(category: str, detail: str, file_old: str, file_new: str | None) -> str:
    """The corpus README's rule. A symbol that also left its file (two `docstring` cases
    whose symbol moved to another file) must be `moved`: its reference no longer holds."""
    if category == "deleted":
        return "gone"
    if category == "semantic":
        return "drifted"
    if category == "renamed" or (file_new is not None and file_new != file_old):
        return "moved"
    if category == "moved" and not detail.startswith("within_file"):
        return "moved"
    return "current"


# --------------------------------------------------------------------------------------------
# Where things are


def shared_dir() -> Path:
    override = os.environ.get("MOOR_SHARED")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1].parent / "shared"


def corpus_path() -> Path:
    return shared_dir() / "corpus" / "drift-public.jsonl.gz"


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


# --------------------------------------------------------------------------------------------
# Source (a): the labelled corpus


def load_corpus(path: Path) -> list[Case]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [_corpus_case(row) for row in rows]


def _corpus_case(row: dict[str, object]) -> Case:
    category, detail = str(row["category"]), str(row["detail"])
    file_old, symbol_old = str(row["file_old"]), str(row["symbol_old"])
    file_new = row.get("file_new")
    symbol_new = row.get("symbol_new")
    expected = expected_state(
        category, detail, file_old, None if file_new is None else str(file_new)
    )
    before = row["before"]
    after = row["after"]
    assert isinstance(before, dict) and isinstance(after, dict)
    return Case(
        id=str(row["id"]),
        category=category,
        detail=detail,
        file_old=file_old,
        symbol_old=symbol_old,
        before={str(k): str(v) for k, v in before.items()},
        after={str(k): None if v is None else str(v) for k, v in after.items()},
        expected=expected,
        moved_to=f"{file_new}#{symbol_new}" if expected == "moved" else None,
    )


def limit_per_category(cases: Iterable[Case], limit: int | None) -> list[Case]:
    counts: dict[str, int] = {}
    chosen = []
    for case in cases:
        counts[case.category] = counts.get(case.category, 0) + 1
        if limit is None or counts[case.category] <= limit:
            chosen.append(case)
    return chosen


# --------------------------------------------------------------------------------------------
# Source (b): mutations of the standard library, made with ast + tokenize


def stdlib_files(root: Path) -> list[Path]:
    """Sorted `.py` files of the standard library, without tests and site-packages."""
    skip = {"test", "tests", "idle_test", "site-packages", "__pycache__"}
    return sorted(
        path
        for path in root.rglob("*.py")
        if not skip.intersection(path.relative_to(root).parts) and path.is_file()
    )


@dataclass
class Module:
    """One stdlib file, read and parsed once."""

    rel: str
    text: str
    tree: ast.Module
    tokens: list[tokenize.TokenInfo]
    _outside: dict[str, list[str] | None] = field(default_factory=dict)

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @cached_property
    def qnames(self) -> list[str]:
        return all_qnames(self.tree)

    def outside(self, qname: str) -> list[str] | None:
        if qname not in self._outside:
            self._outside[qname] = outside(self.tree, self.lines, qname)
        return self._outside[qname]


def read_module(path: Path, root: Path) -> Module | None:
    try:
        text = path.read_bytes().decode("utf-8")
        if "\r" in text or "\t" in text:
            return None  # keep line arithmetic simple; such files are rare in the stdlib
        tree = ast.parse(text)
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (UnicodeDecodeError, SyntaxError, tokenize.TokenError, ValueError):
        return None
    return Module(path.relative_to(root).as_posix(), text, tree, tokens)


FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Target:
    """A function or method a memory can name: `Class.method` or `function`."""

    qname: str
    node: FunctionNode
    parent: ast.Module | ast.ClassDef

    @property
    def first_line(self) -> int:
        return min([self.node.lineno, *(d.lineno for d in self.node.decorator_list)])

    @property
    def end_line(self) -> int:
        assert self.node.end_lineno is not None
        return self.node.end_lineno


def all_qnames(tree: ast.Module) -> list[str]:
    """Every definition's qualified name (other statements do not add a level), and the
    names a module-level assignment binds: `RenderGroup = Group` defines a name too."""
    names: list[str] = [
        target.id
        for stmt in tree.body
        if isinstance(stmt, ast.Assign | ast.AnnAssign)
        for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
        if isinstance(target, ast.Name)
    ]

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qname = prefix + child.name
                names.append(qname)
                visit(child, qname + ".")
            elif isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                visit(child, prefix)

    visit(tree, "")
    return names


def code_body(node: FunctionNode | ast.ClassDef) -> list[ast.stmt]:
    body = node.body
    return body[1:] if ast.get_docstring(node, clean=False) is not None else body


def targets(module: Module) -> list[Target]:
    """Functions and methods with at least three statements besides a docstring, whose
    qualified name and whose body are both unique in their file (so a rename or a deletion
    has one right answer)."""
    counts: dict[str, int] = {}
    for qname in module.qnames:
        counts[qname] = counts.get(qname, 0) + 1
    shapes: dict[tuple[str, ...], list[FunctionNode]] = {}
    for function in all_functions(module.tree):
        shapes.setdefault(_shape(function), []).append(function)
    found = []
    for qname, node, parent in _top_functions(module.tree):
        if (
            counts[qname] == 1
            and len(code_body(node)) >= MIN_BODY_STATEMENTS
            and node.body[0].lineno > _header_end(node)
            and _body_is_unique(node, shapes[_shape(node)])
        ):
            found.append(Target(qname, node, parent))
    return found


def all_functions(node: ast.AST) -> Iterator[FunctionNode]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield child
        if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
            yield from all_functions(child)


def _shape(function: FunctionNode) -> tuple[str, ...]:
    return tuple(type(stmt).__name__ for stmt in code_body(function))


def _body_is_unique(node: FunctionNode, alike: list[FunctionNode]) -> bool:
    """No other function has the same code body (docstring aside)."""

    def key(function: FunctionNode) -> str:
        return "\n".join(ast.dump(stmt) for stmt in code_body(function))

    mine = key(node)
    return all(key(other) != mine for other in alike if other is not node)


def _header_end(node: FunctionNode) -> int:
    parts = [node.args, *([node.returns] if node.returns is not None else [])]
    ends = [getattr(n, "end_lineno", None) or 0 for part in parts for n in ast.walk(part)]
    return max([node.lineno, *ends])


def _top_functions(
    tree: ast.Module,
) -> Iterator[tuple[str, FunctionNode, ast.Module | ast.ClassDef]]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node, tree
        elif isinstance(node, ast.ClassDef):
            for child in node.body:
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield f"{node.name}.{child.name}", child, node


def find_function(tree: ast.Module, qname: str) -> FunctionNode | None:
    for name, node, _parent in _top_functions(tree):
        if name == qname:
            return node
    return None


# --- verification with ast ------------------------------------------------------------------


def parses(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def without_docstrings(node: ast.AST) -> str:
    """The dump of a tree with every docstring's text blanked."""
    clone = copy.deepcopy(node)
    for inner in ast.walk(clone):
        if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
            first = inner.body[0] if inner.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                first.value.value = ""
    return ast.dump(clone)


def outside(tree: ast.Module, lines: list[str], qname: str) -> list[str] | None:
    """What the module holds besides the function `qname`: the text of every other statement
    (for the class holding it: its header's dump, then each other member's text).

    Each statement is parsed from its own text, so equal lists mean equal syntax trees outside
    the function, without dumping whole modules. None when the function is its class's only
    member (cutting it would not leave valid Python).
    """
    parts = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == qname:
            continue
        if isinstance(stmt, ast.ClassDef) and qname.startswith(stmt.name + "."):
            method = qname[len(stmt.name) + 1 :]
            rest = [member for member in stmt.body if not _is_function_named(member, method)]
            if not rest:
                return None
            header = copy.copy(stmt)
            header.body = []
            parts.append(ast.dump(header))
            parts.extend(statement_text(lines, member) for member in rest)
            continue
        parts.append(statement_text(lines, stmt))
    return parts


def _is_function_named(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name


def statement_text(lines: list[str], stmt: ast.stmt) -> str:
    first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
    return "\n".join(lines[first - 1 : stmt.end_lineno])


def same_elsewhere(module: Module, new: ast.Module, text: str, qname: str) -> bool:
    before = module.outside(qname)
    return before is not None and before == outside(new, text.split("\n"), qname)


# --- text helpers ---------------------------------------------------------------------------


def replace_span(lines: list[str], start: tuple[int, int], end: tuple[int, int], text: str) -> str:
    """`lines` with the (row, col) span [start, end) replaced; rows are 1-based."""
    head = "\n".join([*lines[: start[0] - 1], lines[start[0] - 1][: start[1]]])
    tail = "\n".join([lines[end[0] - 1][end[1] :], *lines[end[0] :]])
    return head + text + tail


def string_continuation_rows(tokens: list[tokenize.TokenInfo]) -> set[int]:
    """Rows that continue a token spanning lines (a multi-line string): their leading
    whitespace is string content, not indentation."""
    rows: set[int] = set()
    for token in tokens:
        if token.start[0] != token.end[0]:
            rows.update(range(token.start[0] + 1, token.end[0] + 1))
    return rows


def docstring_token(module: Module, node: FunctionNode | ast.ClassDef) -> tokenize.TokenInfo | None:
    if ast.get_docstring(node, clean=False) is None:
        return None
    row = node.body[0].lineno
    for token in module.tokens:
        if token.type == tokenize.STRING and token.start[0] == row:
            return token
    return None


def indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


# --- the mutations --------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    detail: str
    after: dict[str, str | None]
    moved_to: str | None = None


Mutator = Callable[[Module, Target, random.Random], Mutation | None]


def mutate_unchanged(module: Module, target: Target, rng: random.Random) -> Mutation | None:
    return Mutation("unchanged", {module.rel: module.text})


def mutate_cosmetic(module: Module, target: Target, rng: random.Random) -> Mutation | None:
    """One formatting change (kind chosen by the seed, others tried next); the module's
    syntax tree must stay equal."""
    kinds: list[tuple[str, Callable[[Module, Target, random.Random], str | None]]] = [
        ("reindent", _reindent),
        ("comments", _add_comments),
        ("rewrap_call", _rewrap_call),
    ]
    start = rng.randrange(len(kinds))
    for name, change in kinds[start:] + kinds[:start]:
        text = change(module, target, rng)
        new = parses(text) if text is not None else None
        node = find_function(new, target.qname) if new is not None else None
        if (
            text is not None
            and new is not None
            and node is not None
            and ast.dump(node) == ast.dump(target.node)
            and same_elsewhere(module, new, text, target.qname)
        ):
            return Mutation(f"cosmetic:{name}", {module.rel: text})
    return None


def _reindent(module: Module, target: Target, rng: random.Random) -> str | None:
    """Indent the whole body of the function four more spaces (string contents kept)."""
    protected = string_continuation_rows(module.tokens)
    lines = module.lines
    first = target.node.body[0].lineno
    for row in range(first, target.end_line + 1):
        line = lines[row - 1]
        if row not in protected and line.strip():
            lines[row - 1] = "    " + line
    return "\n".join(lines)


def _add_comments(module: Module, target: Target, rng: random.Random) -> str | None:
    """A blank line and a comment line before two statements of the body."""
    body = code_body(target.node)
    chosen = sorted(rng.sample(range(len(body)), 2))
    lines = module.lines
    for index in reversed(chosen):
        stmt = body[index]
        row = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        pad = indentation(lines[row - 1])
        lines[row - 1 : row - 1] = ["", f"{pad}# A comment added by the benchmark ({index})."]
    return "\n".join(lines)


def _rewrap_call(module: Module, target: Target, rng: random.Random) -> str | None:
    """Put each argument of a one-line call on its own line, with a magic trailing comma."""
    calls = _rewrappable_calls(target.node)
    if not calls:
        return None
    call = rng.choice(calls)
    lines = module.lines
    row = call.lineno
    line = lines[row - 1]
    encoded = line.encode("utf-8")

    def col(byte_offset: int | None) -> int:
        assert byte_offset is not None
        return len(encoded[:byte_offset].decode("utf-8"))

    func_end, call_end = col(call.func.end_col_offset), col(call.end_col_offset)
    open_paren = line.index("(", func_end)
    if line[func_end:open_paren].strip() or line[call_end - 1] != ")":
        return None
    arguments: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    parts = sorted(arguments, key=lambda n: (n.lineno, n.col_offset))
    pieces = [line[col(p.col_offset) : col(p.end_col_offset)] for p in parts]
    pad = indentation(line)
    wrapped = [line[: open_paren + 1]]
    wrapped += [f"{pad}    {piece}," for piece in pieces]
    wrapped.append(pad + line[call_end - 1 :])
    lines[row - 1 : row] = wrapped
    return "\n".join(lines)


def _rewrappable_calls(function: FunctionNode) -> list[ast.Call]:
    in_fstrings = {
        id(inner)
        for node in ast.walk(function)
        if isinstance(node, ast.JoinedStr)
        for inner in ast.walk(node)
    }
    calls = []
    for stmt in code_body(function):
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Call)
                and id(node) not in in_fstrings
                and node.lineno == node.end_lineno
                and len(node.args) + len(node.keywords) >= 2
                and all(a.lineno == node.lineno for a in node.args)
                and all(k.lineno == node.lineno for k in node.keywords)
            ):
                calls.append(node)
    return calls


def mutate_docstring(module: Module, target: Target, rng: random.Random) -> Mutation | None:
    """Insert words at the start of the symbol's own docstring; nothing else changes."""
    token = docstring_token(module, target.node)
    if token is None:
        return None
    match = re.match(r"[rRuU]*('''|\"\"\"|'|\")", token.string)
    if match is None:
        return None
    row, col = token.start
    at = (row, col + match.end())
    text = replace_span(module.lines, at, at, "Edited by the benchmark. ")
    new = parses(text)
    node = find_function(new, target.qname) if new is not None else None
    if new is None or node is None or not same_elsewhere(module, new, text, target.qname):
        return None
    if without_docstrings(node) != without_docstrings(target.node):
        return None
    if ast.get_docstring(node, clean=False) == ast.get_docstring(target.node, clean=False):
        return None
    return Mutation("docstring", {module.rel: text})


_COMPARISONS = {"==": "!=", "!=": "==", "<": "<=", "<=": "<", ">": ">=", ">=": ">"}


def mutate_semantic(module: Module, target: Target, rng: random.Random) -> Mutation | None:
    """Change one code token of the body: a number, a comparison, an identifier or a string
    literal (not a docstring). The function's tree (docstrings blanked) must differ and the
    rest of the module must not."""
    by_kind = _semantic_tokens(module, target)
    kinds = sorted(kind for kind, tokens in by_kind.items() if tokens)
    rng.shuffle(kinds)
    for kind in kinds:
        tokens = by_kind[kind]
        for token in rng.sample(tokens, min(len(tokens), 5)):
            text = replace_span(module.lines, token.start, token.end, _changed(kind, token.string))
            if _is_semantic(module, target, text):
                return Mutation(f"semantic:{kind}", {module.rel: text})
    return None


def _semantic_tokens(module: Module, target: Target) -> dict[str, list[tokenize.TokenInfo]]:
    body = code_body(target.node)
    start = (body[0].lineno, 0)
    end = (target.end_line + 1, 0)
    docstrings = {
        token.start
        for node in ast.walk(target.node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        for token in [docstring_token(module, node)]
        if token is not None
    }
    by_kind: dict[str, list[tokenize.TokenInfo]] = {
        "number": [],
        "comparison": [],
        "identifier": [],
        "string": [],
    }
    for token in module.tokens:
        if not start <= token.start < end or token.start in docstrings:
            continue
        if token.type == tokenize.NUMBER and not token.string.lower().endswith("j"):
            by_kind["number"].append(token)
        elif token.type == tokenize.OP and token.string in _COMPARISONS:
            by_kind["comparison"].append(token)
        elif token.type == tokenize.NAME and not keyword.iskeyword(token.string):
            if not keyword.issoftkeyword(token.string):
                by_kind["identifier"].append(token)
        elif token.type == tokenize.STRING and re.match(r"[a-zA-Z]*['\"]", token.string):
            by_kind["string"].append(token)
    return by_kind


def _changed(kind: str, text: str) -> str:
    if kind == "number":
        value = ast.literal_eval(text)
        return str(value + 1) if isinstance(value, int) else repr(value + 1.0)
    if kind == "comparison":
        return _COMPARISONS[text]
    if kind == "identifier":
        return text + "_changed"
    match = re.match(r"[a-zA-Z]*('''|\"\"\"|'|\")", text)
    assert match is not None
    return text[: match.end()] + "changed " + text[match.end() :]


def _is_semantic(module: Module, target: Target, text: str) -> bool:
    new = parses(text)
    node = find_function(new, target.qname) if new is not None else None
    if new is None or node is None or not same_elsewhere(module, new, text, target.qname):
        return False
    return without_docstrings(node) != without_docstrings(target.node)


def _cut(module: Module, target: Target) -> tuple[str, list[str]] | None:
    """The module without the function's lines, and those lines; None if the cut is not
    exactly the function (verified with ast)."""
    lines = module.lines
    start, end = target.first_line, target.end_line
    removed = lines[start - 1 : end]
    text = "\n".join(lines[: start - 1] + lines[end:])
    new = parses(text)
    if new is None or not same_elsewhere(module, new, text, target.qname):
        return None
    return text, removed


def mutate_moved(module: Module, target: Target, rng: random.Random) -> Mutation | None:
    """Cut the function (or the method, inside a class of the same name) into a new file
    of the same package, unchanged."""
    cut = _cut(module, target)
    if cut is None:
        return None
    text, removed = cut
    folder, _, name = module.rel.rpartition("/")
    new_rel = f"{folder}/_moved_{name}" if folder else f"_moved_{name}"
    if isinstance(target.parent, ast.ClassDef):
        removed = [f"class {target.parent.name}:", *removed]
    new_text = "\n".join(["# Moved here by the benchmark.", *removed, ""])
    new_tree = parses(new_text)
    node = find_function(new_tree, target.qname) if new_tree is not None else None
    if node is None or ast.dump(node) != ast.dump(target.node):
        return None
    return Mutation(
        "moved:other_file", {module.rel: text, new_rel: new_text}, f"{new_rel}#{target.qname}"
    )


def mutate_renamed(module: Module, target: Target, rng: random.Random) -> Mutation | None:
    """Give the function a new name in the same file; its body stays as it was."""
    name_token = _name_token(module, target.node)
    if name_token is None:
        return None
    new_name = target.node.name + "_renamed"
    container, _, _ = target.qname.rpartition(".")
    new_qname = f"{container}.{new_name}" if container else new_name
    if new_qname in module.qnames:
        return None
    text = replace_span(module.lines, name_token.start, name_token.end, new_name)
    new = parses(text)
    node = find_function(new, new_qname) if new is not None else None
    if new is None or node is None:
        return None
    if module.outside(target.qname) != outside(new, text.split("\n"), new_qname):
        return None
    node.name = target.node.name
    if ast.dump(node) != ast.dump(target.node):
        return None
    return Mutation("renamed:name_changed", {module.rel: text}, f"{module.rel}#{new_qname}")


def _name_token(module: Module, node: FunctionNode) -> tokenize.TokenInfo | None:
    seen_def = False
    for token in module.tokens:
        if token.start[0] < node.lineno:
            continue
        if seen_def:
            return token if token.string == node.name else None
        seen_def = token.type == tokenize.NAME and token.string == "def"
    return None


def mutate_deleted(module: Module, target: Target, rng: random.Random) -> Mutation | None:
    cut = _cut(module, target)
    if cut is None:
        return None
    return Mutation("deleted", {module.rel: cut[0]})


MUTATORS: dict[str, tuple[Mutator, str]] = {
    "unchanged": (mutate_unchanged, "current"),
    "cosmetic": (mutate_cosmetic, "current"),
    "docstring": (mutate_docstring, "current"),
    "semantic": (mutate_semantic, "drifted"),
    "moved": (mutate_moved, "moved"),
    "renamed": (mutate_renamed, "moved"),
    "deleted": (mutate_deleted, "gone"),
}


def stdlib_cases(per_category: int) -> list[Case]:
    """Up to `per_category` cases per category, at most one per file and category.

    Files are visited in a seeded shuffle of the sorted file list; each (file, category)
    draws from its own seeded generator, so a smaller `per_category` yields exactly the first
    cases of a larger one.
    """
    root = stdlib_root()
    files = stdlib_files(root)
    random.Random(SEED).shuffle(files)
    chosen: dict[str, list[Case]] = {category: [] for category in CATEGORIES}
    for path in files:
        if all(len(cases) >= per_category for cases in chosen.values()):
            break
        module = read_module(path, root)
        if module is None:
            continue
        found = targets(module)
        for category in CATEGORIES:
            if found and len(chosen[category]) < per_category:
                case = _case_in_file(module, found, category, len(chosen[category]))
                if case is not None:
                    chosen[category].append(case)
    return [case for category in CATEGORIES for case in chosen[category]]


def _case_in_file(module: Module, found: list[Target], category: str, number: int) -> Case | None:
    rng = random.Random(f"{SEED}/{module.rel}/{category}")
    mutate, expected = MUTATORS[category]
    candidates = list(found)
    rng.shuffle(candidates)
    for target in candidates[:5]:
        if category == "docstring" and docstring_token(module, target.node) is None:
            continue
        mutation = mutate(module, target, rng)
        if mutation is None:
            continue
        return Case(
            id=f"stdlib-{category}-{number + 1:03d}",
            category=category,
            detail=mutation.detail,
            file_old=module.rel,
            symbol_old=target.qname,
            before={module.rel: module.text},
            after=mutation.after,
            expected=expected,
            moved_to=mutation.moved_to,
        )
    return None


# --------------------------------------------------------------------------------------------
# Running moor and the baselines


def run_moor(case: Case, scratch: Path) -> tuple[str, str | None, str]:
    """(state, moved_to, note) of the case's memory after bind, change and check."""
    from moor_engine.grounding.actions import bind
    from moor_engine.session import Session

    root = scratch / case.id
    try:
        write_workspace(
            root,
            f"{case.file_old}#{case.symbol_old}",
            case.id,
            case.before,
            "A note about this code.",
        )
        with Session.open(root) as session:
            outcome = bind(session, [])
        if outcome.refused:
            return "bind-refused", None, "; ".join(r.message for r in outcome.refused)
        apply_change(root, case.before, case.after)
        with Session.open(root) as session:
            report = session.check(session.select([]))
        memory = report.memories[0]
        anchor = memory.anchors[0] if memory.anchors else None
        note = "" if anchor is None else (anchor.detail or "")
        return memory.state.value, anchor.moved_to if anchor else None, note
    except Exception as error:  # a crash is a wrong answer, reported with its cause
        return "error", None, f"{type(error).__name__}: {error}"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def file_hash_baseline(case: Case) -> str:
    after = case.after.get(case.file_old, case.before[case.file_old])
    if after is None:
        return "gone"
    return "current" if after == case.before[case.file_old] else "drifted"


def symbol_text(source: str, qname: str, path: str = "a.py") -> str | None:
    from moor_extractors.languages import language_for_path
    from moor_extractors.symbols import parse_source

    parsed = parse_source(language_for_path(path) or "python", source.encode("utf-8"))
    for site in parsed.sites():
        if site.qname == qname:
            text: str = parsed.source_text(site)
            return text
    return None


def symbol_bytes_baseline(case: Case) -> str:
    after = case.after.get(case.file_old, case.before[case.file_old])
    old = symbol_text(case.before[case.file_old], case.symbol_old, case.file_old)
    new = None if after is None else symbol_text(after, case.symbol_old, case.file_old)
    if new is None:
        return "gone"
    return "current" if new == old else "drifted"


def judge_one(case: Case, scratch: Path) -> Verdict:
    state, moved_to, note = run_moor(case, scratch)
    return Verdict(
        case, state, moved_to, file_hash_baseline(case), symbol_bytes_baseline(case), note
    )


def judge(cases: list[Case], scratch: Path, jobs: int = 1) -> list[Verdict]:
    """Every case in its own workspace; `jobs` processes (results keep the cases' order)."""
    if jobs <= 1:
        return [judge_one(case, scratch) for case in cases]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(judge_one, cases, [scratch] * len(cases), chunksize=8))


# --------------------------------------------------------------------------------------------
# Results


@dataclass
class Tally:
    total: int = 0
    moor_correct: int = 0
    file_hash_correct: int = 0
    symbol_bytes_correct: int = 0
    misses: list[Verdict] = field(default_factory=list)

    def add(self, verdict: Verdict) -> None:
        self.total += 1
        self.moor_correct += verdict.moor_correct
        self.file_hash_correct += verdict.file_hash_correct
        self.symbol_bytes_correct += verdict.symbol_bytes_correct
        if not verdict.moor_correct:
            self.misses.append(verdict)

    def numbers(self) -> dict[str, int]:
        return {
            "total": self.total,
            "moor_correct": self.moor_correct,
            "file_hash_correct": self.file_hash_correct,
            "symbol_bytes_correct": self.symbol_bytes_correct,
        }


def tally(verdicts: list[Verdict]) -> dict[str, Tally]:
    tallies = {category: Tally() for category in CATEGORIES}
    for verdict in verdicts:
        tallies[verdict.case.category].add(verdict)
    return {category: t for category, t in tallies.items() if t.total}


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def describe_miss(verdict: Verdict) -> str:
    case = verdict.case
    want = case.expected + (f" -> {case.moved_to}" if case.expected == "moved" else "")
    got = verdict.moor + (f" -> {verdict.moor_moved_to}" if verdict.moor_moved_to else "")
    where = f"{case.file_old}#{case.symbol_old}"
    note = f"  [{verdict.note}]" if verdict.note and verdict.moor != case.expected else ""
    return f"{case.id} {where} ({case.detail}): expected {want}, got {got}{note}"


def print_table(title: str, tallies: dict[str, Tally]) -> None:
    stream = sys.stdout
    print(f"\n{title}", file=stream)
    header = (
        f"{'category':<10} {'cases':>5}  {'moor':>14}  {'file hash':>14}  "
        f"{'symbol bytes':>14}  target"
    )
    print(header, file=stream)
    print("-" * len(header), file=stream)
    total = Tally()
    for category, t in tallies.items():
        ok = t.moor_correct >= TARGETS[category] * t.total
        print(
            f"{category:<10} {t.total:>5}  {_cell(t.moor_correct, t.total)}  "
            f"{_cell(t.file_hash_correct, t.total)}  {_cell(t.symbol_bytes_correct, t.total)}  "
            f">= {TARGETS[category]:.0%} {'ok' if ok else 'MISSED'}",
            file=stream,
        )
        total.total += t.total
        total.moor_correct += t.moor_correct
        total.file_hash_correct += t.file_hash_correct
        total.symbol_bytes_correct += t.symbol_bytes_correct
    print(
        f"{'all':<10} {total.total:>5}  {_cell(total.moor_correct, total.total)}  "
        f"{_cell(total.file_hash_correct, total.total)}  "
        f"{_cell(total.symbol_bytes_correct, total.total)}",
        file=stream,
    )
    for category, t in tallies.items():
        if t.misses:
            print(f"  {category}: {len(t.misses)} misclassified by moor", file=stream)
            for verdict in t.misses[:SHOWN_MISSES]:
                print(f"    {describe_miss(verdict)}", file=stream)


def _cell(part: int, whole: int) -> str:
    return f"{part:>4} ({percent(part, whole):>6})"


@dataclass
class SourceResult:
    name: str
    title: str
    tallies: dict[str, Tally]
    seconds: float


MEMBER_SOURCES = {f"{language}_members": language for language in member_cases.LANGUAGES}


def member_source_cases(name: str, per_category: int) -> list[Case]:
    """Cases about members of types (`member_cases`), as drift cases of this benchmark."""
    found = member_cases.cases(MEMBER_SOURCES[name], per_category, SEED)
    numbers: dict[str, int] = {}
    result = []
    for made in found:
        numbers[made.category] = numbers.get(made.category, 0) + 1
        result.append(
            Case(
                id=f"{name}-{made.category}-{numbers[made.category]:03d}",
                category=made.category,
                detail=made.detail,
                file_old=made.rel,
                symbol_old=made.qname,
                before={made.rel: made.before},
                after=made.after,
                expected=member_cases.EXPECTED[made.category],
                moved_to=made.moved_to,
            )
        )
    return result


def run_source(name: str, limit: int | None, scratch: Path, jobs: int) -> SourceResult:
    started = time.perf_counter()
    if name in MEMBER_SOURCES:
        language = MEMBER_SOURCES[name]
        cases = member_source_cases(name, member_cases.PER_CATEGORY if limit is None else limit)
        title = (
            f"{name}: members of {language} types in "
            f"{member_cases.source_identity(language)} (seed {SEED})"
        )
    elif name == "corpus":
        cases = limit_per_category(load_corpus(corpus_path()), limit)
        title = "corpus: drift-public (pallets/click, Textualize/rich history; labelled)"
    else:
        cases = stdlib_cases(STDLIB_PER_CATEGORY if limit is None else limit)
        title = (
            f"stdlib: mutations of the Python {platform.python_version()} standard library "
            f"(seed {SEED}, ast/tokenize-verified)"
        )
    tallies = tally(judge(cases, scratch, jobs))
    return SourceResult(name, title, tallies, time.perf_counter() - started)


def run(sources: Iterable[str], limit: int | None, jobs: int = 1) -> list[SourceResult]:
    with tempfile.TemporaryDirectory(prefix="moor-drift-") as scratch:
        return [run_source(name, limit, Path(scratch), jobs) for name in sources]


def as_json(results: list[SourceResult], limit: int | None) -> dict[str, object]:
    return {
        "python": platform.python_version(),
        "seed": SEED,
        "limit": limit,
        "sources": {r.name: {c: t.numbers() for c, t in r.tallies.items()} for r in results},
        "misclassified": {
            r.name: {
                c: [
                    {
                        "id": v.case.id,
                        "reference": f"{v.case.file_old}#{v.case.symbol_old}",
                        "detail": v.case.detail,
                        "expected": v.case.expected,
                        "expected_moved_to": v.case.moved_to,
                        "got": v.moor,
                        "got_moved_to": v.moor_moved_to,
                        "note": v.note,
                    }
                    for v in t.misses
                ]
                for c, t in r.tallies.items()
                if t.misses
            }
            for r in results
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--limit", type=int, default=None, help="cases per category")
    parser.add_argument("--json", type=Path, default=None, help="write the numbers here")
    parser.add_argument(
        "--source",
        choices=("corpus", "stdlib", *MEMBER_SOURCES),
        action="append",
        help="default: corpus and stdlib",
    )
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: CPUs)"
    )
    args = parser.parse_args(argv)
    sources = args.source or ["corpus", "stdlib"]
    print(f"moor drift quality — Python {platform.python_version()}, seed {SEED}")
    results = run(sources, args.limit, args.jobs)
    for result in results:
        print_table(f"{result.title}  [{result.seconds:.1f} s]", result.tallies)
    if args.json is not None:
        args.json.write_text(json.dumps(as_json(results, args.limit), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
