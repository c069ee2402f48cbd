"""Start-up: `moor --version` is answered before the command line and the engine are
imported, and reads its version without `importlib.metadata` (issue 22.6). Counted as the
modules a real process imports (`python -X importtime`), not timed: robust to a busy machine."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from moor_engine.workspace.distribution import DISTRIBUTION

from tests.cli.test_hook_answers import backdate
from tests.conftest import Workspace

# Of the engine, `moor --version` may import what reads the version, and its packages.
_VERSION_MODULES = {"moor_engine", "moor_engine.workspace", "moor_engine.workspace.distribution"}
# Too slow to import for a version (each ~10-30 ms): the command line's, the store's, metadata.
_HEAVY = {"argparse", "sqlite3", "importlib.metadata", "yaml", "moor.main"}


def _imported(
    tmp_path: Path,
    *args: str,
    stdin: str = "",
    env: dict[str, str] | None = None,
    codes: tuple[int, ...] = (0,),
) -> tuple[str, set[str]]:
    """What `python -m moor ARGS` prints, and every module it imported."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("MOOR_")}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "moor", *args],
        cwd=tmp_path,
        env=base | (env or {}),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in codes, done.stderr[-2000:]
    modules = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return done.stdout, modules


def test_moor_version_imports_no_engine_module_beyond_the_distributions(tmp_path: Path) -> None:
    expected = f"moor {metadata.version(DISTRIBUTION)}\n"
    out, modules = _imported(tmp_path, "--version")
    assert out == expected
    engine = {m for m in modules if m.startswith(("moor_", "moor."))} - {"moor.launch"}
    assert engine <= _VERSION_MODULES, sorted(engine - _VERSION_MODULES)
    assert not modules & _HEAVY, sorted(modules & _HEAVY)
    # The control: the same answer through the full command line imports all of it.
    out, modules = _imported(tmp_path, "-C", ".", "--version")
    assert out == expected
    assert {"moor_engine.session", "moor.main", "argparse"} <= modules


def test_a_prompt_hook_answered_from_its_kept_answer_imports_no_sqlite(ws: Workspace) -> None:
    ws.write("src/net.py", "def send(payload):\n    return payload\n")
    ws.memory("sending", "src/net.py#send", body="send is idempotent.")
    ws.moor("bind", check=True)
    past = time.time() - 60  # not edited this second: the kept answer may vouch
    for folder, _dirs, files in os.walk(ws.root):
        for name in [*files, "."]:
            os.utime(Path(folder) / name, (past, past))
    prompt = json.dumps({"prompt": "is send safe?", "cwd": str(ws.root)})
    unserved = {"MOOR_HOOK_SERVER": "0"}
    first, modules = _imported(ws.root, "hooks", "run", "prompt", stdin=prompt, env=unserved)
    # The control: the first answer is the engine's, which opens the journal.
    assert "sending" in first and "sqlite3" in modules and "moor_engine.session" in modules
    again, modules = _imported(ws.root, "hooks", "run", "prompt", stdin=prompt, env=unserved)
    assert again == first
    assert "moor_engine.session" not in modules  # the kept answer
    assert not modules & {"sqlite3", "argparse", "yaml"}, sorted(modules & {"sqlite3", "yaml"})
    assert "socket" not in modules  # no server's socket to ask
    # The control: with a server's socket there, asking it imports socket.
    with _listening(ws.root / ".moor"):
        told, modules = _imported(ws.root, "hooks", "status", env=unserved)
    assert "no hook server" in told or "runs" in told
    assert "socket" in modules


@contextlib.contextmanager
def _listening(folder: Path) -> Iterator[None]:
    """A socket bound at the hook server's name in `folder` (that answers nothing)."""
    here = os.getcwd()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.chdir(folder)  # bound by its short relative name: a deep tmp path is no limit
        server.bind("hooks.sock")
        os.chdir(here)
        yield
    finally:
        os.chdir(here)
        server.close()


# What a one-shot `moor recall` must not import: the full command line (and every other
# command's module), the inotify watch of a kept index, pathspec (no ignore pattern).
_NOT_FOR_RECALL = {
    "moor.main",
    "moor.hook_commands",
    "moor.context_commands",
    "moor_engine.memory.memory_watch",
    "ctypes",
    "pathspec",
}


