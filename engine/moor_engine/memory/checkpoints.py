"""Checkpoints: where an agent left its work, so it (or the next one) can pick it up.

A checkpoint is the agent's summary, its next steps and the files it was working on, kept
under `.moor/checkpoints/<agent>/<UTC timestamp>-<n>.json` in this clone (local, like the
journal: a checkpoint is one agent's working state, not the team's knowledge, which is what
memories are for). Each is a new file created exclusively through the contained writes
(`moor_store.inside`), never overwritten, so two agents saving at once both keep theirs;
`<n>` tells apart checkpoints saved in the same millisecond. Resume lists the newest first,
by the timestamp and `<n>` in the name, never by a clock read from the file's metadata.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from moor_extractors.model import Failure
from moor_extractors.reference import normalise_path, resolve_path
from moor_store.inside import NotInside, open_inside_dir, read_inside, write_inside

from moor_engine.memory import namespaces
from moor_engine.usage import UsageError
from moor_engine.workspace.workspace import STATE_DIR

FOLDER = f"{STATE_DIR}/checkpoints"
FORMAT = 1
MAX_SUMMARY = 16_000  # characters: a checkpoint is a note to resume from, not a transcript
MAX_ITEMS = 100  # next steps, files
MAX_RESUME = 100
_MAX_BYTES = 1 << 20
_NAME = re.compile(r"(?P<stamp>[0-9]{8}T[0-9]{6}\.[0-9]{3}Z)-(?P<n>[0-9]+)\.json")


@dataclass(frozen=True)
class Checkpoint:
    agent: str
    id: str  # its file name without `.json`: the UTC timestamp and n
    at: str  # ISO-8601 UTC, when it was saved
    summary: str
    next_steps: tuple[str, ...] = ()
    files: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        return f"{FOLDER}/{self.agent}/{self.id}.json"

    def as_json(self) -> dict[str, object]:
        return {
            "agent": self.agent,
            "id": self.id,
            "at": self.at,
            "path": self.path,
            "summary": self.summary,
            "next_steps": list(self.next_steps),
            "files": list(self.files),
        }


@dataclass
class Resumed:
    """An agent's newest checkpoints, newest first, and the files that could not be read."""

    agent: str
    checkpoints: list[Checkpoint] = field(default_factory=list)
    total: int = 0  # how many it has in all
    unreadable: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Misnamed:
    """A folder under the checkpoints whose name is not an agent name."""

    path: str
    why: str


@dataclass(frozen=True)
class AgentCheckpoints:
    agent: str
    count: int
    latest: str  # the newest checkpoint's timestamp id


def save(
    root: Path,
    agent: str,
    summary: str,
    next_steps: Sequence[str] = (),
    files: Sequence[str] = (),
    *,
    now: datetime | None = None,
) -> Checkpoint:
    """Write a new checkpoint for `agent`; UsageError for a bad name or input."""
    agent = valid_agent(agent)
    summary = summary.strip()
    if not summary:
        raise UsageError("a checkpoint needs a summary: what was done, where it stands")
    if len(summary) > MAX_SUMMARY:
        raise UsageError(f"the summary is {len(summary)} characters; at most {MAX_SUMMARY}")
    steps = _items(next_steps, "next step")
    paths = tuple(_contained(root, raw) for raw in _items(files, "file"))
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    stamp = moment.strftime("%Y%m%dT%H%M%S.") + f"{moment.microsecond // 1000:03d}Z"
    at = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    n = 1
    while True:
        checkpoint = Checkpoint(agent, f"{stamp}-{n}", at, summary, steps, paths)
        data = json.dumps({"format": FORMAT, **checkpoint.as_json()}, ensure_ascii=False, indent=2)
        try:
            write_inside(root, checkpoint.path, data.encode("utf-8") + b"\n", exclusive=True)
        except FileExistsError:  # another save in the same millisecond: the next n
            n += 1
            continue
        return checkpoint


