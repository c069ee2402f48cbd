"""The install commands the editor set-ups and the README give name moor's distribution
(`pip install moor` installs an unrelated project of that name); the set-up sections are
followed as written in tests/packaging/test_install.py (the installed wheel's `moor lsp`)."""

from __future__ import annotations

import re
from pathlib import Path

from moor_engine.workspace.distribution import DISTRIBUTION

REPO = Path(__file__).resolve().parents[2]
PAGES = ("docs/editors.md", "vscode-client/README.md", "README.md")
INSTALL = re.compile(
    r"\b(?:pipx install|uv tool install|uv pip install|pip install|pip3 install)"
    r"((?:\s+-{1,2}[\w-]+)*)\s+([^\s`)]+)"
)


def wrong_names(text: str) -> list[str]:
    """Each install command whose package is not moor's distribution (a checkout — `.`,
    `-e .`, a path or a wheel file — is fine)."""
    wrong = []
    for match in INSTALL.finditer(text):
        package = match.group(2)
        local = package.startswith((".", "/", "~")) or package.endswith((".whl", ".tar.gz"))
        if not local and package.split("[")[0] != DISTRIBUTION:
            wrong.append(match.group(0))
    return wrong


def test_every_install_command_of_the_set_ups_names_moors_distribution() -> None:
    found = 0
    for page in PAGES:
        text = (REPO / page).read_text(encoding="utf-8")
        found += len(INSTALL.findall(text))
        assert wrong_names(text) == [], page
    assert found >= 3  # the pages do tell how to install
    # The control: the name the issue found in them is caught.
    assert wrong_names("run `pip install moor` first") == ["pip install moor"]
    assert wrong_names("`pipx install moor-memory`, or `pip install -e .`") == []
