"""One unit of work on a workspace: open lock + journal, run checks and actions, save."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from moor_store import intent
from moor_store.environment import Unavailable, refusal, unavailable
from moor_store.inside import (
    NotInside,
    check_path_length,
    has_stray_temporaries,
    open_inside_dir,
    read_inside,
    remove_stray_temporaries,
    sqlite_files_inside,
    stat_inside,
)
from moor_store.journal import (
    Journal,
    JournalBusy,
    JournalError,
    JournalUnavailable,
    JournalVersionError,
    utc_now,
)
from moor_store.lockfile import Lock, LockedMemory, LockError, format_lock, parse_lock
from moor_store.writelock import WriteBusy, holding, write_lock

from moor_engine.anchors.observer import CommandObserver
from moor_engine.grounding.check import (
    Checker,
    Evaluation,
    Progress,
    observation_entries,
    rebaseline,
)
from moor_engine.grounding.memories import canonical_lock
from moor_engine.grounding.observe import FileObserver
from moor_engine.grounding.trust import Report
from moor_engine.kept_lock import keep_lock, kept_digest, kept_lock
from moor_engine.memory.latch import healed, read_latches
from moor_engine.usage import UsageError
from moor_engine.workspace.filestat import StatKey, stat_key, stored
from moor_engine.workspace.roots import CONFIG_FILE
from moor_engine.workspace.workspace import JOURNAL_FILE, LOCK_FILE, STATE_DIR, Workspace

# A check waits this long for another writer before leaving a re-baseline to the next one.
_REBASE_WAIT_S = 2.0


@dataclass
class Session:
    """One command's view of a workspace: its lock, its journal and its observer."""

    workspace: Workspace
    lock: Lock
    journal: Journal | None
    observer: FileObserver
    warnings: list[str] = field(default_factory=list)
    # Relative path arguments are relative to where the command was started (`-C DIR`
    # included), as in git; the language server starts at the workspace root.
    start: Path = field(default_factory=Path.cwd)
    last_evaluation: Evaluation | None = None
    # moor.lock's bytes as read (None: no file): what a write replaces, and how a writer
    # notices that another one wrote in between. A long-lived session lets them go between
    # actions (`let_go_of_lock_bytes`) and keeps their digest instead.
    lock_bytes: bytes | None = None
    # Told, once, when a write has to wait for another writer (the CLI prints it).
    on_wait: Callable[[str], None] | None = None
    # Under `writing`: moor.lock as read had lost latches this clone holds (an older lock
    # came back); `self.lock` records them again.
    mended: bool = False
    # Custom anchors' commands (moor_engine.anchors), run only when trusted from outside.
    commands: CommandObserver | None = None
    # When this session began reading the workspace (0: unknown): what a kept report's
    # keys are judged racy against (`kept_check.keep`).
    opened_ns: int = 0
    # Set by `let_go_of_lock_bytes`: moor.lock's bytes are held only under `writing`, and
    # `lock_digest` (of what was read or written last; None: no file) stands for them.
    keeps_lock_bytes: bool = True
    lock_digest: str | None = None
    _writing: bool = field(default=False, init=False, repr=False)

    def let_go_of_lock_bytes(self) -> None:
        """Hold a digest of moor.lock as read instead of its bytes, from now on: a session
        kept open for hours (the editor's) would otherwise hold the whole file (5.5 MiB at
        10,000 memories) to compare it with the next read."""
        if self.keeps_lock_bytes:
            self.keeps_lock_bytes = False
            self.saw_lock(self.lock_bytes)

    def saw_lock(self, data: bytes | None) -> None:
        """moor.lock is `data` (None: no file), as this session read or wrote it."""
        if self.keeps_lock_bytes:
            self.lock_bytes = data
        else:
            self.lock_bytes = None
            self.lock_digest = lock_digest(data)

    def reads_as_seen(self, data: bytes | None) -> bool:
        """Whether moor.lock read now (`data`) is what this session last read or wrote."""
        if self.keeps_lock_bytes:
            return data == self.lock_bytes
        return lock_digest(data) == self.lock_digest

    def told(self) -> list[str]:
        """What every surface tells the person after this session's work, each once: the
        workspace's warnings and the session's (a journal not opened: nothing recorded)."""
        return list(dict.fromkeys([*self.workspace.warnings, *self.warnings]))

    @classmethod
    def open(
        cls,
        start: Path,
        *,
        use_journal: bool = True,
        trust: bool | None = None,
        tend: bool = True,
    ) -> Session:
        """`trust`: the person's own word on this workspace's declared commands — True
        (`--trust`, the editor's workspace trust), False (the editor's distrust), None (not
        said); `moor_engine.anchors.trust.decide` decides with it. `tend=False`: a look that
        changes nothing (`moor doctor`): an interrupted action is left for the next command
        to complete, and stray temporary files stay."""
        opened_ns = time.time_ns()
        workspace = Workspace.open(start)
        warnings: list[str] = []
        journal = open_journal(workspace, warnings) if use_journal else None
        if not tend:
            pass
        elif journal is not None and intent.pending(workspace.root):
            # A crash interrupted an action: complete it before reading what it wrote.
            # Busy: its writer is alive, so the action is not interrupted; that writer ends it.
            try:
                with (
                    contextlib.suppress(WriteBusy),
                    write_lock(workspace.root, "moor (completing an interrupted action)", wait=0),
                ):
                    journal.writable()
                    warnings.extend(intent.recover(workspace.root, journal))
                    remove_strays(workspace.root)
            except (Unavailable, JournalUnavailable) as error:
                warnings.append(
                    f"an interrupted action ({intent.INTENT_PATH}) was not completed: {error}. "
                    "The next run that can write completes it"
                )
        elif has_stray_temporaries(workspace.root, STATE_DIR):
            # A writer was killed before its intent record was in place: nothing to complete,
            # only its temporary file to remove (a read-only or busy workspace keeps it).
            with (
                contextlib.suppress(WriteBusy, OSError),
                write_lock(workspace.root, "moor (removing temporary files)", wait=0),
            ):
                remove_strays(workspace.root)
        lock_key = _lock_key(workspace)  # before the read: a write in between differs from it
        known = _known(workspace, lock_key)
        if known is not None:
            # As this process last parsed it: not even read (a hover's session, at 10,000
            # memories a 5.5 MiB read each); its digest stands for its bytes.
            lock_bytes, lock = None, known.lock
        else:
            lock_bytes = read_lock_bytes(workspace)
            # Kept for the next process only by one that may write `.moor/` (not a look).
            keeping = tend and journal is not None and not journal.read_only
            lock = _parse_lock(
                workspace, lock_bytes, lock_key, keep_from_ns=opened_ns if keeping else None
            )
        observer = FileObserver(workspace.root, workspace.config.max_file_size, journal)
        session = cls(
            workspace, lock, journal, observer, warnings, start.resolve(), None, lock_bytes
        )
        if known is not None:
            session.keeps_lock_bytes, session.lock_digest = False, known.digest
        session.commands = CommandObserver(workspace.root, workspace.config.anchors, trust)
        session.commands.max_input_size = workspace.config.max_file_size
        observer.commands = session.commands.observe
        session.opened_ns = opened_ns
        return session

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def checker(self) -> Checker:
        return Checker(self.workspace, self.lock, self.journal, self.observer)

    def select(self, paths: Iterable[str] = ()) -> list[str]:
        """Memory paths named by `paths` (memory files, folders, or code they are about)."""
        every = self.workspace.memory_paths()
        wanted = [self._relative_arg(p) for p in paths]
        if not wanted:
            return every
        chosen: list[str] = []
        code_targets: list[str] = []
        for rel in wanted:
            if rel.endswith(".md") and (self.workspace.root / rel).is_file():
                chosen.append(rel)
            elif any(m == rel or m.startswith(rel.rstrip("/") + "/") for m in every):
                chosen.extend(m for m in every if m.startswith(rel.rstrip("/") + "/"))
            elif (self.workspace.root / rel).exists():
                code_targets.append(rel)
            else:
                raise UsageError(
                    f"{rel}: no such memory, folder or file in {self.workspace.root}",
                    code="not_found",
                    path=rel,
                )
        if code_targets:
            chosen.extend(self._memories_about(every, code_targets))
        return sorted(set(chosen))

    def relative_arg(self, arg: str) -> str:
        """A command-line path as a workspace-relative one; UsageError outside it."""
        return self._relative_arg(arg)

    def _relative_arg(self, arg: str) -> str:
        """The one door of every path a person or an agent names (each command's, each MCP
        tool's): a path no file can have, or a loop of links, is refused here with its code
        (NotInside), before anything else touches it."""
        if "\0" in arg:
            raise NotInside("invalid_path", "a path cannot hold a NUL character")
        path = Path(arg)
        absolute = path if path.is_absolute() else self.start / path
        try:
            resolved = absolute.resolve()
        except RuntimeError as error:  # Python < 3.13 raises this for a loop of links
            check_path_length(self.workspace.root, absolute, named=arg)
            raise NotInside("link_loop", f"{arg}: a loop of symbolic links", path=arg) from error
        check_path_length(self.workspace.root, resolved, named=arg)
        try:
            return resolved.relative_to(self.workspace.root).as_posix()
        except ValueError as error:
            raise UsageError(
                f"{arg} is outside the workspace {self.workspace.root}",
                code="outside_workspace",
                path=arg,
            ) from error

    def _memories_about(self, every: list[str], targets: list[str]) -> list[str]:
        from moor_engine.grounding.memories import load_memory

        found = []
        for path in every:
            loaded = load_memory(self.workspace, path)
            for item in loaded.entries:
                ref_path = item.ref.path if item.ref is not None else None
                if ref_path and any(
                    ref_path == t or ref_path.startswith(t.rstrip("/") + "/") for t in targets
                ):
                    found.append(path)
                    break
        return found

    def evaluate(self, paths: list[str], progress: Progress | None = None) -> Evaluation:
        return self.checker.evaluate(paths, progress)

    def check(
        self,
        paths: list[str],
        progress: Progress | None = None,
        *,
        record: bool = True,
        keep: bool = False,
    ) -> Report:
        """Check `paths`; with `keep` (a check of every memory), its report is kept for the
        next one (`kept_check`: answered from it while nothing it rests on moved)."""
        evaluation = self.evaluate(paths, progress)
        self.last_evaluation = evaluation  # observations and sites, for editors
        if record:
            self.record(evaluation, self.observer.changed)
        self.observer.flush()
        if keep and record:
            from moor_engine import kept_check

            kept_check.keep(self, evaluation, paths, self.opened_ns)
        return evaluation.report

    def record(self, evaluation: Evaluation, changed: set[str]) -> int:
        """Journal what `evaluation` saw and re-baseline anchors of an older normaliser (one
        unit, under the write lock); the number re-baselined."""
        if self.journal is not None and self.journal.read_only:
            return 0  # the environment refuses writes: the warning at open says so
        try:
            return self._record(evaluation, changed)
        except (Unavailable, JournalUnavailable) as error:
            self.warnings.append(f"{error}: this check's observations were not journalled")
            return 0

    def _record(self, evaluation: Evaluation, changed: set[str]) -> int:
        new_lock, count = rebaseline(self.lock, evaluation)
        entries = (
            observation_entries(
                self.journal,
                evaluation,
                self.lock,
                changed,
                self.commands.take_fresh() if self.commands is not None else None,
            )
            if self.journal is not None
            else []
        )
        if not count:
            if entries and self.journal is not None:
                self.journal.append(entries)
            return 0
        try:
            with write_lock(self.workspace.root, "moor check (re-baseline)", wait=_REBASE_WAIT_S):
                now = read_lock_bytes(self.workspace)
                if not self.reads_as_seen(now):
                    count = 0  # another writer changed moor.lock since it was read
                change = intent.Change("moor check (re-baseline)", entries=entries)
                if count:
                    change.write("moor.lock", now, format_lock(new_lock).encode())
                self.commit(change)
                if count:
                    self.lock = new_lock
        except WriteBusy:
            count = 0  # another writer is busy: re-baselining waits for the next check
            if self.journal is not None and entries:
                self.journal.append(entries)
        if not count:
            self.warnings.append(
                "moor.lock was being changed by another writer: anchors of an older normaliser "
                "are re-baselined by the next check"
            )
        evaluation.report.rebaselined = count
        return count

    def read_lock(self) -> tuple[bytes | None, Lock]:
        """moor.lock as it is now: its bytes and what they say."""
        key = _lock_key(self.workspace)
        data = read_lock_bytes(self.workspace)
        return data, _parse_lock(self.workspace, data, key)

    @contextlib.contextmanager
    def writing(self, action: str) -> Iterator[None]:
        """Hold the workspace write lock for `action`; moor.lock is read again under it,
        with every latch in force recorded (`latch.healed`): whatever this action writes
        into moor.lock keeps what was retired or forgotten, even if an older lock came back."""
        if holding(self.workspace.root):
            yield
            return
        if self.journal is not None and self.journal.unavailable is not None:
            # A read-only or full disk: refuse before anything is written.
            raise JournalUnavailable(
                refusal(self.journal.unavailable.code, self.journal.path, f"run {action}")
            )
        with write_lock(self.workspace.root, action, on_wait=self.on_wait):
            self.warnings.extend(intent.recover(self.workspace.root, self.journal))
            remove_strays(self.workspace.root)
            self.lock_bytes, lock = self.read_lock()
            self.lock = healed(lock, read_latches(lock, self.journal))
            self.mended = _latch_records(self.lock) != _latch_records(lock)
            self._writing = True
            try:
                yield
            finally:
                self._writing = False
                if not self.keeps_lock_bytes:
                    self.saw_lock(self.lock_bytes)

    def commit(self, change: intent.Change) -> None:
        """Carry out one action's writes as one unit (moor_store.intent)."""
        intent.apply(self.workspace.root, self.journal, change, clock=utc_now)
        if "moor.lock" in change.files:
            written = change.files["moor.lock"][1]
            # Under `writing` the bytes are kept whatever the mode: the action may write again.
            if self._writing or self.keeps_lock_bytes:
                self.lock_bytes = written
            else:
                self.saw_lock(written)

    def with_memory(self, memory: LockedMemory | None, path: str) -> Lock:
        memories = dict(self.lock.memories)
        if memory is None:
            memories.pop(path, None)
        else:
            memories[path] = memory
        return replace(self.lock, memories=memories)


