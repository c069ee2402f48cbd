"""One name and one version: pyproject.toml's `[project]` defines both; moor's own surfaces
read them from the installed metadata, and the files that must repeat them (the VS Code
extension's manifest, the install instructions) are checked against them here."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from moor.main import main
from moor_engine.workspace.distribution import DISTRIBUTION, UNKNOWN_VERSION
from moor_lsp.server import MoorLanguageServer
from moor_store.lockfile import LOCK_VERSION, LockError, read_lock

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "vscode-client"


def _project() -> dict[str, Any]:
    with (REPO / "pyproject.toml").open("rb") as file:
        project = tomllib.load(file)["project"]
    assert isinstance(project, dict)
    return project


def test_the_distribution_moor_reads_its_version_from_is_the_one_pyproject_builds() -> None:
    assert _project()["name"] == DISTRIBUTION


def test_the_command_and_the_language_server_print_pyprojects_version(
    capsys: pytest.CaptureFixture[str],
) -> None:
    version = _project()["version"]
    assert version != UNKNOWN_VERSION
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"moor {version}\n"
    assert MoorLanguageServer(watch=False).version == version


def test_the_vs_code_extension_has_the_packages_version() -> None:
    version = _project()["version"]
    manifest = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    assert manifest["version"] == version
    lock = json.loads((VSCODE / "package-lock.json").read_text(encoding="utf-8"))
    assert (lock["version"], lock["packages"][""]["version"]) == (version, version)


def test_a_lock_without_its_version_is_told_the_version_this_moor_writes(tmp_path: Path) -> None:
    lock = tmp_path / "moor.lock"
    lock.write_text('[memory."m.md"]\ncontent = "c"\n', encoding="utf-8")
    with pytest.raises(LockError, match=re.escape(f"expected `version = {LOCK_VERSION}`")):
        read_lock(lock)
    # The control: the same lock with that version line is read.
    lock.write_text(f'version = {LOCK_VERSION}\n[memory."m.md"]\ncontent = "c"\n')
    assert "m.md" in read_lock(lock).memories


# `install moor` not followed by more of a name: the distribution `moor` is someone else's.
OTHERS_NAME = re.compile(r"\binstall\s+(?:--\S+\s+)*moor(?![\w-]|\.\w)")


def _text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    suffixes = {".md", ".json", ".ts", ".py", ".toml", ".txt", ".lua", ".el", ".sh", ""}
    paths = [REPO / rel for rel in filter(None, listed.split("\0"))]
    return [path for path in paths if path.suffix in suffixes and path.is_file()]


def test_no_file_tells_anyone_to_install_the_distribution_named_moor() -> None:
    # The control: the pattern catches the old instruction and passes the new ones.
    assert OTHERS_NAME.search("run `pip install moor` first")
    assert OTHERS_NAME.search("pipx install --force moor.")
    assert not OTHERS_NAME.search(f"pipx install {DISTRIBUTION}")
    offenders = []
    for path in _text_files():
        if path == Path(__file__):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        offenders += [
            f"{path.relative_to(REPO)}: {match.group(0)!r}" for match in OTHERS_NAME.finditer(text)
        ]
    assert offenders == []


@pytest.mark.parametrize("readme", ["README.md", "vscode-client/README.md"])
def test_the_readmes_install_moor_by_its_distribution_name(readme: str) -> None:
    text = (REPO / readme).read_text(encoding="utf-8")
    install = text[text.index("## Install") :]
    install = install[: install.find("\n## ", 1)]
    assert f"pipx install {DISTRIBUTION}" in install
    assert f"uv tool install {DISTRIBUTION}" in install


def test_a_fifo_metadata_on_the_path_is_refused_without_waiting(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from moor_engine.workspace.distribution import DISTRIBUTION

    def version_from(folder: Path) -> str:
        probe = (
            "import sys; sys.path.insert(0, sys.argv[1]);"
            "from moor_engine.workspace.distribution import _dist_info_version;"
            "print(_dist_info_version())"
        )
        return subprocess.run(
            [sys.executable, "-P", "-c", probe, str(folder)],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,  # a FIFO opened blocking would wait here for a writer
        ).stdout.strip()

    name = DISTRIBUTION.replace("-", "_")
    fifo, plain = tmp_path / "fifo", tmp_path / "plain"
    for folder in (fifo, plain):
        (folder / f"{name}-9.9.9.dist-info").mkdir(parents=True)
    os.mkfifo(fifo / f"{name}-9.9.9.dist-info" / "METADATA")
    (plain / f"{name}-9.9.9.dist-info" / "METADATA").write_text("Version: 9.9.9\n\n")

    assert version_from(fifo) == "None"
    assert version_from(plain) == "9.9.9"  # control: a regular METADATA is read
