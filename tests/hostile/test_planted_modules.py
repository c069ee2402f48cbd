"""A repository's own top-level modules never run in a process moor starts (issue 20.1):
not in the definition index's workers a check starts, not in the hook server a hook
starts; and a repository that merely has a module of a name moor imports is served."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from moor.main import main
from moor_engine.grounding import definition_index

from tests.cli.test_hook_server import answered, served, server_pid
from tests.conftest import Workspace
from tests.hostile.planted import moor_command, own_modules, plant, ran, started_as_before

__all__ = ["served"]  # the hook server's fixture, used here

pytestmark = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: no workers")

SEND = "def send(payload, retries=3):\n    return payload * retries\n"

# What this process starts while `watching` is on: each command line (an audit hook sees
# every start of a process; it cannot be removed, so it only records while asked to).
_started: list[list[str]] = []
_watching = [False]


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _watching[0] and event == "subprocess.Popen":
        _started.append([str(part) for part in args[1]])  # type: ignore[attr-defined]


sys.addaudithook(_audit)


@pytest.fixture
def watching() -> Iterator[list[list[str]]]:
    _started.clear()
    _watching[0] = True
    try:
        yield _started
    finally:
        _watching[0] = False


def many_files(ws: Workspace) -> list[str]:
    """As many Python files as make a search of the definition index start workers."""
    rels = [f"pkg/m{n}.py" for n in range(definition_index._PARALLEL_AT)]
    for n, rel in enumerate(rels):
        ws.write(rel, f"def f{n}(x):\n    return x + {n}\n")
    return rels


def test_a_checks_index_workers_import_nothing_planted_in_the_workspace_it_runs_in(
    ws: Workspace,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    watching: list[list[str]],
) -> None:
    many_files(ws)
    ws.write("pkg/a.py", SEND)
    ws.memory("send", "pkg/a.py#send")
    assert main(["-C", str(ws.root), "bind"]) == 0
    ws.write("pkg/a.py", "def other():\n    return 1\n")
    ws.write("pkg/m7.py", "def f7(x):\n    return x + 7\n\n\n" + SEND)
    markers = tmp_path / "markers"
    plant(ws.root, markers)
    assert started_as_before(ws.root, markers, "moor_engine.grounding.index_worker")  # the control
    capsys.readouterr()
    monkeypatch.chdir(ws.root)  # a person runs `moor check` in the repository

    code = main(["check", "--format", "json"])

    report = json.loads(capsys.readouterr().out)
    [anchor] = report["memories"][0]["anchors"]
    assert (code, anchor["state"], anchor["moved_to"]) == (1, "moved", "pkg/m7.py#send")
    workers = [c for c in watching if "moor_engine.grounding.index_worker" in c]
    assert len(workers) >= 2  # the control: the check did start its workers
    assert ran(markers) == []


def test_index_workers_started_in_a_planted_workspace_give_every_row(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rels = many_files(ws)
    markers = tmp_path / "markers"
    plant(ws.root, markers)
    assert started_as_before(ws.root, markers, "moor_engine.grounding.index_worker")  # the control
    monkeypatch.chdir(ws.root)

    rows = definition_index._in_parallel(ws.root, 10**6, rels, {})

    # The workers did the work (a worker that fails gives no rows) and ran nothing planted.
    assert len(rows) == len(rels) and rows["pkg/m9.py"][1][0][0] == "f9"
    assert ran(markers) == []


def hook(
    ws: Workspace,
    event: str,
    prompt: str = "is func_2 safe to call twice?",
    env: dict[str, str] | None = None,
) -> str:
    """The context the installed `moor hooks run EVENT` gives, run in the workspace."""
    result = subprocess.run(
        [*moor_command(), "hooks", "run", event],
        cwd=ws.root,
        input=json.dumps({"prompt": prompt, "cwd": str(ws.root)}),
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    if not result.stdout:
        return ""
    return str(json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"])


def test_the_hook_server_a_hook_starts_imports_nothing_planted_in_the_workspace(
    served: Workspace, tmp_path: Path
) -> None:
    markers = tmp_path / "markers"
    plant(served.root, markers)
    assert started_as_before(served.root, markers, "moor", "hooks", "status")  # the control
    assert answered(served) is None

    hook(served, "session-start")  # answered by the hook itself, which starts the server
    server_pid(served)
    context = hook(served, "prompt")

    assert answered(served) == 1  # the control: the server ran, and answered the prompt
    assert 'path="memories/m2.md" state="current"' in context
    assert ran(markers) == []


def test_the_hook_server_starts_and_serves_in_a_repository_with_modules_named_as_moors(
    served: Workspace,
) -> None:
    own_modules(served.root)
    unserved = hook(served, "prompt")  # answered by the hook itself, which starts the server
    server_pid(served)

    assert hook(served, "prompt") == unserved
    assert answered(served) == 1