# Folders where moor writes without an intent record (the record's own folder among them):
# a temporary file there is swept here; one beside a file an intent record names is swept by
# `intent.recover`. Each with the names whose writers do not take the write lock (`moor
# init`, caches, the hook log, saved diffs, `hooks install`; True: all of them): one of
# those goes only when its writer's pid is gone.
_UNRECORDED: tuple[tuple[str, tuple[str, ...] | None, bool | tuple[str, ...]], ...] = (
    (".", (LOCK_FILE, CONFIG_FILE, ".gitignore"), (CONFIG_FILE, ".gitignore")),
    (STATE_DIR, None, ("hook-answers.json", "hooks.log", "kept-check.json", "kept-lock.json")),
    (f"{STATE_DIR}/diffs", None, True),
    (".claude", ("settings.json",), True),
)
_CHECKPOINTS = f"{STATE_DIR}/checkpoints"


def remove_strays(root: Path) -> None:
    """Remove the temporary files killed writers left outside any intent record's files
    (call it holding the write lock)."""
    for rel_dir, names, dead_only in _UNRECORDED:
        remove_stray_temporaries(root, rel_dir, names, dead_only=dead_only)
    # A checkpoint is created unnamed and linked into place where the system allows; where
    # it does not, a killed save (which takes no lock) leaves a named temporary file.
    try:
        with open_inside_dir(root, _CHECKPOINTS, create=False) as folder:
            agents = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError, NotInside):
        return
    for agent in agents:
        remove_stray_temporaries(root, f"{_CHECKPOINTS}/{agent}", dead_only=True)


