"""moor as a user gets it: the sdist built from the repository's files, the wheel built from
that unpacked sdist, the wheel installed (with its dependencies) into a fresh environment,
and its `moor` command run on a real workspace. This is the test that fails when a file
moor needs at run time is left out of a distribution, or a dependency is missing from
pyproject.toml: nothing of this checkout or of its .venv is on the installed moor's path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from moor_engine.workspace.distribution import DISTRIBUTION

REPO = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = 600  # seconds: the build's isolated environment comes from the registry


@dataclass(frozen=True)
class Dists:
    sdist: Path
    wheel: Path


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=BUILD_TIMEOUT, env=env
    )
    assert result.returncode == 0, f"{' '.join(args)} exited {result.returncode}\n{result.stderr}"
    return result.stdout


def _project() -> dict[str, Any]:
    with (REPO / "pyproject.toml").open("rb") as file:
        project = tomllib.load(file)["project"]
    assert isinstance(project, dict)
    return project


def _package_dirs() -> dict[str, Path]:
    """Each import package moor ships (a `moor*` package in a layer's folder, found here and
    not read from pyproject.toml, whose packaging this tests) and its folder."""
    return {init.parent.name: init.parent for init in REPO.glob("*/moor*/__init__.py")}


def _shipped_files() -> set[str]:
    """Every file of moor's packages in this checkout, as a path inside the wheel."""
    files = set()
    for name, folder in _package_dirs().items():
        for path in folder.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                files.add(f"{name}/{path.relative_to(folder).as_posix()}")
    return files


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dists]:
    """The repository's files as a clone has them (tracked, or new and not ignored) copied
    out, its sdist built there, and the wheel built from the unpacked sdist."""
    base = tmp_path_factory.mktemp("dists")
    listed = _run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], REPO)
    source = base / "clone"
    for rel in filter(None, listed.split("\0")):
        if (REPO / rel).is_file():
            (source / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, source / rel)
    out = base / "dist"
    _run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(source)], base)
    (sdist,) = out.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(base / "unpacked", filter="data")
    (unpacked,) = (base / "unpacked").iterdir()
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(unpacked)], base)
    (wheel,) = out.glob("*.whl")
    yield Dists(sdist, wheel)


def test_the_sdist_and_the_wheel_carry_every_file_of_moors_packages(dists: Dists) -> None:
    version = _project()["version"]
    stem = f"{DISTRIBUTION.replace('-', '_')}-{version}"
    assert dists.sdist.name == f"{stem}.tar.gz"
    assert dists.wheel.name == f"{stem}-py3-none-any.whl"

    wheel_files = set(zipfile.ZipFile(dists.wheel).namelist())
    assert set(_package_dirs()) == {
        "moor",
        "moor_engine",
        "moor_extractors",
        "moor_lsp",
        "moor_mcp",
        "moor_store",
    }
    shipped = _shipped_files()
    # The control: the comparison sees the data files (py.typed) as well as the modules.
    assert {f"{name}/py.typed" for name in _package_dirs()} <= shipped
    assert any(path.endswith(".py") for path in shipped)
    assert shipped - wheel_files == set(), "files of moor's packages missing from the wheel"
    assert f"{stem}.dist-info/licenses/LICENSE" in wheel_files

    with tarfile.open(dists.sdist) as archive:
        sdist_files = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    in_sdist = {
        f"{folder.relative_to(REPO).as_posix()}/{path.split('/', 1)[1]}"
        for name, folder in _package_dirs().items()
        for path in shipped
        if path.split("/", 1)[0] == name
    }
    assert in_sdist - sdist_files == set(), "files of moor's packages missing from the sdist"
    assert {"pyproject.toml", "README.md", "LICENSE"} <= sdist_files


def _fresh_environment(base: Path, wheel: Path) -> Path:
    """A new virtual environment with only the wheel and its dependencies; its bin/."""
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base)
    python = venv / "bin" / "python"
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", str(wheel)],
        base,
    )
    return venv / "bin"


