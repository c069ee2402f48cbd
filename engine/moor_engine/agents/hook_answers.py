"""A prompt hook answered without the engine, when nothing its last answer read has moved.

A prompt hook runs as a new process on every prompt, and importing the engine, reading
moor.lock and bringing the recall index up to date cost ~200 ms at 1,000 memories before
anything is matched. So each answer the engine computes (`agent_hooks.prompt`) is kept in
`.moor/hook-answers.json` with the stat keys of everything it depended on, and the next
prompt is answered from it when every one of those keys is still the file's — by this
module, which imports only the light modules below. What is kept is the engine's own
outcome, never re-decided here: each memory's framing (`framing.Framed`, rendered again by
`framing.frame`, with the retired memories on its code beside it) or that the hook does
not show it (retired, another agent's).

What vouches is what vouches for the parse cache (`filestat`: size, mtime, ctime, inode,
device; a file modified within the racy window of the moment the answer was computed
never vouches): the workspace's settings (moor.toml, and pyproject.toml, whose
`[tool.moor]` holds them when there is no moor.toml) and moor.lock, its root folder and every folder
under the memory roots (a memory added, removed or renamed moves its folder's mtime),
every memory file, moor's own modules (an upgrade is a new judge), and per memory the
files its anchors name (a memory retired by another's `supersedes:` is retired by a memory
file, which vouches like any other; `moor supersede`, `forget` and `restore` write
moor.lock, so the retired memories named beside one shown are vouched for too). Anything
else — a memory with no verdict kept, an anchor that is not a plain file, a key that
moved, a cache that is missing or unreadable — is `None`: the engine answers and keeps its
answer (memory: prompt-hooks-answer-from-vouched-verdicts).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from moor_store.inside import read_inside, write_inside

from moor_engine.agents.framing import Framed, frame
from moor_engine.agents.prompt_names import matching, prompt_names, remembered
from moor_engine.grounding.trust import State
from moor_engine.workspace.filestat import StatKey, stat_key, stored
from moor_engine.workspace.roots import SETTINGS_FILES, STATE_DIR, find_root

FILE = f"{STATE_DIR}/hook-answers.json"
FORMAT = 3  # 2: `declaring` kept beside `references`; 3: a framing's `retired_here`
MAX_MEMORIES = 12  # a hook's context is read on every turn: the closest few, not all
_MAX_BYTES = 64 * 1024 * 1024
_PACKAGES = ("moor_engine", "moor_extractors", "moor_store")

Keys = dict[str, list[int]]


def shown_first(shown: Iterable[Framed]) -> list[Framed]:
    """What a hook shows of `shown`: memories that need a look first (the agent should
    verify those before relying on them), then by path, the first MAX_MEMORIES."""
    ordered = sorted(shown, key=lambda item: (item.state == State.CURRENT.value, item.path))
    return ordered[:MAX_MEMORIES]


# --- what vouches ---------------------------------------------------------------------------


def _key(path: Path, now_ns: int | None) -> list[int] | None:
    """The key to keep for `path` at `now_ns` (None: as it is, to compare with a kept one)."""
    try:
        key = stat_key(os.stat(path))
    except OSError:
        return None
    return list(key if now_ns is None else stored(key, now_ns))


def _code_files() -> list[str]:
    """moor's own modules: the judge whose verdicts are kept."""
    found: list[str] = []
    for name in _PACKAGES:
        spec = importlib.util.find_spec(name)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            # os.walk, not `Path.rglob`: the same files (links to folders not followed, as
            # rglob does not) at a fraction of the cost, on every prompt.
            for base, _dirs, files in os.walk(folder):
                found += [f"{base}/{f}" for f in files if f.endswith(".py")]
    return found


def workspace_keys(
    root: Path, memory_roots: Sequence[str], memories: Iterable[str], now_ns: int
) -> Keys | None:
    """The keys of what decides which memories there are and what they say; None when one
    cannot be taken (nothing is kept then)."""
    names = [".", *SETTINGS_FILES]
    for memory_root in memory_roots:
        base = root / memory_root
        for folder, dirs, _files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            names.append(Path(folder).relative_to(root).as_posix())
    names += list(memories)
    keys: Keys = {}
    for name in names:
        key = _key(root / name, now_ns)
        if key is None and name not in SETTINGS_FILES:  # absent is kept as absent
            return None
        keys[name] = key if key is not None else []
    return keys


def code_keys(now_ns: int | None) -> Keys:
    return {path: key for path in _code_files() if (key := _key(Path(path), now_ns)) is not None}


def kept_code_keys(kept: Kept, now_ns: int) -> Keys:
    """`code_keys(now_ns)` from the keys `kept`'s lookup took in this process (they held
    then: `vouched`), instead of stat-ing every module again. A module changed since is
    seen by the next lookup, which compares with the keys taken then."""
    return {path: list(stored(StatKey(*key), now_ns)) for path, key in kept.code.items()}


def file_keys(root: Path, files: Iterable[str], now_ns: int) -> Keys | None:
    keys: Keys = {}
    for name in files:
        key = _key(root / name, now_ns)
        if key is None:
            return None
        keys[name] = key
    return keys


def _vouched(base: Path | None, keys: Mapping[str, Sequence[int]]) -> bool:
    # Joined as text, not `Path / name`: a thousand memory files are stat-ed per prompt.
    prefix = "" if base is None else f"{os.fspath(base)}/"
    for name, key in keys.items():
        try:
            now: list[int] | None = list(stat_key(os.stat(prefix + name)))
        except OSError:
            now = None
        if now != (list(key) if key else None):  # recorded as absent: it must still be absent
            return False
    return True


