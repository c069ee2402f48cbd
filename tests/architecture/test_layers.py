"""The layers of ARCHITECTURE.md hold in every import, lazy ones included: extractors and
store know nothing of each other or of anything above; the engine uses both; the surfaces
use the engine; a protocol's libraries are imported by its surface alone."""

from __future__ import annotations

from pathlib import Path

from tests.architecture.imports import imports, violations

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "extractors/moor_extractors": "moor_extractors",
    "store/moor_store": "moor_store",
    "engine/moor_engine": "moor_engine",
    "lsp/moor_lsp": "moor_lsp",
    "mcp/moor_mcp": "moor_mcp",
    "cli/moor": "moor",
}


def test_no_module_of_moor_imports_across_its_layers() -> None:
    seen = [
        item
        for folder in PACKAGES
        for path in (ROOT / folder).rglob("*.py")
        for item in imports(path, path.relative_to(ROOT).as_posix())
    ]
    # The scan sees what it must judge: the engine's imports of both lower layers, and the
    # CLI's lazy import of the language server.
    assert {i.package for i in seen if i.path.startswith("engine/")} >= {
        "moor_extractors",
        "moor_store",
    }
    assert any(i.package == "moor_lsp" and not i.top_level for i in seen)
    assert violations(ROOT, PACKAGES) == []


def test_a_planted_module_that_breaks_the_layers_is_flagged(tmp_path: Path) -> None:
    for folder in PACKAGES:
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "store/moor_store/leak.py").write_text(
        "import importlib\n"
        "\n"
        "from moor_store import inside\n"  # its own layer: allowed
        "\n"
        "\n"
        "def later():\n"
        "    from moor_engine.grounding.trust import State\n"
        "    return importlib.import_module('moor_extractors.memory'), State\n"
    )
    (tmp_path / "engine/moor_engine/talks.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "\n"
        "import moor_extractors\n"  # below: allowed
        "\n"
        "if TYPE_CHECKING:\n"
        "    from lsprotocol import types\n"
    )
    (tmp_path / "cli/moor/eager.py").write_text("from moor_lsp.server import main\n")
    (tmp_path / "cli/moor/lazy.py").write_text("def run():\n    from moor_lsp.server import main\n")
    (tmp_path / "mcp/moor_mcp/peer.py").write_text("def f():\n    import moor_lsp.engine\n")

    assert sorted(violations(tmp_path, PACKAGES)) == [
        "cli/moor/eager.py:1: moor imports moor_lsp.server: only inside the command that runs it",
        "engine/moor_engine/talks.py:6: moor_engine imports lsprotocol: "
        "only moor_lsp may import lsprotocol",
        "mcp/moor_mcp/peer.py:2: moor_mcp imports moor_lsp.engine: "
        "a layer imports one above it or beside it",
        "store/moor_store/leak.py:7: moor_store imports moor_engine.grounding.trust: "
        "a layer imports one above it or beside it",
        "store/moor_store/leak.py:8: moor_store imports moor_extractors.memory: "
        "a layer imports one above it or beside it",
    ]
