"""A real `moor mcp --http` process for the tests: started on a free port in a workspace,
its URL read from the line it prints on stderr, stopped (and its stderr kept) at the end."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

SERVING = re.compile(r"moor mcp: serving (http://127\.0\.0\.1:(\d+)/mcp)")
TOKEN_IN = re.compile(r"moor mcp: bearer token in (.+)")


@dataclass
class Served:
    url: str
    port: int
    process: subprocess.Popen[str]
    root: Path
    lines: list[str] = field(default_factory=list)

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    @property
    def token_path(self) -> Path:
        """The token's file, as the server names it on stderr."""
        found = TOKEN_IN.search(self.stderr)
        assert found is not None, self.stderr
        return self.root / found.group(1)  # a relative path is the workspace's

    @property
    def token(self) -> str:
        return self.token_path.read_text(encoding="utf-8").strip()


@contextlib.contextmanager
def serving(root: Path, *args: str, timeout: float = 30.0) -> Iterator[Served]:
    """`moor mcp --http --port 0 ARGS` in `root`, until the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "moor", "mcp", "--http", "--port", "0", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    lines: list[str] = []
    arrived: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            arrived.put(line)
        arrived.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        deadline = time.monotonic() + timeout
        while True:
            line = arrived.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, f"moor mcp --http exited {process.wait()}:\n{''.join(lines)}"
            found = SERVING.search(line)
            if found:
                break
        yield Served(found.group(1), int(found.group(2)), process, root, lines)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def refused(root: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """`moor mcp ARGS` expected to exit at once (a refusal), with its output."""
    return subprocess.run(
        [sys.executable, "-m", "moor", "mcp", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "NO_COLOR": "1"},
    )
