"""Every import in moor's code, lazy ones too, and the layer contract they must keep.

Written for this repository rather than taken from an import linter: the contract is a
dozen lines, and it must see imports inside functions and under `TYPE_CHECKING` and
`importlib.import_module("…")` with a constant name, which is where a layer would break
quietly (the CLI imports the language server lazily on purpose).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# package -> the first-party packages it may import (besides itself).
MAY_IMPORT: dict[str, frozenset[str]] = {
    "moor_extractors": frozenset(),
    "moor_store": frozenset(),
    "moor_engine": frozenset({"moor_extractors", "moor_store"}),
    "moor_lsp": frozenset({"moor_engine", "moor_extractors", "moor_store"}),
    "moor_mcp": frozenset({"moor_engine", "moor_extractors", "moor_store"}),
    "moor": frozenset({"moor_engine", "moor_extractors", "moor_store", "moor_lsp", "moor_mcp"}),
}
# A protocol's libraries belong to its surface alone: no protocol type below lsp/mcp.
OWNED_BY: dict[str, str] = {
    "pygls": "moor_lsp",
    "lsprotocol": "moor_lsp",
    "mcp": "moor_mcp",
    "starlette": "moor_mcp",
    "uvicorn": "moor_mcp",
}
# Imported by the CLI only inside the command that needs it (`moor lsp`, `moor mcp`).
LAZY_ONLY = frozenset({"moor_lsp", "moor_mcp"})


@dataclass(frozen=True)
class Import:
    path: str
    line: int
    module: str
    top_level: bool  # at module level (not in a function), so every importer pays for it

    @property
    def package(self) -> str:
        return self.module.split(".", 1)[0]


def imports(path: Path, rel: str) -> Iterator[Import]:
    tree = ast.parse(path.read_bytes(), rel)
    lazy: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            lazy.update(id(inner) for inner in ast.walk(node) if inner is not node)
    for node in ast.walk(tree):
        top = id(node) not in lazy
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(rel, node.lineno, alias.name, top)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield Import(rel, node.lineno, node.module, top)
        elif (
            isinstance(node, ast.Call)
            and _called(node.func) in {"import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield Import(rel, node.lineno, node.args[0].value, top)


def _called(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def violations(root: Path, packages: dict[str, str]) -> list[str]:
    """Every import that breaks the contract, in the packages found under `root`
    (`packages`: folder relative to root -> package name)."""
    found: list[str] = []
    for folder, package in packages.items():
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for item in imports(path, rel):
                where = f"{rel}:{item.line}: {package} imports {item.module}"
                other = item.package
                if other == package:
                    continue
                if other in MAY_IMPORT and other not in MAY_IMPORT[package]:
                    found.append(f"{where}: a layer imports one above it or beside it")
                elif other in OWNED_BY and OWNED_BY[other] != package:
                    found.append(f"{where}: only {OWNED_BY[other]} may import {other}")
                elif package == "moor" and other in LAZY_ONLY and item.top_level:
                    found.append(f"{where}: only inside the command that runs it")
    return found
