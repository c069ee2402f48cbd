"""The workspace write lock: `.moor/write.lock`, held by whoever changes moor's state.

Every writer (bind, reaffirm, follow, a check that journals, the editor's actions) holds it
while it reads moor.lock, decides and writes, so no two writers each write a snapshot of
what they read and lose the other's update. It is an advisory `flock` on a file of its own:
the kernel releases it when the holder exits, however it exits, so a crashed writer never
leaves the workspace locked. The file records who holds it (pid, command, since when), for
the message a waiting writer prints.

Within one process the lock is re-entrant for the thread holding it, and other threads wait
for it as other processes do.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from .environment import unavailable
from .inside import open_inside_dir
from .refusal import RefusalError

__all__ = ["LOCK_NAME", "WriteBusy", "default_wait", "holding", "side_lock", "write_lock"]

LOCK_NAME: Final = "write.lock"
_FOLDER: Final = ".moor"  # the workspace's state folder (the engine's roots.STATE_DIR)
_DEFAULT_WAIT_S: Final = 30.0
_WAIT_VARIABLE: Final = "MOOR_WRITE_WAIT"


class WriteBusy(RefusalError):
    """Another writer held the workspace write lock for longer than this one would wait;
    `path` is the lock's file."""

    code = "write_busy"  # stable, for a program reading the refusal
    line: int | None = None  # never known: the lock file holds one record

    def __init__(self, message: str, *, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


def default_wait() -> float:
    """Seconds a writer waits for the lock: `MOOR_WRITE_WAIT`, else 30."""
    raw = os.environ.get(_WAIT_VARIABLE)
    if raw:
        try:
            return max(0.0, float(raw))
        except ValueError:
            pass
    return _DEFAULT_WAIT_S


class _Held:
    def __init__(self) -> None:
        self.guard = threading.Lock()  # other threads of this process wait here
        self.owner: int | None = None
        self.depth = 0


_held: dict[str, _Held] = {}
_registry = threading.Lock()


def _state(root: Path) -> _Held:
    key = os.path.realpath(root)
    with _registry:
        return _held.setdefault(key, _Held())


def holding(root: Path) -> bool:
    """Whether this thread holds the workspace's write lock."""
    state = _state(root)
    return state.owner == threading.get_ident() and state.depth > 0


@contextlib.contextmanager
def write_lock(
    root: Path,
    action: str,
    *,
    wait: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the workspace write lock for `action` (e.g. "moor follow").

    Waits up to `wait` seconds (default: `default_wait()`), calling `on_wait` once with a
    message naming the holder when it has to wait; then raises WriteBusy.
    """
    state = _state(root)
    me = threading.get_ident()
    if state.owner == me:
        state.depth += 1
        try:
            yield
        finally:
            state.depth -= 1
        return
    budget = default_wait() if wait is None else wait
    deadline = time.monotonic() + budget
    if not state.guard.acquire(timeout=budget if budget > 0 else 0.0):
        raise WriteBusy(_busy_message(root, action, budget, None), path=root / _FOLDER / LOCK_NAME)
    try:
        try:
            with open_inside_dir(root, _FOLDER) as folder:
                fd = os.open(
                    LOCK_NAME,
                    os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                    0o666,
                    dir_fd=folder,
                )
        except OSError as error:
            # A read-only or full disk: say so, rather than an internal error.
            failure = unavailable(error, root / _FOLDER / LOCK_NAME, f"run {action}")
            if failure is not None:
                raise failure from error
            raise
        try:
            _acquire(fd, root, action, deadline, budget, on_wait)
            _record(fd, action)
            state.owner, state.depth = me, 1
            try:
                yield
            finally:
                state.owner, state.depth = None, 0
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    finally:
        state.guard.release()


def _acquire(
    fd: int,
    root: Path,
    action: str,
    deadline: float,
    budget: float,
    on_wait: Callable[[str], None] | None,
) -> None:
    pause = 0.005
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        now = time.monotonic()
        if now >= deadline:
            raise WriteBusy(
                _busy_message(root, action, budget, _holder(fd)), path=root / _FOLDER / LOCK_NAME
            )
        if not told and on_wait is not None:
            told = True
            on_wait(f"waiting for {_describe(_holder(fd))} to finish writing to {root}")
        time.sleep(min(pause, max(0.0, deadline - now)))
        pause = min(pause * 2, 0.1)


def _record(fd: int, action: str) -> None:
    holder = {
        "pid": os.getpid(),
        "action": action,
        "since": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }
    data = json.dumps(holder).encode("utf-8")
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)


def _holder(fd: int) -> dict[str, object] | None:
    try:
        raw = os.pread(fd, 4096, 0)
        value = json.loads(raw.decode("utf-8")) if raw else None
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _describe(holder: dict[str, object] | None) -> str:
    if not holder:
        return "another moor process"
    return (
        f"another moor process (pid {holder.get('pid')}: `{holder.get('action')}`, "
        f"since {holder.get('since')})"
    )


def _busy_message(root: Path, action: str, budget: float, holder: dict[str, object] | None) -> str:
    return (
        f"cannot run `{action}`: {_describe(holder)} is still writing to {root} after "
        f"{budget:g} s of waiting; nothing was changed. Run it again when that finishes "
        f"(MOOR_WRITE_WAIT sets how many seconds to wait)."
    )


@contextlib.contextmanager
def side_lock(root: Path, name: str, *, wait: float) -> Iterator[None]:
    """Hold an advisory `flock` on `.moor/NAME`, a lock of its own beside the write lock, for a
    cache whose writers must not wait behind a long writer (the hooks' session notes).

    Raises TimeoutError when it is not had within `wait` seconds. Not re-entrant; the kernel
    drops it when the holder exits, however it exits.
    """
    with open_inside_dir(root, _FOLDER) as folder:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(name, flags, 0o666, dir_fd=folder)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"{_FOLDER}/{name} is held") from None
                time.sleep(0.002)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
