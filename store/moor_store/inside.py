"""Every path moor reads or writes stays inside the workspace (ARCHITECTURE.md, "containment").

A path is walked one component at a time from a descriptor of the workspace root. A symlink
is never followed by the kernel: its target is read and walked explicitly, and refused when
it leaves the root (an absolute target outside it, or `..` above it). Each folder is opened
with ``O_NOFOLLOW | O_DIRECTORY`` relative to its parent's descriptor, and the file itself
with ``O_NOFOLLOW | O_NONBLOCK``, so a link swapped in after the walk looked fails to open
instead of being followed (the check and the open are the same step), and a FIFO, device or
socket is refused after ``fstat`` without ever blocking. Writes go to a temporary file created
in the parent's descriptor and renamed there: a planted link at the target is replaced, never
written through. A new file (`exclusive`) is written unnamed (O_TMPFILE) and linked into place
where the system allows, so a killed writer cannot leave one; every other temporary file has
moor's own name shape, which the next writer removes (`remove_stray_temporaries`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import stat
from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .environment import unavailable
from .refusal import RefusalError

__all__ = [
    "NotInside",
    "check_path_length",
    "exists_inside",
    "has_stray_temporaries",
    "open_inside_dir",
    "read_inside",
    "remove_inside",
    "remove_stray_temporaries",
    "sqlite_files_inside",
    "stat_inside",
    "stat_many_inside",
    "write_inside",
]

_MAX_LINKS: Final = 40  # as the kernel's own limit on links in one lookup
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class NotInside(OSError, RefusalError):
    """A path moor may not read or write; `code` names why (stable, shown to users).

    Codes: ``outside_workspace`` (it, or a link on the way, leads outside the root),
    ``link_loop``, ``not_a_file`` (a folder, FIFO, device or socket; or a file where the
    path needs a folder), ``too_large``,
    ``changed_while_reading`` (a link was swapped in between looking and opening),
    ``path_too_long`` (a name longer than the file system allows, or a whole path longer
    than the system's limit: no file can have it).
    `path` is the path as it was asked for (relative to the root), when there is one.
    """

    line: int | None = None  # never known: what is refused is the path

    def __init__(self, code: str, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return self.message


@dataclass
class _Walked:
    """The folder holding the path's last component (as a descriptor) and that name."""

    parents: list[int]  # descriptors from the root down; the last holds `name`
    name: str
    info: os.stat_result | None  # lstat of `name`; None when it does not exist

    @property
    def parent(self) -> int:
        return self.parents[-1]

    def close(self) -> None:
        for fd in self.parents:
            os.close(fd)
        self.parents = []


def _components(rel: str) -> list[str]:
    return [part for part in rel.replace("\\", "/").split("/") if part not in ("", ".")]


@contextlib.contextmanager
def _walk(
    root: Path, rel: str, *, create_dirs: bool = False, follow_last: bool = True
) -> Iterator[_Walked]:
    if os.path.isabs(rel):
        raise NotInside("outside_workspace", f"{rel} is not a path inside the workspace", path=rel)
    real_root = _real_root(str(root))
    names: deque[str] = deque(_components(rel))
    if not names:
        raise NotInside(
            "not_a_file", f"{rel or '.'} is the workspace folder itself", path=rel or "."
        )
    parents = [os.open(real_root, _DIR_FLAGS)]
    walked = _Walked(parents, "", None)
    try:
        links = 0
        trail: list[str] = []  # the folders walked into, from the root: for a message
        while names:
            name = names.popleft()
            if name == "..":
                if len(parents) == 1:
                    raise NotInside(
                        "outside_workspace", f"{rel} leads outside the workspace", path=rel
                    )
                os.close(parents.pop())
                trail.pop()
                continue
            try:
                info: os.stat_result | None = os.stat(
                    name, dir_fd=parents[-1], follow_symlinks=False
                )
            except FileNotFoundError:
                info = None
            except OSError as error:
                if error.errno == errno.ENAMETOOLONG:
                    raise _too_long(rel, name) from error
                raise
            if info is not None and stat.S_ISLNK(info.st_mode) and (names or follow_last):
                links += 1
                if links > _MAX_LINKS:
                    raise NotInside("link_loop", f"{rel}: too many symbolic links", path=rel)
                target = os.readlink(name, dir_fd=parents[-1])
                if os.path.isabs(target):
                    inner = _inside_real_root(target, real_root)
                    if inner is None:
                        raise NotInside(
                            "outside_workspace",
                            f"{rel} is a link that leads outside the workspace",
                            path=rel,
                        )
                    while len(parents) > 1:
                        os.close(parents.pop())
                    trail.clear()
                    names.extendleft(reversed(_components(inner)))
                else:
                    names.extendleft(reversed([p for p in target.split("/") if p not in ("", ".")]))
                continue
            if not names:
                walked.name, walked.info = name, info
                yield walked
                return
            if info is None:
                if not create_dirs:
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", rel)
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=parents[-1])
            try:
                parents.append(_open_unfollowed(name, _DIR_FLAGS, parents[-1], rel))
            except NotADirectoryError as error:
                folder = "/".join([*trail, name])
                raise NotInside(
                    "not_a_file",
                    f"{rel}: {folder} is not a folder (a file is in the way)",
                    path=rel,
                ) from error
            trail.append(name)
        raise NotInside("not_a_file", f"{rel} names the workspace folder itself", path=rel)
    finally:
        walked.parents = parents
        walked.close()


