"""A process that holds the workspace write lock for a test, so another writer waits on it,
and runs real `moor` commands while it holds it (the lock is re-entrant for its holder):
what makes a race between two writers certain instead of likely."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

# Prints "held", then runs each JSON argv line it reads as `moor ARGV` (printing "exit N"),
# until an empty line: then lets go and exits.
HOLDER = """
import json, sys
from pathlib import Path
from moor_store.writelock import write_lock
from moor.main import main
with write_lock(Path.cwd(), "moor test-holder"):
    print("held", flush=True)
    for line in sys.stdin:
        if not line.strip():
            break
        code = main(json.loads(line))
        print(f"exit {code}", flush=True)
"""


class LockHolder:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
        )

    def __enter__(self) -> LockHolder:
        assert self._line() == "held"
        return self

    def run(self, *argv: str) -> int:
        """`moor ARGV` run by the holder, under the lock it holds; its exit status."""
        import json

        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(list(argv)) + "\n")
        self.process.stdin.flush()
        line = self._line()
        while not line.startswith("exit "):  # what the command printed on stdout
            line = self._line()
        return int(line.removeprefix("exit "))

    def release(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write("\n")
            self.process.stdin.close()
        assert self.process.wait(timeout=60) == 0

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None:
            self.release()
        else:
            self.process.kill()
            self.process.wait(timeout=60)

    def _line(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()


def waiting_for_the_lock(root: Path, holder: int, timeout: float = 60) -> int:
    """The pid of a process other than `holder` (and this one) that has the workspace's
    write lock file open — a writer waiting for it — once there is one."""
    lock = os.path.realpath(root / ".moor" / "write.lock")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) in (holder, os.getpid()):
                continue
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
                if any(os.readlink(f"/proc/{pid}/fd/{fd}") == lock for fd in fds):
                    return int(pid)
            except OSError:  # gone, or not ours to look at
                continue
        time.sleep(0.01)
    raise AssertionError(f"no writer waited for {lock} within {timeout} s")