def _latch_records(lock: Lock) -> tuple[object, ...]:
    return (dict(lock.retired), dict(lock.restored), set(lock.tombstones))


def lock_digest(data: bytes | None) -> str | None:
    """What stands for moor.lock's bytes where they are not kept (None: no file)."""
    return None if data is None else kept_digest(data)


def read_lock_bytes(workspace: Workspace) -> bytes | None:
    """moor.lock's bytes (None: there is none), read without leaving the workspace."""
    try:
        return read_inside(workspace.root, "moor.lock")
    except FileNotFoundError:
        return None
    except NotInside as error:
        raise LockError(f"moor.lock was not read: {error}", path=workspace.lock_path) from error
    except OSError as error:
        raise LockError(f"cannot read moor.lock: {error}", path=workspace.lock_path) from error


@dataclass(frozen=True, slots=True)
class _Parsed:
    """The last moor.lock this process parsed, and what it is known by."""

    path: Path
    key: StatKey | None  # moor.lock's stat key before the read (never matching when racy)
    digest: str  # of the bytes read
    lock: Lock


# The last moor.lock parsed: a process that opens many sessions (a hook server, an editor's
# every hover) reads an unchanged lock once. Known by its stat key, as git knows its index
# entries (a lock written within the racy window is compared by its digest instead), not by
# its bytes, which would be held for as long as the process runs (5.5 MiB at 10,000
# memories). A `Lock` is immutable, so sharing it is safe.
_last_parsed: _Parsed | None = None