def _user_env() -> dict[str, str]:
    """The environment of a person's shell: nothing of this checkout's .venv or sources."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH"}
    }
    return {**env, "NO_COLOR": "1", "MOOR_HOOK_SERVER": "0"}


CODE = {
    "src/app.py": ('def greet(name):\n    return "hello " + name\n', "greet"),
    "src/app.js": ('function greet(name) {\n  return "hi " + name;\n}\n', "greet"),
    "src/app.ts": (
        'export function greet(name: string): string {\n  return "hi " + name;\n}\n',
        "greet",
    ),
    "src/app.go": (
        'package app\n\nfunc Greet(n string) string {\n\treturn "hi " + n\n}\n',
        "Greet",
    ),
    "src/app.rs": ('pub fn greet(n: &str) -> String {\n    format!("hi {}", n)\n}\n', "greet"),
    "src/App.java": (
        'class App {\n    String greet(String n) {\n        return "hi " + n;\n    }\n}\n',
        "App.greet",
    ),
    "docs/guide.md": ("# Guide\n\n## Install\n\nRun it.\n", "Guide > Install"),
}


def test_the_installed_wheel_prints_the_source_version_and_checks_a_real_workspace(
    dists: Dists, tmp_path: Path
) -> None:
    bin_dir = _fresh_environment(tmp_path, dists.wheel)
    env = _user_env()
    workspace = tmp_path / "project"
    workspace.mkdir()

    def moor(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(bin_dir / "moor"), *args],
            cwd=workspace,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    version = moor("--version")
    assert (version.returncode, version.stdout) == (0, f"moor {_project()['version']}\n")

    # What runs is the wheel's copy, and the language server and MCP server import there.
    where = subprocess.run(
        [
            str(bin_dir / "python"),
            "-c",
            "import moor_engine, moor_lsp.server, moor_mcp.server; print(moor_engine.__file__)",
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(bin_dir.parent)

    assert moor("init").returncode == 0
    for rel, (text, symbol) in CODE.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text, encoding="utf-8")
        memory = workspace / "memories" / f"{rel.replace('/', '-')}.md"
        memory.write_text(f'---\nabout: "{rel}#{symbol}"\n---\n# It greets\n', encoding="utf-8")
    bound = moor("bind")
    assert bound.returncode == 0, bound.stdout + bound.stderr

    def states() -> tuple[int, dict[str, str]]:
        run = moor("check", "--format", "json")
        assert run.returncode in (0, 1), run.stderr
        report = json.loads(run.stdout)
        return run.returncode, {m["path"]: m["state"] for m in report["memories"]}

    every_current = {f"memories/{rel.replace('/', '-')}.md": "current" for rel in CODE}
    assert states() == (0, every_current)

    # The positive control: the same installed moor sees a changed body.
    (workspace / "src/app.py").write_text(
        'def greet(name):\n    return "goodbye " + name\n', encoding="utf-8"
    )
    assert states() == (1, {**every_current, "memories/src-app.py.md": "drifted"})


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body


def _read_framed(stream: Any) -> dict[str, Any]:
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    assert length, "the server closed its output"
    answer: dict[str, Any] = json.loads(stream.read(length))
    return answer


def test_the_editor_set_ups_command_answers_from_the_installed_distribution(
    dists: Dists, tmp_path: Path
) -> None:
    """docs/editors.md's set-ups start `<the environment with moor-memory>/bin/moor lsp`:
    installed as the sections say, that command is a language server."""
    editors = (REPO / "docs" / "editors.md").read_text(encoding="utf-8")
    assert f"pipx install {DISTRIBUTION}" in editors and '"lsp"' in editors
    bin_dir = _fresh_environment(tmp_path, dists.wheel)
    workspace = tmp_path / "project"
    workspace.mkdir()
    server = subprocess.Popen(
        [str(bin_dir / "moor"), "lsp"],
        cwd=workspace,
        env=_user_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(
            _frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "processId": None,
                        "rootUri": workspace.as_uri(),
                        "capabilities": {},
                    },
                }
            )
        )
        server.stdin.flush()
        answer = _read_framed(server.stdout)
        while "id" not in answer:  # notifications (a log message) may come first
            answer = _read_framed(server.stdout)
        assert answer["id"] == 1 and "result" in answer, answer
        capabilities = answer["result"]["capabilities"]
        assert capabilities.get("completionProvider") and capabilities.get("hoverProvider")
        for message in (
            {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        ):
            server.stdin.write(_frame(message))
            server.stdin.flush()
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
