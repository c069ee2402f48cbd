"""`moor hooks serve`: one process per workspace that answers Claude Code's prompt, tool and
stop hooks.

A prompt hook is a new process on every prompt, and one that has to ask the engine pays
for importing it and reading moor.lock before anything is matched (~250 ms at 1,000
memories). The server pays that once: it keeps the engine imported and answers each hook
with `hook_reply.hook_answer` — the function an unserved hook runs in its own process, on a
new `Session` every time, so what is shown is decided exactly as it is without a server
(the engine's caches are the ones a long-running editor session uses). It answers one
request at a time.

Started in the background by a hook that was not served (`hook_client.start`): the session
start hook, or a prompt hook that found none. Listens on `.moor/hooks.sock` (mode 0600,
created in the workspace's own `.moor/`, answering only this user's processes); one per
workspace (`.moor/hooks-server.lock`, a `flock`: a second server exits at once). It exits
when idle for `MOOR_HOOK_SERVER_IDLE` seconds (default 30 minutes), when asked
(`moor hooks stop`, `moor hooks uninstall claude`), when moor's own modules change (an
upgrade is a new judge: `hook_answers.code_keys`), and when its socket is no longer the
one it made (the workspace or `.moor/` was removed, another server took the name).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import stat
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from moor_engine.agents.hook_answers import code_keys
from moor_engine.workspace.filestat import stat_key
from moor_engine.workspace.roots import STATE_DIR, find_root
from moor_store.inside import open_inside_dir

from moor import hook_client
from moor.hook_reply import hook_answer, log_line

GUARD: Final = "hooks-server.lock"
IDLE_VARIABLE: Final = "MOOR_HOOK_SERVER_IDLE"
_DEFAULT_IDLE_S: Final = 30 * 60.0
_TICK_S: Final = 2.0  # how often an idle server looks at its socket and moor's modules
_MAX_REQUEST: Final = 4 * 1024 * 1024
EXIT_OK, EXIT_USAGE = 0, 2
_SERVED: Final = ("prompt", "pre-tool-use", "post-tool-use", "stop")


class _Stop(Exception):
    """The server ends (asked to, or what it serves is no longer the same)."""


class Server:
    def __init__(self, root: Path, folder: int, sock: socket.socket) -> None:
        self.root = root
        self.folder = folder  # a descriptor of the workspace's `.moor/`
        self.sock = sock
        self.inode = os.stat(hook_client.SOCKET, dir_fd=folder, follow_symlinks=False).st_ino
        self.code = _judge_keys()
        self.since = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        self.answered = 0

    def account(self) -> dict[str, object]:
        return {
            "pid": os.getpid(),
            "root": str(self.root),
            "since": self.since,
            "answered": self.answered,
            "judge": hook_client.judge(),
        }

    def owns_socket(self) -> bool:
        """`.moor/hooks.sock` is still the socket this server made."""
        try:
            info = os.stat(hook_client.SOCKET, dir_fd=self.folder, follow_symlinks=False)
        except OSError:
            return False
        return info.st_ino == self.inode

    def still_ours(self) -> bool:
        """The socket is still this server's and moor's modules are the ones it imported."""
        return self.owns_socket() and _judge_keys() == self.code

    def run(self) -> None:
        limit = hook_client.seconds(IDLE_VARIABLE, _DEFAULT_IDLE_S)
        last = time.monotonic()
        self.sock.settimeout(_TICK_S if limit > _TICK_S else limit / 2)
        while True:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                if time.monotonic() - last >= limit or not self.still_ours():
                    return
                continue
            with conn:
                try:
                    self.serve_one(conn)
                except _Stop:
                    return
                except OSError:  # the hook went away mid-answer: nothing to tell it
                    pass
            last = time.monotonic()

    def serve_one(self, conn: socket.socket) -> None:
        conn.settimeout(5.0)  # a request is sent at once; a silent peer is not waited for
        uid = hook_client.peer_uid(conn)
        if uid is not None and uid != os.getuid():
            return
        request = hook_client.read_object(conn, _MAX_REQUEST)
        if request is None or request.get("protocol") != hook_client.PROTOCOL:
            _reply(conn, {"refused": "not a request this server understands"})
            return
        if request.get("status"):
            _reply(conn, self.account())
            return
        if request.get("stop"):
            _reply(conn, self.account())
            raise _Stop
        if request.get("judge") != hook_client.judge() or not self.still_ours():
            # Another install's hook, or this server's modules changed: the hook answers
            # itself, and a server of the moor now installed takes over.
            _reply(conn, {"refused": "another moor"})
            if not self.still_ours():
                raise _Stop
            return
        conn.settimeout(None)  # the engine may take its time; the hook bounds its own wait
        _reply(conn, self.answer(request))

    def answer(self, request: dict[str, object]) -> dict[str, object]:
        event, where_text = request.get("event"), request.get("where")
        payload = request.get("payload")
        if event not in _SERVED or not isinstance(where_text, str):
            return {"refused": "a hook this server does not answer"}
        where = Path(where_text)
        if not isinstance(payload, dict) or not where.is_absolute() or not where.is_dir():
            return {"refused": "no payload or place"}
        if find_root(where) != self.root:
            return {"refused": "another workspace"}
        try:
            context = hook_answer(event, where, payload)
        except Exception as error:  # fail-silent, as an unserved hook is: one log line
            log_line(where, f"{event} (served): {type(error).__name__}: {error}")
            return {"context": ""}
        self.answered += 1
        return {"context": context}


def _judge_keys() -> dict[str, list[int]]:
    """The stat keys of every module of moor's that answers a hook: the engine's (as a kept
    answer is judged by: `hook_answers.code_keys`) and this command's own."""
    keys = code_keys(None)
    for path in sorted(Path(__file__).parent.glob("*.py")):
        with contextlib.suppress(OSError):
            keys[str(path)] = list(stat_key(os.stat(path)))
    return keys