def _lock_key(workspace: Workspace) -> StatKey | None:
    try:
        return stat_key(stat_inside(workspace.root, LOCK_FILE))
    except OSError:
        return None  # none, or not readable: read_lock_bytes says which


def _known(workspace: Workspace, key: StatKey | None) -> _Parsed | None:
    """moor.lock as this process last parsed it, when its stat `key` is still the one it
    had then (never when that was within the racy window)."""
    last = _last_parsed
    if last is None or key is None or last.path != workspace.lock_path or key != last.key:
        return None
    return last


def _parse_lock(
    workspace: Workspace,
    data: bytes | None,
    key: StatKey | None = None,
    *,
    keep_from_ns: int | None = None,
) -> Lock:
    """What moor.lock's `data` (read after its stat `key` was taken) say: as this process
    last parsed them, else as the last process kept them (`kept_lock`), else parsed (and
    kept when `keep_from_ns`, the moment the reading began, is given)."""
    global _last_parsed
    if data is None:
        return Lock()
    last = _last_parsed
    same_file = last is not None and last.path == workspace.lock_path
    # The key holds the size: a read cut short, or grown past it, is not this lock.
    if same_file and last is not None and key == last.key and key and key.size == len(data):
        return last.lock
    digest = kept_digest(data)
    stored_key = stored(key, time.time_ns()) if key is not None else None
    if same_file and last is not None and last.digest == digest:
        _last_parsed = _Parsed(last.path, stored_key, digest, last.lock)
        return last.lock
    parsed = kept_lock(workspace.root, data, digest)
    if parsed is None:
        parsed = _parse_new_lock(workspace, data)
        if keep_from_ns is not None:
            keep_lock(workspace.root, data, parsed, keep_from_ns, digest)
    # A key written with a pasted spelling (`Client::send`) is read as its canonical one.
    lock = canonical_lock(parsed)
    _last_parsed = _Parsed(workspace.lock_path, stored_key, digest, lock)
    return lock


