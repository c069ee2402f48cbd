"""One rule decides which files count: the engine's listings, the editor's watcher and its
completion all ask `Workspace.counts`, so none can disagree with another."""

from __future__ import annotations

from pathlib import Path

from moor_engine.workspace.workspace import Workspace
from moor_lsp.features.completion import list_folder
from moor_lsp.features.watching import ChangeFilter

FILES = [
    "src/a.py",
    "generated/x.py",  # git ignores it
    "vendor/y.py",  # moor.toml ignores /vendor (anchored: only the top one)
    "lib/vendor/z.py",
    "web/app.min.js",  # moor.toml ignores *.min.js at any depth
    "web/keep.min.js",  # … but re-includes this one
    "env/lib/site.py",  # a virtualenv under another name
    "memories/m.md",
]


def test_the_watcher_completion_and_file_walk_agree_on_which_files_count(tmp_path: Path) -> None:
    for rel in FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "env/pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    (tmp_path / ".gitignore").write_text("generated/\n", encoding="utf-8")
    (tmp_path / "moor.toml").write_text(
        'memory_roots = ["memories"]\nignore = ["/vendor", "*.min.js", "!keep.min.js"]\n',
        encoding="utf-8",
    )
    workspace = Workspace.open(tmp_path)
    expected = {
        "src/a.py": True,
        "generated/x.py": False,
        "vendor/y.py": False,
        "lib/vendor/z.py": True,
        "web/app.min.js": False,
        "web/keep.min.js": True,
        "env/lib/site.py": False,
        "memories/m.md": True,
    }
    counted = {
        rel: workspace.counts(rel) and not _in_uncounted_folder(workspace, rel) for rel in FILES
    }
    assert counted == expected
    walked = set(workspace._walk_files())
    assert {rel for rel in FILES if rel in walked} == {r for r, c in expected.items() if c}
    watcher = ChangeFilter(tmp_path)
    assert {rel: watcher.relevant(tmp_path / rel) for rel in FILES} == expected
    listed = {
        f"{folder}/{entry.name}"
        for folder in ("src", "generated", "vendor", "lib/vendor", "web", "memories")
        for entry in (list_folder(tmp_path, folder) or [])
    }
    top = {entry.name for entry in list_folder(tmp_path, "") or []}
    assert "env" not in top and "generated" not in top and "vendor" not in top
    assert {rel for rel in FILES if rel in listed} == {r for r, c in expected.items() if c}
    # Control: without the configuration, what moor.toml left out counts again.
    (tmp_path / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    assert Workspace.open(tmp_path).counts("vendor/y.py")
    assert Workspace.open(tmp_path).counts("web/app.min.js")


def _in_uncounted_folder(workspace: Workspace, rel: str) -> bool:
    parts = rel.split("/")[:-1]
    return any(
        not workspace.counts("/".join(parts[: i + 1]), folder=True) for i in range(len(parts))
    )