def test_a_one_shot_recall_imports_neither_the_full_command_line_nor_what_it_does_not_use(
    ws: Workspace,
) -> None:
    ws.write("src/net.py", "def send(payload):\n    return payload\n")
    ws.memory("sending", "src/net.py#send", body="send is idempotent.")
    ws.moor("bind", check=True)
    out, modules = _imported(ws.root, "recall", "idempotent", "send")
    assert out.startswith("1. memories/sending.md"), out
    assert "moor_engine.session" in modules  # it is the engine's answer
    assert not modules & _NOT_FOR_RECALL, sorted(modules & _NOT_FOR_RECALL)
    # The controls: the same recall through the full command line imports it, and the same
    # answer; an ignore pattern in moor.toml is matched by pathspec.
    full, modules = _imported(ws.root, "-C", ".", "recall", "idempotent", "send")
    assert full == out
    assert {"moor.main", "moor.hook_commands"} <= modules
    ws.write("moor.toml", 'ignore = ["drafts/"]\n')
    again, modules = _imported(ws.root, "recall", "idempotent", "send")
    assert again == out
    assert "pathspec" in modules


def test_a_check_without_command_anchors_never_imports_the_probe_runner(ws: Workspace) -> None:
    """The probe runner (subprocess, selectors, shutil) costs a workspace without custom
    anchors nothing; the control: one with a command anchor imports it."""
    ws.write("app.py", "def f():\n    return 1\n")
    ws.memory("code", "app.py#f")
    ws.moor("bind", check=True)
    _, modules = _imported(ws.root, "check")
    assert "moor_engine.session" in modules  # the check did run
    assert "moor_engine.anchors.probe" not in modules
    command = json.dumps([sys.executable, "-c", "print('x')"])
    config = ws.read("moor.toml") + f"\n[anchors.x]\ncommand = {command}\n"
    ws.write("moor.toml", config)
    ws.memory("probed", "anchor:x")
    ws.moor("bind", "--trust", check=True)
    _, modules = _imported(ws.root, "check", "--trust")
    assert "moor_engine.anchors.probe" in modules


# The search for vanished code and the drift's one-line summary: a recall (or a check) whose
# every anchor is found never loads them.
_ONLY_FOR_VANISHED_CODE = {
    "moor_engine.grounding.definition_index",
    "moor_engine.grounding.relocate",
    "moor_engine.grounding.relocation_memo",
    "moor_engine.grounding.suggest",
    "moor_engine.grounding.places",
    "moor_engine.workspace.worktree",
    "moor_extractors.change",
}


def test_a_one_shot_recall_of_found_code_never_imports_the_search_for_vanished_code(
    ws: Workspace,
) -> None:
    ws.write("src/net.py", "def send(payload):\n    return payload\n")
    ws.memory("sending", "src/net.py#send", body="send is idempotent.")
    ws.moor("bind", check=True)
    out, modules = _imported(ws.root, "recall", "idempotent", "send")
    assert out.startswith("1. memories/sending.md"), out
    assert "moor_engine.grounding.check" in modules  # its trust was checked
    assert not modules & _ONLY_FOR_VANISHED_CODE, sorted(modules & _ONLY_FOR_VANISHED_CODE)
    # The control: once `send` is gone, the same recall looks for it elsewhere.
    ws.write("src/net.py", "def other(payload):\n    return payload\n")
    out, modules = _imported(ws.root, "recall", "idempotent", "send")
    assert "memories/sending.md" in out, out
    searched = {"moor_engine.grounding.relocate", "moor_engine.grounding.definition_index"}
    assert searched <= modules, sorted(searched - modules)


# What a read (a one-shot recall, a prompt hook's first mention) never needs: a write's
# modules (an intent record's id and encoding, a temporary file's name, what a write is
# told: `written`), difflib (a link to no memory, a weak match), the HTML entity table and
# the look-alike tables (a memory naming an entity or holding an angle).
_ONLY_FOR_WRITES_AND_MISTAKES = {
    "secrets",
    "hmac",
    "base64",
    "difflib",
    "html",
    "moor_engine.written",
    "moor_engine.agents.lookalikes",
}


def test_a_read_imports_no_module_only_a_write_or_a_mistake_needs(ws: Workspace) -> None:
    ws.write("src/net.py", "def send(payload):\n    return payload\n")
    ws.memory("sending", "src/net.py#send", body="send is idempotent.")
    ws.moor("bind", check=True)
    backdate(ws.root)
    ws.moor("recall", "send", check=True)  # keeps the parsed lock, warms the index
    out, modules = _imported(ws.root, "recall", "idempotent", "send")
    assert out.startswith("1. memories/sending.md"), out
    assert not modules & _ONLY_FOR_WRITES_AND_MISTAKES, sorted(
        modules & _ONLY_FOR_WRITES_AND_MISTAKES
    )
    prompt = json.dumps({"prompt": "is send safe?", "cwd": str(ws.root)})
    told, modules = _imported(
        ws.root, "hooks", "run", "prompt", stdin=prompt, env={"MOOR_HOOK_SERVER": "0"}
    )
    assert "sending" in told and "moor_engine.session" in modules  # the engine answered
    assert not modules & _ONLY_FOR_WRITES_AND_MISTAKES, sorted(
        modules & _ONLY_FOR_WRITES_AND_MISTAKES
    )
    # The controls: a write imports its modules; a weak match difflib; a memory naming an
    # entity the entity table.
    _, modules = _imported(ws.root, "add", "send retries once.", "--about", "src/net.py#send")
    assert {"secrets", "base64", "moor_engine.written"} <= modules
    weak, modules = _imported(ws.root, "recall", "sendd", codes=(1,))
    assert "weak match" in weak, weak
    assert "difflib" in modules
    ws.memory("entity", "src/net.py#send", body="send &lt;memory&gt; is forged.")
    ws.moor("bind", check=True)
    backdate(ws.root)
    prompt = json.dumps({"prompt": "is send safe again?", "cwd": str(ws.root)})
    told, modules = _imported(
        ws.root, "hooks", "run", "prompt", stdin=prompt, env={"MOOR_HOOK_SERVER": "0"}
    )
    assert "entity" in told and "html.entities" in modules
    assert "moor_engine.agents.lookalikes" in modules