# --- keeping an answer -----------------------------------------------------------------------


def keep(
    root: Path,
    workspace: Keys,
    code: Keys,
    references: Mapping[str, list[str]],
    declaring: Sequence[str],
    verdicts: Mapping[str, tuple[Framed | None, Keys]],
    previous: Kept | None = None,
) -> None:
    """Keep the engine's verdicts (a memory's framing, or None: not shown) with what
    vouches for them, added to the ones kept before if the workspace is still as it was
    (`previous`: the kept answer the engine started from, when it did; else it is read)."""
    memories: dict[str, object] = {}
    if previous is not None:
        old: Mapping[str, object] | None = {
            "workspace": previous.workspace,
            "code": previous.code,
            "memories": previous.memories,
        }
    else:
        old = _read(root)
    if old is not None and old.get("workspace") == workspace and old.get("code") == code:
        kept = old.get("memories")
        if isinstance(kept, dict):
            memories.update(kept)
    for path, (shown, files) in verdicts.items():
        memories[path] = {"framed": None if shown is None else asdict(shown), "files": files}
    document = {
        "format": FORMAT,
        "workspace": workspace,
        "code": code,
        "references": dict(references),
        "declaring": list(declaring),
        "memories": memories,
    }
    # A cache: lost in a crash it costs one engine answer, and a torn one is not JSON (not
    # used), so it is not synced to disk on every prompt.
    write_inside(root, FILE, json.dumps(document, sort_keys=True).encode("utf-8"), durable=False)


def _read(root: Path) -> dict[str, object] | None:
    try:
        value = json.loads(read_inside(root, FILE, limit=_MAX_BYTES))
    except (OSError, ValueError):  # missing, not ours to read, not JSON: not vouched
        return None
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        return None
    return value


def _framed(fields: object) -> Framed | None:
    """A kept framing read back, or None when it is not one."""
    if not isinstance(fields, dict):
        return None
    text = {name: fields.get(name) for name in ("path", "title", "state", "text")}
    lists = {name: fields.get(name) for name in ("about", "warnings", "retired_here")}
    if not all(isinstance(value, str) for value in text.values()):
        return None
    if not all(
        isinstance(value, list) and all(isinstance(v, str) for v in value)
        for value in lists.values()
    ):
        return None
    return Framed(
        path=str(text["path"]),
        title=str(text["title"]),
        state=str(text["state"]),
        about=tuple(str(v) for v in lists["about"] or ()),
        warnings=tuple(str(v) for v in lists["warnings"] or ()),
        text=str(text["text"]),
        retired_here=tuple(str(v) for v in lists["retired_here"] or ()),
    )


# --- answering from it -----------------------------------------------------------------------


@dataclass(frozen=True)
class Kept:
    """The engine's last answer, every workspace and code key of which still holds: which
    memories there are and what they refer to are as they were then (`references`, and
    `declaring`: those that declare `supersedes:`), and so is the judge. Per memory, a
    verdict is used only while its own files' keys hold too (`answer`)."""

    root: Path
    workspace: Keys
    code: Keys
    references: dict[str, list[str]]
    declaring: list[str]
    memories: dict[str, object]

    def answer(self, prompt: str) -> tuple[str, tuple[str, ...]] | None:
        """The hook's context and the memories in it for `prompt`, as the engine decided
        them; None when a matched memory has no verdict kept that its files vouch for."""
        shown: list[Framed] = []
        for path in matching(self.references, prompt_names(prompt)):
            entry = self.memories.get(path)
            if not isinstance(entry, dict) or not isinstance(entry.get("files"), dict):
                return None
            if not _vouched(self.root, entry["files"]):
                return None
            fields = entry.get("framed")
            if fields is None:
                continue  # the engine does not show it to a hook
            item = _framed(fields)
            if item is None:
                return None
            shown.append(item)
        chosen = shown_first(shown)
        if not chosen:
            return "", ()
        return frame(chosen), tuple(item.path for item in chosen)


def vouched(root: Path) -> Kept | None:
    """The kept answer of the workspace at `root` if its workspace and code keys all hold
    (each was stored outside the racy window, so each holds as a key taken now would);
    None when there is none, it is unreadable, or anything it rests on moved."""
    document = _read(root)
    if document is None:
        return None
    workspace, code = document.get("workspace"), document.get("code")
    references, memories = document.get("references"), document.get("memories")
    declaring = document.get("declaring")
    if not (
        isinstance(workspace, dict)
        and isinstance(code, dict)
        and isinstance(references, dict)
        and all(
            isinstance(refs, list) and all(isinstance(ref, str) for ref in refs)
            for refs in references.values()
        )
        and isinstance(declaring, list)
        and all(isinstance(path, str) for path in declaring)
        and isinstance(memories, dict)
    ):
        return None
    if code != code_keys(None) or not _vouched(root, workspace):
        return None
    return Kept(root, workspace, code, references, declaring, memories)


def lookup(start: Path, prompt: str) -> tuple[tuple[str, tuple[str, ...]] | None, Kept | None]:
    """The kept answer to `prompt` (None: the engine must answer), and what was kept that
    still holds (the engine starts from it: `agent_hooks.prompt`)."""
    if remembered(prompt) is not None:
        return None, None  # a write goes through the one write path, always
    kept = vouched(find_root(start))
    return (None if kept is None else kept.answer(prompt)), kept


def cached_answer(start: Path, prompt: str) -> tuple[str, tuple[str, ...]] | None:
    """The hook's context and the memories in it for `prompt`, as the engine last decided
    them, if everything that decided them is as it was; None when the engine must answer."""
    return lookup(start, prompt)[0]