@functools.lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    """The workspace folder's real path, resolved once per process: every read of a large
    tree walks from it, and resolving it anew cost a third of a cold index build. The
    root is the one path moor trusts; what lies under it is walked each time."""
    return os.path.realpath(root)


_NAME_MAX: Final = 255  # bytes, where the file system cannot say (every common one's limit)
_PATH_MAX: Final = 4096  # bytes, Linux's; where the system cannot say


@functools.lru_cache(maxsize=64)
def _limits(real_root: str) -> tuple[int, int]:
    """The longest name (one component) and whole path the file system under the root takes."""
    try:
        return os.pathconf(real_root, "PC_NAME_MAX"), os.pathconf(real_root, "PC_PATH_MAX")
    except (OSError, ValueError):
        return _NAME_MAX, _PATH_MAX


def _too_long(rel: str, name: str) -> NotInside:
    size = len(os.fsencode(name))
    return NotInside(
        "path_too_long",
        f"{_shortened(rel)}: a name of {size} bytes, longer than the file system allows; "
        "no file has it",
        path=None,  # named, shortened, in the message: the path itself may be megabytes
    )


def _shortened(rel: str) -> str:
    """A path short enough to print in a message (the refused path may be 100 kB)."""
    return rel if len(rel) <= 120 else f"{rel[:60]}…{rel[-40:]} ({len(rel)} characters)"


def check_path_length(root: Path, path: str | Path, *, named: str | None = None) -> None:
    """NotInside (``path_too_long``) unless every name in `path` (absolute, or relative to
    the root) and the whole of it are within the file system's limits.

    Asked of a path a person or an agent typed, before it is used: otherwise the kernel's
    ENAMETOOLONG surfaces from whichever call first touches it (a `stat`, a `realpath`)
    as an error nobody caught. Names only; nothing is read. `named`: the path as it was
    given, for the message.
    """
    text = os.fspath(path)
    shown = text if named is None else named
    name_max, path_max = _limits(_real_root(str(root)))
    for name in _components(text):
        if len(os.fsencode(name)) > name_max:
            raise _too_long(shown, name)
    whole = text if os.path.isabs(text) else os.path.join(_real_root(str(root)), text)
    if len(os.fsencode(whole)) >= path_max:
        raise NotInside(
            "path_too_long",
            f"{_shortened(shown)}: {len(os.fsencode(whole))} bytes as a whole path, over the "
            f"system's limit of {path_max - 1}; no file can be named by it",
            path=None,
        )


def _open_unfollowed(name: str, flags: int, parent: int, rel: str) -> int:
    """Open `name` in `parent` without following a link: one swapped in since the walk
    looked fails here (ELOOP) instead of being followed."""
    try:
        return os.open(name, flags, dir_fd=parent)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotInside(
                "changed_while_reading", f"{rel}: a link appeared while it was opened", path=rel
            ) from error
        raise