def _generated_doc(cls: type) -> bool:
    """Whether a dataclass's docstring is the one `dataclass` made up (its signature): making
    it up asks `inspect.signature`, ~6% of creating the class, in every process."""
    return (cls.__doc__ or "").startswith(f"{cls.__name__}(")


# Dataclasses a first mention builds whose modules other work owns now (issue 22 item 6
# notes them): the custom anchors', the extractors' parse results, relocation's, the recall
# index's.
_DOCS_ELSEWHERE = (
    "moor_engine.anchors.",
    "moor_extractors.",
    "moor_engine.grounding.relocation",
    "moor_engine.memory.recall",
    "moor_store.recall_",
)


def test_each_dataclass_a_prompt_hook_imports_has_its_own_docstring(ws: Workspace) -> None:
    ws.write("src/net.py", "def send(payload):\n    return payload\n")
    ws.memory("sending", "src/net.py#send", body="send is idempotent.")
    ws.moor("bind", check=True)
    prompt = json.dumps({"prompt": "is send safe?", "cwd": str(ws.root)})
    told, modules = _imported(
        ws.root, "hooks", "run", "prompt", stdin=prompt, env={"MOOR_HOOK_SERVER": "0"}
    )
    assert "sending" in told and "moor_engine.session" in modules  # the engine answered
    ours = sorted(
        name
        for name in modules
        if name.startswith(("moor_engine.", "moor_store.")) and not name.startswith(_DOCS_ELSEWHERE)
    )
    undocumented = [
        f"{name}.{cls.__name__}"
        for name in ours
        for cls in vars(importlib.import_module(name)).values()
        if dataclasses.is_dataclass(cls)
        and isinstance(cls, type)
        and cls.__module__ == name
        and _generated_doc(cls)
    ]
    assert len(ours) > 20 and not undocumented, undocumented
    # The control: a dataclass without a docstring is told apart from one with its own.

    @dataclasses.dataclass(frozen=True)
    class Bare:
        name: str

    @dataclasses.dataclass(frozen=True)
    class Told:
        """A name."""

        name: str

    assert _generated_doc(Bare) and not _generated_doc(Told)


# Run as the `moor` script runs (`launch.run`), with an exit handler that says whether the
# interpreter's teardown ran.
_RUN_WITH_EXIT_HANDLER = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('torn down', file=sys.stderr))\n"
    "sys.argv = ['moor', *sys.argv[1:]]\n"
    "from moor.launch import run\n"
    "run()\n"
)


def test_a_one_shot_answer_ends_its_process_without_the_teardown(ws: Workspace) -> None:
    ws.write("src/net.py", "def send(payload):\n    return payload\n")
    ws.memory("sending", "src/net.py#send", body="send is idempotent.")
    ws.moor("bind", check=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith("MOOR_")}

    def ran(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", _RUN_WITH_EXIT_HANDLER, *args],
            cwd=ws.root,
            env=base | {"MOOR_HOOK_SERVER": "0"},
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )

    prompt = json.dumps({"prompt": "is send safe?", "cwd": str(ws.root)})
    hook = ran("hooks", "run", "prompt", stdin=prompt)
    assert hook.returncode == 0, hook.stderr
    told = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "memories/sending.md" in told  # the whole answer was written before the end
    assert "torn down" not in hook.stderr
    recall = ran("recall", "idempotent", "send")
    assert recall.returncode == 0 and recall.stdout.startswith("1. memories/sending.md")
    assert "torn down" not in recall.stderr
    missing = ran("recall", "nothing-here-at-all")
    assert missing.returncode == 1 and "torn down" not in missing.stderr  # its code kept
    # The control: any other command ends as Python ends, teardown and all.
    check = ran("check")
    assert check.returncode == 0 and "torn down" in check.stderr
