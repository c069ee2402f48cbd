"""Run one declared command (memory: command-probes-run-isolated).

argv only (never a shell), in the workspace root, with an environment cleared to
`LC_ALL=C`, a fixed `PATH` and the variables the declaration lists, stdin closed, in a
process group of its own that is killed whole at the deadline (a grandchild holding the
pipe open dies with it). Output over the cap is refused, never truncated. Every way it can
fail is a `Failure` with its code — an attempt, never a change of the facts.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from moor_extractors.model import Failure, Reason

from moor_engine.anchors.declarations import Declaration

# Absolute folders only: a relative or empty entry would name the workspace.
FIXED_PATH: Final = "/usr/local/bin:/usr/bin:/bin"
STDERR_KEPT: Final = 64 * 1024  # the last bytes of stderr a `process_failed` shows
STDERR_LINES: Final = 5
_CHUNK: Final = 64 * 1024


@dataclass(frozen=True)
class Output:
    stdout: bytes
    seconds: float  # the command's own wall time


def child_environment(declaration: Declaration, host: Mapping[str, str]) -> dict[str, str]:
    env = {"LC_ALL": "C", "PATH": FIXED_PATH}
    for name in declaration.env:
        if name in host:
            env[name] = host[name]
    return env


def run(
    root: Path, declaration: Declaration, host: Mapping[str, str] | None = None
) -> Output | Failure:
    """The command's stdout, or why there is none."""
    host = os.environ if host is None else host
    argv = list(declaration.command)
    name = f"anchor:{declaration.name}"
    if "/" not in argv[0]:
        found = shutil.which(argv[0], path=FIXED_PATH)
        if found is None:
            return Failure(
                Reason.UNREACHABLE,
                "process_failed",
                f"{name}: {argv[0]!r} is not a program in moor's fixed PATH ({FIXED_PATH}); "
                "name it by its absolute path",
            )
        argv[0] = found
    started = time.monotonic()
    try:
        child = subprocess.Popen(
            argv,
            cwd=root,
            env=child_environment(declaration, host),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as error:
        return Failure(
            Reason.UNREACHABLE,
            "process_failed",
            f"{name}: cannot start {declaration.command[0]!r}: {error.strerror or error}",
        )
    try:
        return _collect(child, declaration, started, name)
    finally:
        _kill_group(child)
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
        child.wait()


def _collect(
    child: subprocess.Popen[bytes], declaration: Declaration, started: float, name: str
) -> Output | Failure:
    assert child.stdout is not None and child.stderr is not None
    deadline = started + declaration.timeout_s
    stdout = bytearray()
    stderr = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(child.stdout, selectors.EVENT_READ, stdout)
        selector.register(child.stderr, selectors.EVENT_READ, stderr)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return Failure(
                    Reason.UNREACHABLE,
                    "timed_out",
                    f"{name}: still running after its timeout of {declaration.timeout_s:g}s; "
                    "killed with its process group",
                )
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                kept: bytearray = key.data
                kept += chunk
                if kept is stdout and len(stdout) > declaration.output_cap:
                    return Failure(
                        Reason.UNUSABLE,
                        "output_too_large",
                        f"{name}: printed more than its output_cap of "
                        f"{declaration.output_cap:,} bytes; refused, never truncated",
                    )
                if kept is stderr and len(stderr) > STDERR_KEPT:
                    del stderr[: len(stderr) - STDERR_KEPT]
    left = max(deadline - time.monotonic(), 0.0)
    try:
        status = child.wait(left)
    except subprocess.TimeoutExpired:
        return Failure(
            Reason.UNREACHABLE,
            "timed_out",
            f"{name}: still running after its timeout of {declaration.timeout_s:g}s; "
            "killed with its process group",
        )
    if status != 0:
        lines = stderr.decode("utf-8", "replace").strip().splitlines()[-STDERR_LINES:]
        said = ("; stderr: " + " | ".join(lines)) if lines else ""
        how = f"killed by signal {-status}" if status < 0 else f"exited with status {status}"
        return Failure(Reason.UNREACHABLE, "process_failed", f"{name}: {how}{said}")
    return Output(bytes(stdout), time.monotonic() - started)


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    """Kill whatever is left of the command's process group (it is its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