def _inside_real_root(target: str, real_root: str) -> str | None:
    """`target` (absolute) relative to the root, or None when it is not under it."""
    normal = os.path.normpath(target)
    for base in {real_root, os.path.normpath(real_root)}:
        if normal == base:
            return "."
        if normal.startswith(base.rstrip("/") + "/"):
            return normal[len(base.rstrip("/")) + 1 :]
    return None


def stat_inside(root: Path, rel: str) -> os.stat_result:
    """The stat of the file `rel` names, its links walked inside the root.

    FileNotFoundError when it does not exist; NotInside when it leads outside.
    """
    with _walk(root, rel) as walked:
        if walked.info is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", rel)
        return walked.info


def stat_many_inside(root: Path, rels: Iterable[str]) -> dict[str, os.stat_result | OSError]:
    """`stat_inside` of each of `rels` — its stat, or the error it raises — with each folder
    walked once: the plain files of a folder are stat-ed from its descriptor, not walked to
    from the root one by one (a warm check stats every memory file). Anything else — a link,
    a path that is not plainly spelt, a folder that cannot be opened — is `stat_inside`'s
    own answer, so the answers are the same as asking for each."""
    folders: dict[str, list[tuple[str, str]]] = {}
    found: dict[str, os.stat_result | OSError] = {}
    for rel in rels:
        parts = rel.split("/")
        if rel.startswith("/") or _components(rel) != parts or ".." in parts or len(parts) < 2:
            found[rel] = _stat_or_error(root, rel)
        else:
            folders.setdefault("/".join(parts[:-1]), []).append((rel, parts[-1]))
    for folder, names in folders.items():
        try:
            with open_inside_dir(root, folder, create=False) as fd:
                for rel, name in names:
                    try:
                        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except OSError:
                        info = None
                    if info is None or stat.S_ISLNK(info.st_mode):
                        found[rel] = _stat_or_error(root, rel)  # its message, its link walked
                    else:
                        found[rel] = info
        except OSError:
            for rel, _name in names:
                found[rel] = _stat_or_error(root, rel)
    return found


def _stat_or_error(root: Path, rel: str) -> os.stat_result | OSError:
    try:
        return stat_inside(root, rel)
    except OSError as error:
        return error


def exists_inside(root: Path, rel: str) -> bool:
    try:
        stat_inside(root, rel)
    except OSError:
        return False
    return True


def read_inside(root: Path, rel: str, *, limit: int | None = None) -> bytes:
    """The bytes of the regular file `rel` names inside the root.

    NotInside (with its code) for a path leading outside, a non-regular file, or one over
    `limit` bytes; FileNotFoundError when it does not exist; other OSErrors as they are.
    """
    with _walk(root, rel) as walked:
        if walked.info is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", rel)
        if not stat.S_ISREG(walked.info.st_mode):
            raise NotInside(
                "not_a_file", f"{rel} is {_what(walked.info)}, not a regular file", path=rel
            )
        fd = _open_unfollowed(walked.name, _READ_FLAGS, walked.parent, rel)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise NotInside(
                    "not_a_file", f"{rel} is {_what(info)}, not a regular file", path=rel
                )
            if limit is not None and info.st_size > limit:
                raise NotInside(
                    "too_large",
                    f"{rel} is {info.st_size} bytes, over the {limit}-byte cap",
                    path=rel,
                )
            os.set_blocking(fd, True)
            chunks = []
            remaining = (limit + 1) if limit is not None else None
            while True:
                chunk = os.read(fd, 1 << 20 if remaining is None else min(1 << 20, remaining))
                if not chunk:
                    break
                chunks.append(chunk)
                if remaining is not None:
                    remaining -= len(chunk)
                    if remaining <= 0:
                        raise NotInside(
                            "too_large", f"{rel} grew over the {limit}-byte cap", path=rel
                        )
            return b"".join(chunks)
        finally:
            os.close(fd)


def _temporary_name(name: str) -> str:
    return f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"