def _parse_new_lock(workspace: Workspace, data: bytes) -> Lock:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LockError(
            "moor.lock is not valid UTF-8; restore it from version control "
            "(`git checkout -- moor.lock`)",
            path=workspace.lock_path,
            line=data[: exc.start].count(b"\n") + 1,
        ) from exc
    return parse_lock(text, path=workspace.lock_path)


def open_journal(workspace: Workspace, warnings: list[str]) -> Journal | None:
    """Open the local journal. A busy one (another program holds its write lock) is left
    alone and this run records nothing; only one that is not a usable moor journal (corrupt,
    another program's) is moved aside and rebuilt, and the warning says so loudly: the
    journal is a cache of history, moor.lock holds everything the team needs."""
    path = workspace.journal_path
    try:
        _state_folder_inside(workspace)
    except NotInside as error:
        warnings.append(f"the journal was not opened: {error}; this run records nothing")
        return None
    except OSError as error:
        failure = unavailable(error, path.parent, "write to the journal")
        if failure is None:
            raise
        warnings.append(f"{failure}. There is no journal to read: this run records nothing")
        return None
    try:
        return Journal(path)
    except JournalVersionError:
        raise  # written by a newer moor: keep it, and say so
    except JournalBusy as error:
        warnings.append(f"{error}; this run records nothing in the journal")
        return None
    except JournalUnavailable as error:
        return _reader(path, error, warnings)
    except JournalError as error:
        try:
            journal = Journal.rebuild(path)
        except JournalUnavailable as failure:
            warnings.append(
                f"the journal is unusable ({error}) and could not be set aside: {failure}. "
                "This run records nothing"
            )
            return None
        warnings.append(
            f"THE JOURNAL WAS UNUSABLE AND HAS BEEN SET ASIDE: {error}. A new, empty journal "
            f"was started; the old one is kept beside it as {path.name}.broken-*"
        )
        return journal


def _reader(path: Path, why: JournalUnavailable, warnings: list[str]) -> Journal | None:
    """The journal opened read-only, when the environment refuses to let it be written
    (a full or read-only disk): the history still answers, nothing is recorded."""
    try:
        journal = Journal.reader(path, why)
    except JournalError as error:
        warnings.append(
            f"{why}. The journal was not read either ({error}): this run records nothing"
        )
        return None
    warnings.append(f"{why}. This run reads the journal and records nothing in it")
    return journal


def _state_folder_inside(workspace: Workspace) -> None:
    """NotInside unless `.moor/` is a folder inside the workspace (made if missing) and the
    journal's files in it are regular files, not links (the rule for every SQLite file)."""
    sqlite_files_inside(workspace.root, STATE_DIR, JOURNAL_FILE)
