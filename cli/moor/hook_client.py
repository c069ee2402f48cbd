"""The prompt hook's side of the hook server (`hook_server`): ask it, or start it.

A prompt hook is a new process per prompt; the server is one process per workspace that
keeps the engine imported and answers with the very function an unserved hook runs
(`hook_reply.hook_answer`). It is an accelerator only: anything but a well-formed answer
from a server of this same moor, run by this same user — no server, a stale socket, a
socket that is a link or someone else's, a server of another install, a timeout, a reply
that is not ours — is `None`, and the hook answers in its own process as before. Nothing
here imports the engine (memory: prompt-hooks-are-served-by-a-workspace-server).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
from pathlib import Path

from moor_engine.workspace.python_children import WORKING_FOLDER, module_command
from moor_engine.workspace.roots import CONFIG_FILE, LOCK_FILE, STATE_DIR, find_root

# Not `typing`: a prompt hook imports this module first of all (see `hook_commands`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from typing import Final

SOCKET: Final = "hooks.sock"
PROTOCOL: Final = 1
# Set to 0 (or "off") to neither ask nor start a server: every hook answers in its process.
ENABLED_VARIABLE: Final = "MOOR_HOOK_SERVER"
# Seconds a hook waits for the server, in all (its ask and a look before starting one),
# before answering itself.
WAIT_VARIABLE: Final = "MOOR_HOOK_SERVER_WAIT"
_DEFAULT_WAIT_S: Final = 20.0
_COMMAND_WAIT_S: Final = 5.0  # `moor hooks status|stop`: a person waits this long at most
_MAX_REPLY: Final = 16 * 1024 * 1024
SHUT_WR: Final = 1  # socket.SHUT_WR (POSIX), without importing socket for it


def enabled() -> bool:
    return os.environ.get(ENABLED_VARIABLE, "1").strip().lower() not in ("0", "off", "no")


def judge() -> dict[str, str]:
    """Which moor this is: a server answers only a hook of the same install."""
    return {"python": sys.executable, "moor": str(Path(__file__).resolve().parent)}


def seconds(variable: str, default: float) -> float:
    """Seconds from the environment variable `variable` (at least 0.1), else `default`."""
    raw = os.environ.get(variable)
    if raw:
        with contextlib.suppress(ValueError):
            return max(0.1, float(raw))
    return default


class Wait:
    """What is left of the time a hook may wait for its server, over all it asks: the wait
    docs/agents.md promises bounds the hook, not each exchange (a hook that waited it out for
    its answer must not wait again to look whether a server runs)."""

    def __init__(self, seconds: float) -> None:
        self.left = seconds

    def spend(self, since: float) -> None:
        self.left = max(0.0, self.left - (time.monotonic() - since))


def hook_wait() -> Wait:
    return Wait(seconds(WAIT_VARIABLE, _DEFAULT_WAIT_S))


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end (Linux); None where it cannot be told."""
    import socket
    import struct

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, 12))
    return int(uid)