# Only this shape is moor's: the target's name, the writer's pid, 8 hex digits. A sweep also
# asks for the target names it may remove, so a user's `.x.md.swp` or `notes.tmp` never is.
_TEMPORARY: Final = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, or a pid out of range: leave it be
        return pid > 0
    return True


def remove_stray_temporaries(
    root: Path,
    rel_dir: str,
    names: Iterable[str] | None = None,
    *,
    dead_only: bool | Collection[str] = False,
) -> int:
    """Remove temporary files a killed writer left in the folder `rel_dir` (only moor's own
    pattern; only of `names` when given). Call it holding the write lock: then no writer
    that takes it is alive to own one. `dead_only` (True, or the names it applies to): those
    files also have writers that do not take the lock (caches, checkpoints), so one is
    removed only when its writer's pid is gone. Returns how many were removed."""
    wanted = set(names) if names is not None else None
    removed = 0
    try:
        with open_inside_dir(root, rel_dir, create=False) as folder:
            for entry in os.listdir(folder):
                match = _TEMPORARY.fullmatch(entry)
                if match is None or (wanted is not None and match["name"] not in wanted):
                    continue
                unlocked = dead_only is True or (
                    not isinstance(dead_only, bool) and match["name"] in dead_only
                )
                if unlocked and _alive(int(match["pid"])):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry, dir_fd=folder)
                    removed += 1
    except (FileNotFoundError, NotADirectoryError, NotInside):
        return removed
    return removed


def stray_temporaries(root: Path, rel_dir: str, names: Iterable[str] | None = None) -> list[str]:
    """The names in the folder `rel_dir` shaped like moor's temporary files (only of the
    target `names` when given) whose writer's pid is gone: what a sweep would remove, listed
    without removing anything (`moor doctor`)."""
    wanted = set(names) if names is not None else None
    try:
        with open_inside_dir(root, rel_dir, create=False) as folder:
            entries = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError, NotInside):
        return []
    found = []
    for entry in entries:
        match = _TEMPORARY.fullmatch(entry)
        if match is None or (wanted is not None and match["name"] not in wanted):
            continue
        if not _alive(int(match["pid"])):
            found.append(entry)
    return found


def has_stray_temporaries(root: Path, rel_dir: str) -> bool:
    """Whether the folder `rel_dir` holds a file named like moor's temporary files."""
    try:
        with open_inside_dir(root, rel_dir, create=False) as folder:
            return any(_TEMPORARY.fullmatch(entry) for entry in os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError, NotInside):
        return False


@functools.cache
def _proc_fd() -> bool:
    return os.path.isdir("/proc/self/fd")


