"""The code a document cites (`file.py`, `file.py#name`, `moor_engine.grounding.about`), and
what is wrong with each.

A path is resolved the way ARCHITECTURE.md writes it: in full
(`engine/moor_engine/grounding/check.py`), without the package folder
(`engine/grounding/check.py`, `store/lockfile.py`), from the package
(`moor_extractors/frontmatter.py`), or by its name alone (`check.py`); `lang_*.py` is a
glob. A name is checked with moor's own listing (`moor symbols`: the definitions a
reference can name exactly), so the map is read the way moor reads a memory's `about:`.
A cited function or method must also be used somewhere in moor's code outside its own
definition: a decision documented in a function nobody calls is not where it lives.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from moor_extractors.languages import language_for_path
from moor_extractors.resolve import references
from moor_extractors.symbols import parse_source

ROOT = Path(__file__).resolve().parents[2]
# (folder, package): the product's code, as ARCHITECTURE.md's layer table names it.
PACKAGES = (
    ("cli", "moor"),
    ("engine", "moor_engine"),
    ("extractors", "moor_extractors"),
    ("store", "moor_store"),
    ("lsp", "moor_lsp"),
    ("mcp", "moor_mcp"),
)
CALLABLE = frozenset({"function", "method"})

_SPAN = re.compile(r"`([^`\n]+)`")
_CITED = re.compile(r"(?<![\w/.*-])((?:[\w.*-]+/)*[\w*-]+\.py)(?:#([\w.@]+))?(?![\w/])")
_NAME_ONLY = re.compile(r"^#([\w.@]+)$")
# `moor_engine.grounding.about`, `moor_store.inside`: a module of one of moor's packages, as
# imported.
# Not `moor.…`: `moor.lock` and `moor.toml` are files.
_MODULE = re.compile(r"^(moor_[a-z]+)((?:\.[a-z_][a-z0-9_]*)+)$")


@dataclass(frozen=True)
class Citation:
    document: str
    line: int
    path: str
    name: str | None

    def __str__(self) -> str:
        cited = self.path + (f"#{self.name}" if self.name else "")
        return f"{self.document}:{self.line}: {cited}"


def citations(document: Path, text: str) -> Iterator[Citation]:
    """Every `file.py` and `file.py#name` in the document's code spans; a span that is only
    `#name` names a definition of the file cited last on the same line."""
    rel = document.relative_to(ROOT).as_posix() if document.is_absolute() else str(document)
    for number, line in enumerate(text.splitlines(), start=1):
        last: str | None = None
        for span in _SPAN.findall(line):
            only = _NAME_ONLY.match(span.strip())
            if only is not None and last is not None:
                yield Citation(rel, number, last, only.group(1))
                continue
            module = _MODULE.match(span.strip())
            if module is not None and any(module.group(1) == p for _, p in PACKAGES):
                folder = next(f for f, p in PACKAGES if p == module.group(1))
                parts = module.group(2).lstrip(".").split(".")
                cited = f"{folder}/{module.group(1)}/{'/'.join(parts)}.py"
                yield Citation(rel, number, cited, None)
                continue
            for match in _CITED.finditer(span):
                last = match.group(1)
                yield Citation(rel, number, last, match.group(2))


def python_files(root: Path = ROOT) -> list[str]:
    """The repository's Python files, relative to it (the tests and tools too)."""
    found: list[str] = []
    for folder in ("cli", "engine", "extractors", "store", "lsp", "mcp", "tests", "bench"):
        found.extend(p.relative_to(root).as_posix() for p in (root / folder).rglob("*.py"))
    return sorted(found)


def spellings(rel: str) -> set[str]:
    """How a document may write a file's path: in full, or without its package folder."""
    forms = {rel}
    for folder, package in PACKAGES:
        prefix = f"{folder}/{package}/"
        if rel.startswith(prefix):
            rest = rel.removeprefix(prefix)
            forms |= {f"{folder}/{rest}", f"{package}/{rest}"}
    return forms


def candidates(cited: str, files: Iterable[str]) -> list[str]:
    """The files a cited path may be: one whose spelling ends with it."""
    found = []
    for rel in files:
        for form in spellings(rel):
            parts = form.split("/")
            tail = "/".join(parts[-len(cited.split("/")) :])
            if fnmatch.fnmatchcase(tail, cited):
                found.append(rel)
                break
    return found


@cache
def definitions(rel: str, root: Path = ROOT) -> dict[str, str]:
    """What `moor symbols` lists for a file: each exact name and its kind."""
    language = language_for_path(rel)
    assert language is not None, rel
    parsed = parse_source(language, (root / rel).read_bytes())
    return {symbol.symbol: symbol.kind for symbol in references(parsed, rel)}


@cache
def used_names(root: Path = ROOT) -> dict[str, set[str]]:
    """Every identifier moor's code uses (a name read, an attribute), with the files it is
    used in; a definition's own name is not a use of it."""
    used: dict[str, set[str]] = {}
    for folder, package in PACKAGES:
        for path in (root / folder / package).rglob("*.py"):
            rel = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_bytes(), rel)):
                if isinstance(node, ast.Name):
                    used.setdefault(node.id, set()).add(rel)
                elif isinstance(node, ast.Attribute):
                    used.setdefault(node.attr, set()).add(rel)
                elif isinstance(node, ast.ImportFrom):
                    for alias in node.names:
                        used.setdefault(alias.name, set()).add(rel)
    return used


def names_moor(citation: Citation) -> bool:
    """Whether a citation names moor's own code by its folder: a manual's `net/client.py`
    or `app/bad\\xff.py` is an example of a user's code, not a claim about moor's."""
    first = citation.path.split("/", 1)[0]
    return "/" in citation.path and any(first in pair for pair in PACKAGES)


def problems(
    cited: Iterable[Citation], root: Path = ROOT, files: list[str] | None = None
) -> list[str]:
    """What is wrong with each citation: a file that does not exist, a name that is no
    definition of it (by moor's own listing), a function that nothing calls."""
    files = python_files(root) if files is None else files
    found: list[str] = []
    for citation in cited:
        paths = candidates(citation.path, files)
        if not paths:
            found.append(f"{citation}: no such file")
            continue
        if citation.name is None:
            continue
        kinds = {
            definitions(rel, root)[citation.name]
            for rel in paths
            if citation.name in definitions(rel, root)
        }
        if not kinds:
            found.append(f"{citation}: no definition of {citation.name} in {', '.join(paths)}")
            continue
        own = citation.name.rsplit(".", 1)[-1]
        if kinds <= CALLABLE and not own.startswith("__") and not used_names(root).get(own):
            found.append(f"{citation}: {citation.name} is defined but nothing in moor calls it")
    return found
