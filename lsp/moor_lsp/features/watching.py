"""Noticing changes made anywhere: by the editor, a formatter, `git checkout`, an agent.

Two sources, both ending in the debounced re-check of the root the file is in (the
innermost one holding it):

* the server's own watcher (`watchfiles`, one background task per root) over the whole
  root, so a file written by another process counts even when no editor says so (a root
  nested in another is watched by its own watcher only);
* `workspace/didChangeWatchedFiles` from the client, registered dynamically when the
  client allows it (a refused registration is logged as a warning).

Changes under `.git`, `.moor` (the journal moor itself writes), virtualenvs,
`node_modules`, caches, the engine's configured `ignore` globs and whatever git ignores
(every `.gitignore`, nested ones and negations included, and `.git/info/exclude`) are
skipped — except `moor.toml`, `moor.lock`, `.gitignore` files, memory files and the files
memories are about, which always count (a memory about generated code is still told).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from moor_engine.workspace.config import BUILTIN_IGNORES, ConfigError
from moor_engine.workspace.gitignore import IGNORE_FILE, GitIgnores
from moor_engine.workspace.workspace import Workspace, is_editor_file

from moor_lsp.features import Feature

if TYPE_CHECKING:
    from moor_lsp.folder import Folder

logger = logging.getLogger("moor_lsp.watching")
# Always passed on (with every .gitignore). `.git/HEAD` moves when a branch is checked out:
# then everything is checked again.
ALWAYS = frozenset({"moor.toml", "moor.lock", "pyproject.toml", ".git/HEAD"})
REGISTRATION_ID = "moor-watched-files"
# How long the watcher waits for more changes before it reports a batch (watchfiles' `step`,
# also how often its thread wakes while idle). Measured here: 50 ms (the default) reports a
# write after ~72 ms and costs 0.3% of a core idle; 10 ms: ~17 ms and 0.6%; 5 ms: ~9 ms and
# 0.9%. The server's own debounce does the coalescing, so the watcher need not.
WATCH_STEP_MS = 5


class ChangeFilter:
    """Which workspace paths are worth a re-check."""

    def __init__(self, root: Path, watched: Callable[[str], bool] = lambda _rel: False) -> None:
        self.root = root
        self.watched = watched  # whether a memory is about this workspace-relative file
        self.gitignores = GitIgnores(root)
        self.reload()

    def reload(self) -> None:
        try:
            self.workspace: Workspace | None = Workspace.open(self.root)
        except ConfigError:
            self.workspace = None
        self.gitignores.forget()
        if self.workspace is not None:
            self.workspace.gitignores = self.gitignores  # one cache of the ignore files

    def relevant(self, path: Path) -> bool:
        try:
            rel = path.relative_to(self.root).as_posix()
        except ValueError:
            return False
        if rel in ALWAYS or path.name == IGNORE_FILE or self.watched(rel):
            return True
        parts = rel.split("/")
        if is_editor_file(parts[-1]) or parts[-1].endswith(".tmp"):
            return False  # editors' own files (the engine's rule) and tools' temporary ones
        if self.workspace is not None:
            return self.workspace.counts(rel, folder=path.is_dir())
        # No usable configuration: git's and the built-in rules still hold.
        if any(part in BUILTIN_IGNORES for part in parts):
            return False
        return not self.gitignores.ignored(rel, folder=path.is_dir())

    def __call__(self, _change: object, path: str) -> bool:
        """The `watch_filter` signature of `watchfiles`."""
        return self.relevant(Path(path))


class _Watch:
    """One root's filter and watcher task."""

    def __init__(self, change_filter: ChangeFilter) -> None:
        self.filter = change_filter
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def close(self) -> None:
        self.stop.set()
        if self.task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self.task), 2)
            except (TimeoutError, asyncio.CancelledError):
                self.task.cancel()


class Watching(Feature):
    name = "watching"

    def __init__(self, server: Any) -> None:
        super().__init__(server)
        self.watches: dict[Path, _Watch] = {}  # per root

    def register(self) -> None:
        self.handle(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, self.did_change_watched_files, None)

    async def on_initialized(self) -> None:
        if self.server.capability("workspace.did_change_watched_files.dynamic_registration"):
            self.server.spawn(self._register_with_client())

    async def on_folder_added(self, folder: Folder) -> None:
        root = folder.root
        watch = self.watches[root] = _Watch(ChangeFilter(root, lambda rel: _watched(folder, rel)))
        if not self.server.watch:
            return
        if root == Path.home() or root == Path(root.anchor):
            logger.warning("not watching %s: too broad a workspace root", root)
            return
        watch.task = self.server.spawn(self._watch(folder, watch))

    async def on_folder_removed(self, folder: Folder) -> None:
        watch = self.watches.pop(folder.root, None)
        if watch is not None:
            await watch.close()

    async def _register_with_client(self) -> None:
        await self.server.register_with_client(
            REGISTRATION_ID,
            types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
            ),
            "watch files",
        )

    async def _watch(self, folder: Folder, watch: _Watch) -> None:
        from watchfiles import awatch

        try:
            async for changes in awatch(
                folder.root,
                watch_filter=watch.filter,
                stop_event=watch.stop,
                step=WATCH_STEP_MS,
                rust_timeout=500,
                ignore_permission_denied=True,
            ):
                # A root nested in this one has its own watcher: its files are its own.
                paths = [Path(path) for _change, path in changes]
                self._changed(
                    folder, [p for p in paths if self.server.folder_for_path(p) is folder]
                )
        except Exception as error:
            self.report("watching the workspace stopped (the client's events still count)", error)

    def _changed(self, folder: Folder, paths: list[Path], how: str = "on disk") -> None:
        watch = self.watches.get(folder.root)
        if watch is None or folder.closed:
            return
        relevant = [p for p in paths if watch.filter.relevant(p)]
        if not relevant:
            return
        if any(p.name in {"moor.toml", "pyproject.toml", IGNORE_FILE} for p in relevant):
            watch.filter.reload()
        rels = [rel for rel in map(folder.relative_path, relevant) if rel is not None]
        folder.schedule(f"{len(relevant)} file(s) changed {how}: {relevant[0]}", rels)

    async def did_change_watched_files(self, params: types.DidChangeWatchedFilesParams) -> None:
        by_folder: dict[Path, tuple[Folder, list[Path]]] = {}
        for change in params.changes:
            folder = self.server.folder_for(change.uri)
            rel = folder.relative(change.uri) if folder is not None else None
            if folder is not None and rel is not None:
                by_folder.setdefault(folder.root, (folder, []))[1].append(folder.root / rel)
        for folder, paths in by_folder.values():
            self._changed(folder, paths, "in the editor")

    async def on_shutdown(self) -> None:
        watches, self.watches = list(self.watches.values()), {}
        await asyncio.gather(*(watch.close() for watch in watches))


def _watched(folder: Folder, rel: str) -> bool:
    # Read on the event loop while the engine thread may update it (a dict lookup is
    # atomic). Until the first scan has indexed the anchors, an ignored file they are
    # in counts as ignored: a change to it during that scan waits for the next one.
    evaluator = folder.evaluator
    return evaluator is not None and evaluator.live.watches(rel)