def state_folder(root: Path) -> int | None:
    """A descriptor of the workspace's own `.moor/` folder, or None. Opened as moor opens
    every folder (`moor_store.inside`: no link followed by the kernel), but stricter and
    lighter, as a hook asks before anything is imported: a `.moor` that is a link, even one
    that stays inside, is not served (the hook answers in its own process)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.open(STATE_DIR, flags, dir_fd=top)
    except OSError:
        return None
    finally:
        os.close(top)


def connect(root: Path, until: float) -> socket.socket | None:
    """A connection to the workspace's hook server, or None. The socket must be a socket
    (not a link, not a file) owned by this user in the workspace's own `.moor/`, and the
    process answering must be this user's. The name is connected relative to that folder,
    so a deep workspace path is no limit."""
    folder = state_folder(root)
    if folder is None:
        return None
    try:
        info = os.stat(SOCKET, dir_fd=folder, follow_symlinks=False)
        if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
            return None
        left = until - time.monotonic()
        if left <= 0:
            return None
        # Imported only when a server's socket is there: a hook with none to ask (the
        # first of a session, or the server turned off) answers without it (~3 ms).
        import socket

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(left)
        here = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fchdir(folder)
            sock.connect(SOCKET)
        except OSError:
            sock.close()
            return None
        finally:
            os.fchdir(here)
            os.close(here)
    except OSError:
        return None
    finally:
        os.close(folder)
    uid = peer_uid(sock)
    if uid is not None and uid != os.getuid():
        sock.close()
        return None
    return sock


def exchange(root: Path, request: dict[str, object], wait: Wait) -> dict[str, object] | None:
    """Send one request, read the one reply, within what is left of `wait` (and spend what
    this took of it); None on anything but a JSON object."""
    started = time.monotonic()
    until = started + wait.left
    try:
        sock = connect(root, until)
        if sock is None:
            return None
        with sock:
            try:
                sock.sendall(json.dumps(request).encode("utf-8") + b"\n")
                sock.shutdown(SHUT_WR)
                return read_object(sock, _MAX_REPLY, until)
            except OSError:  # refused, reset, timed out: not served
                return None
    finally:
        wait.spend(started)


def read_object(
    sock: socket.socket, cap: int, until: float | None = None
) -> dict[str, object] | None:
    """One JSON object, all the peer sends until it closes its side, by `until` (a
    `time.monotonic()`; a timeout, OSError, when it passes, however the bytes trickle in);
    None if that is more than `cap` bytes or not a JSON object."""
    chunks: list[bytes] = []
    size = 0
    while True:
        if until is not None:
            left = until - time.monotonic()
            if left <= 0:
                raise TimeoutError("no whole reply in time")
            sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            return None
    try:
        value = json.loads(b"".join(chunks))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def served(where: Path, event: str, payload: dict[str, object], wait: Wait) -> str | None:
    """The hook's context as the workspace's server answers it within `wait`, or None
    (answer here)."""
    request = {
        "protocol": PROTOCOL,
        "judge": judge(),
        "event": event,
        "where": str(where.resolve()),
        "payload": payload,
    }
    reply = exchange(find_root(where), request, wait)
    if reply is None:
        return None
    context = reply.get("context")
    return context if isinstance(context, str) else None


def start(where: Path, wait: Wait) -> None:
    """Start the workspace's hook server in the background if it does not answer within
    what is left of `wait`; never raises. With nothing left (a server took all of it to not
    answer), none is started: one is there. A second server started at once finds the first
    one's guard held and exits."""
    if not enabled():
        return
    with contextlib.suppress(Exception):
        root = find_root(where)
        if not any((root / name).exists() for name in (CONFIG_FILE, LOCK_FILE)):
            return  # not a workspace moor was set up in: no memories a server could serve
        folder = state_folder(root)
        if folder is None:
            return  # no `.moor/` of its own (or a link): a server could not be asked
        os.close(folder)
        if wait.left <= 0 or status(root, wait) is not None:
            return
        import subprocess  # only here: a served hook never needs it

        subprocess.Popen(
            module_command("moor", "-C", str(root), "hooks", "serve"),
            cwd=WORKING_FOLDER,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives the hook; not in the agent's process group
            close_fds=True,
        )


def status(root: Path, wait: Wait | None = None) -> dict[str, object] | None:
    """The server's own account (pid, root, since, answered), or None when none answers."""
    request = {"protocol": PROTOCOL, "judge": judge(), "status": True}
    reply = exchange(root, request, wait or Wait(_COMMAND_WAIT_S))
    return reply if reply is not None and "pid" in reply else None


def stop(root: Path) -> dict[str, object] | None:
    """Ask the server to stop; its account as it stops, or None when none answered."""
    reply = exchange(
        root, {"protocol": PROTOCOL, "judge": judge(), "stop": True}, Wait(_COMMAND_WAIT_S)
    )
    return reply if reply is not None and "pid" in reply else None