def _anonymous(parent: int) -> int | None:
    """An unnamed file in the folder `parent` (Linux's O_TMPFILE, given a name only by a
    link to the target, so a killed writer leaves nothing); None where that is not
    supported (another system, file system, or no /proc to link it through)."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not _proc_fd():
        return None
    try:
        return os.open(".", os.O_WRONLY | flag | os.O_CLOEXEC, 0o666, dir_fd=parent)
    except OSError as error:
        if error.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _what(info: os.stat_result) -> str:
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def write_inside(
    root: Path,
    rel: str,
    data: bytes,
    *,
    exclusive: bool = False,
    own: bool = False,
    durable: bool = True,
) -> None:
    """Replace the file `rel` names inside the root with `data`, atomically.

    A temporary file beside it is written and synced, given the old file's mode, and renamed
    over it in the same folder descriptor; missing folders are created inside the root. A
    failure removes the temporary file and leaves the target as it was. `exclusive`: refuse
    (FileExistsError) when the target exists. `own`: the file is moor's own (a saved diff):
    a link in its place is replaced by the file, never followed. `durable=False`: neither
    the file nor its folder is synced — for a cache whose loss in a crash costs only time
    (a reader must then refuse a torn one), where a sync would cost every write a disk flush.
    A full or read-only disk raises `environment.Unavailable` (an OSError) saying so.
    """
    try:
        _write_inside(root, rel, data, exclusive=exclusive, own=own, durable=durable)
    except OSError as error:
        failure = unavailable(error, root / rel, f"write {rel}", needed=len(data))
        if failure is not None:
            raise failure from error
        raise


def _write_inside(
    root: Path, rel: str, data: bytes, *, exclusive: bool, own: bool, durable: bool
) -> None:
    with _walk(root, rel, create_dirs=True, follow_last=not own) as walked:
        if walked.info is not None and stat.S_ISDIR(walked.info.st_mode):
            raise NotInside("not_a_file", f"{rel} is a folder", path=rel)
        if exclusive and walked.info is not None:
            raise FileExistsError(errno.EEXIST, "File exists", rel)
        parent, name = walked.parent, walked.name
        if exclusive:
            fd = _anonymous(parent)
            if fd is not None:
                try:
                    _write_all(fd, data)
                    if durable:
                        os.fsync(fd)
                    os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=parent, follow_symlinks=True)
                finally:
                    os.close(fd)
                if durable:
                    with contextlib.suppress(OSError):
                        os.fsync(parent)
                return
        tmp = _temporary_name(name)
        try:
            fd = os.open(
                tmp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o666,
                dir_fd=parent,
            )
            try:
                _write_all(fd, data)
                if durable:
                    os.fsync(fd)
                if walked.info is not None and stat.S_ISREG(walked.info.st_mode):
                    os.fchmod(fd, stat.S_IMODE(walked.info.st_mode))
            finally:
                os.close(fd)
            if exclusive:
                os.link(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
                os.unlink(tmp, dir_fd=parent)
            else:
                os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=parent)
            raise
        if durable:
            with contextlib.suppress(OSError):
                os.fsync(parent)


def remove_inside(root: Path, rel: str) -> bool:
    """Remove the file `rel` names inside the root (a link in its place is removed, never
    followed); False when there was none."""
    with _walk(root, rel, follow_last=False) as walked:
        if walked.info is None:
            return False
        if stat.S_ISDIR(walked.info.st_mode):
            raise NotInside("not_a_file", f"{rel} is a folder", path=rel)
        try:
            os.unlink(walked.name, dir_fd=walked.parent)
        except FileNotFoundError:
            return False
        with contextlib.suppress(OSError):
            os.fsync(walked.parent)
        return True


SQLITE_SIDE_FILES: Final = ("", "-wal", "-shm", "-journal")


def sqlite_files_inside(root: Path, state_dir: str, database: str) -> None:
    """NotInside unless `state_dir` is a folder inside `root` (made if missing) and the
    SQLite database `database` and its side files in it are regular files, not links:
    SQLite opens them by name, so a link would make it write (or a rebuild rename) another
    program's file."""
    with open_inside_dir(root, state_dir) as folder:
        for suffix in SQLITE_SIDE_FILES:
            name = database + suffix
            try:
                info = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(info.st_mode):
                raise NotInside(
                    "outside_workspace",
                    f"{state_dir}/{name} is a symbolic link",
                    path=f"{state_dir}/{name}",
                )
            if not stat.S_ISREG(info.st_mode):
                raise NotInside(
                    "not_a_file",
                    f"{state_dir}/{name} is not a regular file",
                    path=f"{state_dir}/{name}",
                )


@contextlib.contextmanager
def open_inside_dir(root: Path, rel: str, *, create: bool = True) -> Iterator[int]:
    """A descriptor of the folder `rel` names inside the root (created when missing)."""
    if rel in ("", "."):
        fd = os.open(os.path.realpath(root), _DIR_FLAGS)
        try:
            yield fd
        finally:
            os.close(fd)
        return
    with _walk(root, rel, create_dirs=create) as walked:
        if walked.info is None and not create:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", rel)
        if walked.info is None:
            with contextlib.suppress(FileExistsError):
                os.mkdir(walked.name, 0o777, dir_fd=walked.parent)
        try:
            fd = _open_unfollowed(walked.name, _DIR_FLAGS, walked.parent, rel)
        except NotADirectoryError as error:
            raise NotInside("not_a_file", f"{rel} is not a folder", path=rel) from error
    try:
        yield fd
    finally:
        os.close(fd)
