"""`moor rules`: memories compiled into path-scoped rule files, so a coding agent reads the
memories about code only when it touches that code.

One rule file per folder holding code the memories are about (a memory about files in two
folders is in both), for each target: Claude Code's `.claude/rules/moor-<slug>.md`
(frontmatter `paths:`), Cursor's `.cursor/rules/moor-<slug>.mdc` (`description`, `globs`,
`alwaysApply: false`), and a managed block of the folder's own `AGENTS.md`. The memories are
`agent_context.shown_memories`, framed by `framing.frame`, budgeted by `agent_context.fit`;
like `moor context`, everything is decided from the check alone, so a fresh clone computes
the same bytes.

A rule file is moor's only when the line after its frontmatter is `MARKER`: any other file
in those folders is the user's, never replaced nor removed (a name collision is refused).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from moor_store.inside import (
    exists_inside,
    open_inside_dir,
    read_inside,
    stat_inside,
)
from moor_store.intent import Change

from moor_engine.agents.agent_context import Shown, fit, managed, merged, shown_memories, tokens
from moor_engine.agents.framing import frame
from moor_engine.agents.outputs import reserved
from moor_engine.memory import namespaces
from moor_engine.session import Session

MARKER = "<!-- moor:rules (written by `moor rules --write`; edits are replaced) -->"
START = "<!-- moor:rules:start (written by `moor rules --write`; edits inside are replaced) -->"
END = "<!-- moor:rules:end -->"
DEFAULT_BUDGET = 1500  # tokens per file
TARGETS = ("claude", "cursor", "agents")
FOLDERS = {"claude": ".claude/rules", "cursor": ".cursor/rules"}
SUFFIXES = {"claude": ".md", "cursor": ".mdc"}
AGENTS_FILE = "AGENTS.md"
_SLUG_MAX = 60
# What a glob keeps of a path; any other character (glob syntax, quotes, commas, spaces,
# control characters) becomes `?`, which matches it and needs no escaping in either format.
_GLOB_SAFE = re.compile(r"[^\w./+-]")


class Status(Enum):
    UP_TO_DATE = "up to date"
    MISSING = "missing"
    OUT_OF_DATE = "out of date"
    STALE = "stale"  # moor's, for a folder that no longer has memories: removed
    NOT_MOORS = "not moor's"  # a user's file where moor would write: refused


@dataclass(frozen=True)
class RuleFile:
    """One file as `moor rules --write` would leave it."""

    target: str  # claude | cursor | agents
    folder: str  # the code's folder; "" for the root
    path: str  # workspace-relative
    text: str  # the whole file (claude, cursor) or the managed block (agents)
    included: tuple[str, ...]
    left_out: tuple[str, ...]  # over the budget
    paths: tuple[str, ...]  # the files of the folder its memories are about
    # Its pinned memories alone exceed the budget: all are in, and nothing else is.
    pinned_over_budget: bool = False

    @property
    def tokens(self) -> int:
        return tokens(self.text)

    @property
    def bytes(self) -> int:
        return len(self.text.encode("utf-8"))


@dataclass(frozen=True)
class Planned:
    """A file compared with what is on disk, and what `--write` does to it."""

    path: str
    target: str
    status: Status
    rule: RuleFile | None  # None for a stale file
    data: bytes | None = None  # the bytes to write; None: leave (or, stale, remove)
    remove: bool = False


@dataclass
class RulesPlan:
    budget: int
    files: list[Planned] = field(default_factory=list)

    @property
    def refused(self) -> list[Planned]:
        return [p for p in self.files if p.status is Status.NOT_MOORS]

    @property
    def changes(self) -> list[Planned]:
        return [p for p in self.files if p.status not in (Status.UP_TO_DATE, Status.NOT_MOORS)]


def glob_for(path: str) -> str:
    """A glob naming `path` in both rule formats: its odd characters matched by `?`."""
    return _GLOB_SAFE.sub("?", path)


def slugs(folders: Iterable[str]) -> dict[str, str]:
    """Each folder's rule-file name stem: `src/net` → `moor-src-net`, the root → `moor-root`;
    names that would collide, or are too long, carry a digest of the folder instead."""
    wanted = sorted(set(folders))
    plain = {folder: _plain_slug(folder) for folder in wanted}
    seen: dict[str, int] = {}
    for slug in plain.values():
        seen[slug] = seen.get(slug, 0) + 1
    chosen: dict[str, str] = {}
    for folder, slug in plain.items():
        if seen[slug] > 1 or len(slug) > _SLUG_MAX or not slug:
            digest = hashlib.sha256(folder.encode("utf-8", "surrogateescape")).hexdigest()[:8]
            slug = f"{slug[:_SLUG_MAX].rstrip('-')}-{digest}".lstrip("-")
        chosen[folder] = f"moor-{slug}"
    return chosen


def _plain_slug(folder: str) -> str:
    if folder == "":
        return "root"
    return re.sub(r"[^a-z0-9]+", "-", folder.lower()).strip("-")


def rule_files(
    session: Session,
    budget: int = DEFAULT_BUDGET,
    agent: str | None = None,
    targets: Iterable[str] = TARGETS,
) -> list[RuleFile]:
    """Every rule file the memories call for, by target then folder."""
    agent = namespaces.reader(agent)
    chosen = set(targets)
    by_folder: dict[str, list[Shown]] = {}
    for shown in shown_memories(session, agent):
        for folder in sorted({posixpath.dirname(path) for path in shown.paths}):
            by_folder.setdefault(folder, []).append(shown)
    names = slugs(by_folder)
    files: list[RuleFile] = []
    for target in TARGETS:
        if target not in chosen:
            continue
        for folder, group in sorted(by_folder.items()):
            if target == "agents":
                if not _agents_folder(session, folder):
                    continue
                path = posixpath.join(folder, AGENTS_FILE)
            else:
                path = f"{FOLDERS[target]}/{names[folder]}{SUFFIXES[target]}"
            files.append(_rule_file(target, folder, path, group, budget))
    return files


def _agents_folder(session: Session, folder: str) -> bool:
    """Whether `folder` may get a nested AGENTS.md: it exists (moor creates no folder for
    code that is gone) and the file there would not be moor's, git's or a memory's
    (`outputs.reserved`: in a memory folder it would read as a memory)."""
    workspace = session.workspace
    if reserved(workspace, posixpath.join(folder, AGENTS_FILE)) is not None:
        return False
    if folder == "":
        return True
    try:
        return stat.S_ISDIR(stat_inside(workspace.root, folder).st_mode)
    except OSError:
        return False


def _rule_file(target: str, folder: str, path: str, shown: list[Shown], budget: int) -> RuleFile:
    files = sorted({p for s in shown for p in s.paths if posixpath.dirname(p) == folder})
    where = f"{glob_for(folder)}/" if folder else "the workspace root"
    if target == "claude":
        head = "---\npaths:\n" + "".join(f'  - "{glob_for(p)}"\n' for p in files) + "---\n"
    elif target == "cursor":
        head = (
            f"---\ndescription: moor memories about the code in {where} (notes, not "
            f"instructions)\nglobs: {', '.join(glob_for(p) for p in files)}\n"
            "alwaysApply: false\n---\n"
        )
    else:
        head = ""
    opening = MARKER if target != "agents" else START
    title = f"# Memories about the code in {where}\n"
    # The note about memories left out is reserved for up front, so only pinned memories
    # make a file exceed its budget (the count is written with as many digits as memories
    # there are).
    closing = END if target == "agents" else ""
    overhead = tokens(head + opening + title + closing + _left_out_note(len(shown))) + 3
    fitted = fit(shown, budget, overhead)
    body = frame(fitted.kept)
    if fitted.left_out:
        body += _left_out_note(len(fitted.left_out))
    if target == "agents":
        text = f"{START}\n{title}\n{body}\n{END}"
    else:
        text = f"{head}{MARKER}\n{title}\n{body}\n"
    return RuleFile(
        target,
        folder,
        path,
        text,
        tuple(m.path for m in fitted.kept),
        tuple(fitted.left_out),
        tuple(files),
        fitted.pinned_over_budget,
    )


def _left_out_note(count: int) -> str:
    return (
        f"\n\n{count} more memories about this code did not fit the budget: "
        "ask `moor about <file>` before editing a file here."
    )


def is_moors(text: str) -> bool:
    """Whether a rule file is one moor wrote: the line after its frontmatter is MARKER."""
    lines = _lf(text).split("\n")
    if not lines or lines[0] != "---":
        return False
    try:
        closing = lines.index("---", 1)
    except ValueError:
        return False
    return closing + 1 < len(lines) and lines[closing + 1] == MARKER


def plan(
    session: Session,
    budget: int = DEFAULT_BUDGET,
    agent: str | None = None,
    targets: Iterable[str] = TARGETS,
) -> RulesPlan:
    """The rule files compared with the disk: what is up to date, what `--write` writes
    or removes, and which user files stand in the way."""
    chosen = [t for t in TARGETS if t in set(targets)]
    result = RulesPlan(budget)
    wanted = rule_files(session, budget, agent, chosen)
    for rule in wanted:
        existing = _read(session, rule.path)
        result.files.append(_compare(rule, existing))
    expected = {rule.path for rule in wanted}
    for target in chosen:
        for path in _written_before(session, target):
            if path in expected:
                continue
            existing = _read(session, path)
            if existing is None or existing == _UNDECODABLE:
                continue
            if target == "agents":
                block = managed(existing, START, END)
                if block is None:
                    continue
                rest = _without_block(existing)
                data = rest.encode("utf-8") if rest else None
                result.files.append(
                    Planned(path, target, Status.STALE, None, data, remove=not rest)
                )
            elif is_moors(existing):
                result.files.append(Planned(path, target, Status.STALE, None, remove=True))
    result.files.sort(key=lambda p: (TARGETS.index(p.target), p.path))
    return result


_UNDECODABLE = "\0not UTF-8"  # no text file moor writes is this: a user's file


def _read(session: Session, path: str) -> str | None:
    """The file's text; None when absent, `_UNDECODABLE` when it is not UTF-8 (a file moor
    never wrote, so it is refused, never overwritten)."""
    try:
        return read_inside(session.workspace.root, path).decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        return _UNDECODABLE


def _lf(text: str) -> str:
    """`text` with CRLF line ends as LF: a clone with `core.autocrlf` checks moor's files
    out with CRLF, and they are still moor's and still up to date."""
    return text.replace("\r\n", "\n")


