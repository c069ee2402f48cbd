"""No import cycle among the CLI's modules: `main` imports the command modules, and what
they share lives in modules below both (`sessions`, `arguments`, `hook_reply`), never in
`main` or in another command module that imports them back. Lazy imports count too: a
cycle through a function-level import is the same knot, only hidden."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli_graph(folder: Path, package: str = "moor") -> dict[str, set[str]]:
    """module -> the modules of `package` it imports (anywhere in the file)."""
    modules = {path.stem for path in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_bytes(), path.name)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == package:  # `from moor import x`: x is a module
                    names = [f"{package}.{alias.name}" for alias in node.names]
                else:
                    names = [node.module]
            else:
                continue
            for name in names:
                head, _, rest = name.partition(".")
                module = rest.split(".", 1)[0]
                if head == package and module in modules and module != path.stem:
                    found.add(module)
        graph[path.stem] = found
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each module that is on one (as a path that returns to its start)."""
    found: list[list[str]] = []
    seen_in_cycle: set[str] = set()
    for start in sorted(graph):
        if start in seen_in_cycle:
            continue
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        visited: set[str] = set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    found.append([*path, start])
                    seen_in_cycle.update(path)
                    stack.clear()
                    break
                if nxt not in visited:
                    visited.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return found


def test_no_module_of_the_cli_imports_one_that_imports_it_back() -> None:
    graph = cli_graph(ROOT / "cli/moor")
    # The scan sees the edges it must judge: main importing the command modules, and the
    # command modules importing what they share.
    assert {"recall_commands", "memory_commands"} <= graph["main"]
    assert "sessions" in graph["recall_commands"]
    assert cycles(graph) == []


def test_a_planted_lazy_import_back_into_main_is_a_cycle(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("from moor import thing_commands\n")
    (tmp_path / "thing_commands.py").write_text(
        "def run():\n    from moor.main import helper\n    return helper\n"
    )
    (tmp_path / "below.py").write_text("import json\n")
    assert cycles(cli_graph(tmp_path)) == [["main", "thing_commands", "main"]]
