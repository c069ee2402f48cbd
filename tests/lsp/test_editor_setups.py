"""The editor set-ups docs/editors.md shows are the files the end-to-end tests run, and they name
every language moor reads.

`tests/e2e/test_neovim_end_to_end.py` and `test_emacs_end_to_end.py` load these files into a
real Neovim and Emacs; this test (no editor needed) keeps the manual's copies identical to
them and fails when moor learns a language the set-ups do not start it for.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from moor_extractors.languages import _EXTENSIONS, language_for_path

REPO = Path(__file__).resolve().parents[2]
E2E = REPO / "tests" / "e2e"
SETUPS = {
    "neovim/moor-0.11.lua": "lua",
    "neovim/moor-0.9.lua": "lua",
    "emacs/moor-eglot.el": "elisp",
    "helix/languages.toml": "toml",
}
# Each extension moor reads, as Neovim and Helix name its file type.
NEOVIM_FILETYPE = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".md": "markdown",
    ".markdown": "markdown",
}
HELIX_LANGUAGE = {
    **{ext: ft for ext, ft in NEOVIM_FILETYPE.items() if not ft.endswith("react")},
    ".jsx": "jsx",
    ".tsx": "tsx",
}


def quoted_list(text: str, key: str) -> set[str]:
    """The strings of the Lua table `key = { ... }` in `text`."""
    found = re.search(key + r"\s*=\s*\{(.*?)\}", text, re.S)
    assert found, f"no {key} = {{...}} in the set-up"
    return set(re.findall(r'"([^"]+)"', re.sub(r"--[^\n]*", "", found.group(1))))


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_the_readme_shows_each_editor_set_up_exactly_as_the_end_to_end_test_runs_it(
    name: str,
) -> None:
    readme = (REPO / "docs" / "editors.md").read_text(encoding="utf-8")
    text = (E2E / name).read_text(encoding="utf-8")
    assert f"```{SETUPS[name]}\n{text}```\n" in readme, f"docs/editors.md's copy of {name} differs"


def test_the_extension_tables_cover_every_file_moor_reads() -> None:
    readable = {ext for ext in _EXTENSIONS if language_for_path(f"x{ext}") is not None}
    assert readable == set(NEOVIM_FILETYPE), (
        "moor reads other files than the set-ups know of: update the set-ups and these tables"
    )
    assert language_for_path("x.txt") is None  # the control: not every file has a language


@pytest.mark.parametrize(
    ("name", "key"), [("moor-0.11.lua", "filetypes"), ("moor-0.9.lua", "pattern")]
)
def test_the_neovim_set_ups_start_moor_for_every_language(name: str, key: str) -> None:
    named = quoted_list((E2E / "neovim" / name).read_text(encoding="utf-8"), key)
    assert named == set(NEOVIM_FILETYPE.values())


def test_the_helix_set_up_is_toml_naming_every_language() -> None:
    text = (E2E / "helix" / "languages.toml").read_text(encoding="utf-8")
    config = tomllib.loads(text)
    assert config["language-server"]["moor"]["args"] == ["lsp"]
    listed = {entry["name"] for entry in config["language"]}
    assert all("moor" in entry["language-servers"] for entry in config["language"])
    # The entries shown, and the comment that names the rest.
    mentioned = listed | set(re.findall(r'"([a-z]+)"', "".join(re.findall(r"#.*", text))))
    assert set(HELIX_LANGUAGE.values()) <= mentioned, set(HELIX_LANGUAGE.values()) - mentioned