def _compare(rule: RuleFile, existing: str | None) -> Planned:
    if rule.target == "agents":
        if existing == _UNDECODABLE:
            return Planned(rule.path, rule.target, Status.NOT_MOORS, rule)
        now = managed(existing, START, END) if existing is not None else None
        if now is not None and _lf(now) == rule.text:
            return Planned(rule.path, rule.target, Status.UP_TO_DATE, rule)
        status = Status.MISSING if now is None else Status.OUT_OF_DATE
        data = merged(existing, rule.text, START, END).encode("utf-8")
        return Planned(rule.path, rule.target, status, rule, data)
    if existing is None:
        return Planned(rule.path, rule.target, Status.MISSING, rule, rule.text.encode("utf-8"))
    if _lf(existing) == rule.text:
        return Planned(rule.path, rule.target, Status.UP_TO_DATE, rule)
    if not is_moors(existing):
        return Planned(rule.path, rule.target, Status.NOT_MOORS, rule)
    return Planned(rule.path, rule.target, Status.OUT_OF_DATE, rule, rule.text.encode("utf-8"))


def _written_before(session: Session, target: str) -> list[str]:
    """Where an earlier `--write` may have left a file of `target`: moor's names in the
    rules folder, every AGENTS.md that counts."""
    root = session.workspace.root
    if target == "agents":
        found = [p for p in session.workspace.code_paths if posixpath.basename(p) == AGENTS_FILE]
        if exists_inside(root, AGENTS_FILE):
            found.append(AGENTS_FILE)
        return sorted(set(found))
    folder = FOLDERS[target]
    try:
        with open_inside_dir(root, folder, create=False) as fd:
            names = os.listdir(fd)
    except FileNotFoundError:
        return []
    return sorted(
        f"{folder}/{name}"
        for name in names
        if name.startswith("moor-") and name.endswith(SUFFIXES[target])
    )


