"""The clock the server's cadence of command anchors runs on (`moor_engine.anchors.cadence`).

The monotonic clock, always — except in tests: the environment variable `MOOR_LSP_CLOCK`
names a file holding the time in seconds, which the test rewrites to move time on. It is an
environment variable of the server process because no client can set one through the
protocol (an initializationOption could come from any workspace's settings). With it the
server looks at the file every `FAKE_POLL_S` seconds and logs each look at a new time
(`window/logMessage`), so a test can wait for the look that found nothing due.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

TEST_CLOCK_VARIABLE: Final = "MOOR_LSP_CLOCK"
FAKE_POLL_S: Final = 0.05


@dataclass(frozen=True)
class ServerClock:
    now: Callable[[], float]
    longest_wait: float  # seconds the server sleeps at most before it looks at `now` again
    fake: bool = False


def server_clock(environ: Mapping[str, str] = os.environ) -> ServerClock:
    path = environ.get(TEST_CLOCK_VARIABLE)
    if not path:
        return ServerClock(time.monotonic, float("inf"))
    file = Path(path)

    def now() -> float:
        # A test's own file outside any workspace, not workspace content, so not through
        # `inside`; still a regular file only (no FIFO to hang on, no link to follow).
        try:
            fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return 0.0
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return 0.0
            return float(os.read(fd, 64).decode("ascii").strip() or "0")
        except (OSError, ValueError):
            return 0.0
        finally:
            os.close(fd)

    return ServerClock(now, FAKE_POLL_S, fake=True)