def _reply(conn: socket.socket, value: dict[str, object]) -> None:
    conn.sendall(json.dumps(value).encode("utf-8"))


def serve(start: Path) -> int:
    """Serve the workspace at or above `start` until idle, asked to stop, or stale."""
    root = find_root(start)
    with open_inside_dir(root, STATE_DIR) as folder:
        guard = os.open(
            GUARD, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder
        )
        try:
            try:
                fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return EXIT_OK  # another server has this workspace
            sock = _listen(root, folder)
            if sock is None:
                return EXIT_USAGE
            server = Server(root, folder, sock)
            _warm(root)
            signal.signal(signal.SIGTERM, _terminate)
            try:
                server.run()
            except KeyboardInterrupt:
                pass
            finally:
                with contextlib.suppress(OSError):
                    if server.owns_socket():
                        os.unlink(hook_client.SOCKET, dir_fd=folder)
                sock.close()
        finally:
            os.close(guard)
    return EXIT_OK


def _listen(root: Path, folder: int) -> socket.socket | None:
    """A listening socket at `.moor/hooks.sock`, replacing a stale one of this user's; None
    (and a log line) when something else has that name."""
    with contextlib.suppress(FileNotFoundError):
        info = os.stat(hook_client.SOCKET, dir_fd=folder, follow_symlinks=False)
        if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
            log_line(
                root,
                f"hook server: {STATE_DIR}/{hook_client.SOCKET} is not a socket of "
                "this user's; not serving",
            )
            return None
        os.unlink(hook_client.SOCKET, dir_fd=folder)  # we hold the guard: no server owns it
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    mask = os.umask(0o077)
    try:
        os.fchdir(folder)
        sock.bind(hook_client.SOCKET)
    finally:
        os.umask(mask)
        os.fchdir(here)
        os.close(here)
    sock.listen(16)
    return sock


def _warm(root: Path) -> None:
    """Import what an answer needs and read moor.lock once, before the first hook asks."""
    with contextlib.suppress(Exception):
        from moor_engine.agents import agent_hooks  # noqa: F401
        from moor_engine.memory.recall_index import keep_indexes
        from moor_engine.session import Session

        keep_indexes()  # the recall index stays open, synced by a watch of the memories

        with Session.open(root):
            pass


def _terminate(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def main_serve(start: Path) -> int:
    try:
        return serve(start)
    except OSError as error:
        # Started by a hook, its stderr goes nowhere: the hooks' log is where a person looks.
        log_line(start, f"hook server: could not start: {error}")
        print(f"moor: the hook server could not start: {error}", file=sys.stderr)
        return EXIT_USAGE