def _without_block(existing: str) -> str:
    """An AGENTS.md with moor's rules block taken out (as `merged` put it in); "" when
    nothing else is left."""
    start = existing.find(START[: START.index(" (")])
    end = existing.find(END, start)
    before, after = existing[:start].rstrip("\n"), existing[end + len(END) :].lstrip("\n")
    if before.strip() and after.strip():
        return before + "\n\n" + after
    if before.strip():
        return before + "\n"
    return after if after.strip() else ""


def write_rules(
    session: Session,
    budget: int = DEFAULT_BUDGET,
    agent: str | None = None,
    targets: Iterable[str] = TARGETS,
) -> RulesPlan:
    """Plan and carry it out holding the write lock: every change written or removed, or,
    while a user's file stands where a rule file would go, nothing at all (the plan's
    `refused` names it)."""
    root = session.workspace.root
    with session.writing("rules"):
        rules = plan(session, budget, agent, targets)
        if rules.refused:
            return rules
        # One unit (moor_store.intent): a run killed part-way is completed by the next
        # one, so the rule files never stand half old, half new.
        change = Change("moor rules --write")
        for planned in rules.changes:
            try:
                before: bytes | None = read_inside(root, planned.path)
            except FileNotFoundError:
                before = None
            if planned.remove and before is not None:
                change.remove(planned.path, before)
            elif planned.data is not None:
                change.write(planned.path, before, planned.data)
        session.commit(change)
    return rules
