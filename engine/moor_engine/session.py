"""One unit of work on a workspace: open lock + journal, run checks and actions, save."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from moor_store.journal import Journal, JournalError, JournalVersionError
from moor_store.lockfile import Lock, LockedMemory, read_lock, write_lock

from moor_engine.check import (
    Checker,
    Evaluation,
    Progress,
    journal_observations,
    rebaseline,
)
from moor_engine.observe import FileObserver
from moor_engine.trust import Report
from moor_engine.workspace import Workspace


class UsageError(Exception):
    """The request cannot be carried out as asked (exit status 2)."""


@dataclass
class Session:
    workspace: Workspace
    lock: Lock
    journal: Journal | None
    observer: FileObserver
    warnings: list[str] = field(default_factory=list)
    # Relative path arguments are relative to where the command was started (`-C DIR`
    # included), as in git; the language server starts at the workspace root.
    start: Path = field(default_factory=Path.cwd)
    last_evaluation: Evaluation | None = None

    @classmethod
    def open(cls, start: Path, *, use_journal: bool = True) -> Session:
        workspace = Workspace.open(start)
        lock = read_lock(workspace.lock_path)
        warnings: list[str] = []
        journal = open_journal(workspace, warnings) if use_journal else None
        observer = FileObserver(workspace.root, workspace.config.max_file_size, journal)
        return cls(workspace, lock, journal, observer, warnings, start.resolve())

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
                raise UsageError(f"{rel}: no such memory, folder or file in {self.workspace.root}")
        if code_targets:
            chosen.extend(self._memories_about(every, code_targets))
        return sorted(set(chosen))

    def relative_arg(self, arg: str) -> str:
        """A command-line path as a workspace-relative one; UsageError outside it."""
        return self._relative_arg(arg)

    def _relative_arg(self, arg: str) -> str:
        path = Path(arg)
        absolute = path if path.is_absolute() else self.start / path
        try:
            return absolute.resolve().relative_to(self.workspace.root).as_posix()
        except ValueError as error:
            raise UsageError(f"{arg} is outside the workspace {self.workspace.root}") from error

    def _memories_about(self, every: list[str], targets: list[str]) -> list[str]:
        from moor_engine.memories import load_memory

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
        self, paths: list[str], progress: Progress | None = None, *, record: bool = True
    ) -> Report:
        evaluation = self.evaluate(paths, progress)
        self.last_evaluation = evaluation  # observations and sites, for editors
        if record:
            new_lock, count = rebaseline(self.lock, evaluation)
            if self.journal is not None:
                journal_observations(self.journal, evaluation, self.lock, self.observer.changed)
            if count:
                self.save_lock(new_lock)
                evaluation.report.rebaselined = count
        self.observer.flush()
        return evaluation.report

    def save_lock(self, lock: Lock) -> None:
        self.lock = lock
        write_lock(self.workspace.lock_path, lock)

    def with_memory(self, memory: LockedMemory | None, path: str) -> Lock:
        memories = dict(self.lock.memories)
        if memory is None:
            memories.pop(path, None)
        else:
            memories[path] = memory
        return replace(self.lock, memories=memories)


def open_journal(workspace: Workspace, warnings: list[str]) -> Journal:
    """Open the local journal; a corrupt one is moved aside and rebuilt (it is only a cache
    of history: moor.lock holds everything the team needs)."""
    path = workspace.journal_path
    try:
        return Journal(path)
    except JournalVersionError:
        raise  # written by a newer moor: keep it, and say so
    except JournalError as error:
        warnings.append(f"{error}; moved it aside and started a new journal")
        return Journal.rebuild(path)
