"""One rule decides which files count: the engine's listings, the editor's watcher and its
completion all ask `Workspace.counts`, so none can disagree with another."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
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


# What editors leave beside a file they edit, each named as the editor names it.
EDITOR_FILES = [
    ".#note.md",  # Emacs's lock link, there while the buffer has unsaved changes
    "#note.md#",  # Emacs's auto-save
    "note.md~",  # a backup (Emacs, Vim with 'backup', nano)
    ".note.md.swp",  # Vim's swap file, then .swo, .swn …
    ".note.md.swo",
    "4913",  # Vim's probe that it may create files here (deleted at once)
    "5036",  # … the next name Vim tries when 4913 is taken
    ".note.md.kate-swp",  # Kate
    "note.md___jb_tmp___",  # JetBrains' safe write
]


def test_an_editors_own_files_are_neither_memories_nor_code_in_any_listing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from moor.main import main

    (tmp_path / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "memories").mkdir()
    (tmp_path / "src/app.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    note = "---\nabout: [src/app.py#f]\n---\n# Note\n\nf returns one.\n"
    (tmp_path / "memories/note.md").write_text(note, encoding="utf-8")
    # Look-alikes that are a user's files: the controls.
    (tmp_path / "memories/tilde~in-name.md").write_text(note, encoding="utf-8")
    (tmp_path / "src/4914").write_text("data\n", encoding="utf-8")
    for folder in ("memories", "src"):
        for name in EDITOR_FILES:
            path = (
                tmp_path
                / folder
                / name.replace("note.md", "note.md" if folder == "memories" else "app.py")
            )
            if name.startswith(".#"):
                path.symlink_to("user@host.1234:1700000000")  # dangling, as Emacs makes it
            else:
                path.write_text(note, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    workspace = Workspace.open(tmp_path)

    assert workspace.memory_paths() == ["memories/note.md", "memories/tilde~in-name.md"]
    assert "src/4914" in workspace.code_paths and "src/app.py" in workspace.code_paths
    assert [p for p in workspace.code_paths if not p.startswith("moor.toml")] == [
        "src/4914",
        "src/app.py",
    ]
    watcher = ChangeFilter(tmp_path)
    listed = {entry.name for entry in list_folder(tmp_path, "memories") or []}
    assert listed == {"note.md", "tilde~in-name.md"}
    for name in EDITOR_FILES:
        assert not workspace.counts(f"memories/{name}"), name
        assert not workspace.is_memory_path(f"memories/{name}"), name
        assert not watcher.relevant(tmp_path / "memories" / name), name
    assert workspace.is_memory_path("memories/note.md")  # control

    assert main(["-C", str(tmp_path), "bind"]) == 0
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "check"]) == 0
    out = capsys.readouterr().out
    assert "invalid" not in out and "2 memories" in out, out
