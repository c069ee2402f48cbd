"""Shared fixtures: real temporary workspaces and the real `moor` command."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# A hook run by a test answers in its own process: a hook server it started (`moor hooks
# serve`, in the background) would outlive the test's workspace by its idle time. The
# server's own tests (tests/cli/test_hook_server.py) turn it on, and stop what they start.
os.environ.setdefault("MOOR_HOOK_SERVER", "0")

# A test marked `bench_check` re-measures a number the README publishes (minutes, and
# load-sensitive): it runs under `make bench-check` (MOOR_BENCH_CHECK=1), and `make test` runs
# its small, load-robust companion instead.
BENCH_CHECK = os.environ.get("MOOR_BENCH_CHECK") == "1"

# MOOR_TEST_PROCESS=1 runs every `ws.moor` (and every MCP session) as a real process, as the
# suite did before it ran moor in-process: the check that the two agree.
ALWAYS_PROCESS = os.environ.get("MOOR_TEST_PROCESS") == "1"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="re-measures a published number: `make bench-check` runs it")
    for item in items:
        if not BENCH_CHECK and item.get_closest_marker("bench_check") is not None:
            item.add_marker(skip)


GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(root: Path, *args: str) -> str:
    """Run real git in `root` as a test author (no global identity needed); its stdout."""
    return subprocess.run(
        ["git", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_IDENTITY},
    ).stdout


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> dict[str, Any]:
        value = json.loads(self.out)
        assert isinstance(value, dict)
        return value


def _forget_process_state() -> None:
    """What a new `moor` process starts without: the caches a long-lived moor (an editor's
    server) keeps on purpose, cleared so each in-process run starts as a command would."""
    from moor_engine import session
    from moor_extractors import languages
    from moor_store import inside

    session._last_parsed = None
    inside._real_root.cache_clear()
    languages.grammar_loads.cache_clear()
    languages.language_for_path.cache_clear()


def in_process(root: Path, args: tuple[str, ...], env: dict[str, str]) -> Run:
    """`moor ARGS` run by `moor.launch.main` in this process as the command would run it:
    cwd `root`, `env` over the environment, an empty stdin, stdout and stderr captured
    (bytes decoded as `text=True` would), SystemExit read as the exit code; the cwd, the
    environment and the streams are restored afterwards."""
    from moor import launch

    saved_env = {name: os.environ.get(name) for name in env}
    saved = (os.getcwd(), sys.argv, sys.stdin, sys.stdout, sys.stderr)
    out, err = io.BytesIO(), io.BytesIO()
    _forget_process_state()
    try:
        os.environ.update(env)
        os.chdir(root)
        sys.argv = ["moor", *args]
        sys.stdin = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        sys.stdout = stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
        sys.stderr = stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
        try:
            code = launch.main()
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
            if exit_.code is not None and not isinstance(exit_.code, int):
                print(exit_.code, file=sys.stderr)
        stdout.flush()
        stderr.flush()
    finally:
        os.chdir(saved[0])
        sys.argv, sys.stdin, sys.stdout, sys.stderr = saved[1:]
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _forget_process_state()
    return Run(code, _text(out.getvalue()), _text(err.getvalue()))


def _text(data: bytes) -> str:
    """Bytes as `subprocess.run(text=True)` gives them: decoded, universal newlines."""
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


@dataclass
class Workspace:
    """A real folder on disk and the real `moor` command run in it (in this process unless
    a test asks for a process)."""

    root: Path

    def git(self, *args: str) -> str:
        return git(self.root, *args)

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    def write_bytes(self, rel: str, data: bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def memory(
        self,
        name: str,
        about: list[str] | str,
        *,
        watch: list[str] | None = None,
        body: str = "A decision about this code.",
    ) -> Path:
        lines = ["---", "about:"]
        refs = [about] if isinstance(about, str) else about
        lines.extend(f"  - {json.dumps(ref)}" for ref in refs)
        if watch is not None:
            lines.append(f"watch: [{', '.join(watch)}]")
        lines += [
            "---",
            f"# {name}",
            "",
            body,
            "",
            "## When this changes, ask",
            "- Does it still hold?",
            "",
        ]
        return self.write(f"memories/{name}.md", "\n".join(lines))

    def moor(
        self,
        *args: str,
        check: bool = False,
        env: dict[str, str] | None = None,
        process: bool = False,
    ) -> Run:
        """`moor ARGS` in this workspace: in this process by default (~20x faster than a
        new one); `process=True` runs the real command as its own process, for what only a
        process shows (exit by a signal, stdin, faults injected at start-up, real
        concurrency, isolation from the workspace's modules, a whole process's timing)."""
        overrides = {"NO_COLOR": "1", "COLUMNS": "200", **(env or {})}
        if process or ALWAYS_PROCESS:
            run = self._process(args, overrides)
        else:
            run = in_process(self.root, args, overrides)
        if check:
            assert run.code == 0, f"moor {' '.join(args)} exited {run.code}\n{run.out}\n{run.err}"
        return run

    def _process(self, args: tuple[str, ...], overrides: dict[str, str]) -> Run:
        result = subprocess.run(
            [sys.executable, "-P", "-m", "moor", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            env={**os.environ, **overrides},
            timeout=120,
        )
        return Run(result.returncode, result.stdout, result.stderr)

    def states(self, *paths: str) -> dict[str, dict[str, Any]]:
        """`moor check --format json`, keyed by memory path."""
        run = self.moor("check", "--format", "json", *paths)
        assert run.code in (0, 1), f"exit {run.code}: {run.err}"
        report = run.json()
        memories = report["memories"]
        assert isinstance(memories, list)
        return {m["path"]: m for m in memories}

    def state(self, memory: str) -> str:
        return str(self.states()[memory]["state"])

    def journalled(self, memory: str, kind: str) -> list[str]:
        """The times of `memory`'s journal entries of `kind`, oldest first, as `moor log`
        prints them (`#SEQ  AT  KIND ...`)."""
        out = self.moor("log", memory, check=True).out
        rows = [line.split("  ") for line in out.splitlines() if line.startswith("#")]
        return [row[1] for row in rows if row[2] == kind]

    def prompt_hook(self, prompt: str) -> str:
        """The context a real `moor hooks run prompt` gives for `prompt` ("" for none)."""
        return self.hook(prompt)

    def hook(self, prompt: str, event: str = "prompt", env: dict[str, str] | None = None) -> str:
        """The context a real `moor hooks run EVENT` process gives, fed Claude Code's JSON on
        stdin ("" for none); it must exit 0 and print nothing on stderr (fail-silent)."""
        result = subprocess.run(
            [sys.executable, "-P", "-m", "moor", "hooks", "run", event],
            cwd=self.root,
            input=json.dumps({"prompt": prompt, "cwd": str(self.root)}),
            capture_output=True,
            text=True,
            env={**os.environ, "NO_COLOR": "1", **(env or {})},
            timeout=120,
        )
        assert (result.returncode, result.stderr) == (0, ""), result.stderr
        if not result.stdout:
            return ""
        answer = json.loads(result.stdout)["hookSpecificOutput"]
        names = {"prompt": "UserPromptSubmit", "session-start": "SessionStart"}
        assert answer["hookEventName"] == names[event]
        text = answer["additionalContext"]
        assert isinstance(text, str)
        return text

    def anchor(self, memory: str, index: int = 0) -> dict[str, Any]:
        anchors = self.states()[memory]["anchors"]
        assert isinstance(anchors, list)
        value = anchors[index]
        assert isinstance(value, dict)
        return value


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (root / "memories").mkdir()  # as `moor init` leaves it: a configured root must exist
    yield Workspace(root)