def resume(root: Path, agent: str, limit: int = 1) -> Resumed:
    """`agent`'s newest `limit` checkpoints, newest first (none saved: an empty list)."""
    agent = valid_agent(agent)
    if not 1 <= limit <= MAX_RESUME:
        raise UsageError(f"limit {limit}: between 1 and {MAX_RESUME}")
    names = _names(root, f"{FOLDER}/{agent}")
    resumed = Resumed(agent, total=len(names))
    for name in names:
        if len(resumed.checkpoints) == limit:
            break
        checkpoint = _read(root, agent, name)
        if checkpoint is None:
            resumed.unreadable.append(f"{FOLDER}/{agent}/{name}")
        else:
            resumed.checkpoints.append(checkpoint)
    return resumed


def agents(root: Path) -> list[AgentCheckpoints]:
    """Every agent with checkpoints in this clone, by name."""
    return [agent for agent in listing(root) if isinstance(agent, AgentCheckpoints)]


def listing(root: Path) -> list[AgentCheckpoints | Misnamed]:
    """Every folder under the checkpoints: an agent's checkpoints, or a folder whose name is
    not an agent name (one saved before names were lowercase), which is not read."""
    try:
        with open_inside_dir(root, FOLDER, create=False) as folder:
            entries = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError, NotInside):
        return []
    found: list[AgentCheckpoints | Misnamed] = []
    for agent in entries:
        if not namespaces.is_agent_name(agent):
            found.append(Misnamed(f"{FOLDER}/{agent}", _misnamed(agent)))
            continue
        names = _names(root, f"{FOLDER}/{agent}")
        if names:
            found.append(AgentCheckpoints(agent, len(names), names[0].removesuffix(".json")))
    return found


def _misnamed(agent: str) -> str:
    lower = agent.lower()
    hint = f"; rename the folder to {lower} to keep them" if namespaces.is_agent_name(lower) else ""
    return f"{agent!r} is not an agent name ({namespaces.GRAMMAR_WORDS}): not read{hint}"


def valid_agent(agent: str) -> str:
    """The agent's name (the one rule, `namespaces`: it names a folder); UsageError if not.
    A checkpoint kept under a name that breaks the rule (uppercase, saved before the rule was
    one) is refused too: it is local working state, and renaming the folder keeps it."""
    checked = namespaces.reader(agent)
    assert checked is not None
    return checked


def _items(values: Sequence[str], what: str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise UsageError(f"the {what}s are a list of strings, not one string")
    items = tuple(value.strip() for value in values if value.strip())
    if len(items) > MAX_ITEMS:
        raise UsageError(f"{len(items)} {what}s; at most {MAX_ITEMS}")
    return items


def _contained(root: Path, raw: str) -> str:
    """A file the agent names, as the workspace-relative path references use; refused when
    it is not inside the workspace."""
    normal = normalise_path(raw)
    if isinstance(normal, Failure):
        raise UsageError(f"file {raw}: {normal.detail}", code=normal.code, path=raw)
    contained = resolve_path(root, normal)
    if isinstance(contained, Failure):
        raise UsageError(f"file {raw}: {contained.detail}", code=contained.code, path=raw)
    return normal


def _names(root: Path, folder_rel: str) -> list[str]:
    """The checkpoint files in a folder, newest first (other names are not checkpoints)."""
    try:
        with open_inside_dir(root, folder_rel, create=False) as folder:
            listed = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError, NotInside):
        return []
    ordered = []
    for name in listed:
        match = _NAME.fullmatch(name)
        if match is not None:
            ordered.append(((match["stamp"], int(match["n"])), name))
    return [name for _key, name in sorted(ordered, reverse=True)]


def _read(root: Path, agent: str, name: str) -> Checkpoint | None:
    try:
        raw = json.loads(read_inside(root, f"{FOLDER}/{agent}/{name}", limit=_MAX_BYTES))
        steps, files = raw.get("next_steps", []), raw.get("files", [])
        if not (
            isinstance(raw["summary"], str)
            and isinstance(raw["at"], str)
            and all(isinstance(s, str) for s in [*steps, *files])
        ):
            return None
        return Checkpoint(
            agent, name.removesuffix(".json"), raw["at"], raw["summary"], tuple(steps), tuple(files)
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
