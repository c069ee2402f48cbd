"""`moor doctor`: the health of the corpus as a whole, each finding with the command that
fixes it. Read-only: it writes nothing, journals nothing and removes nothing it reports.

What is looked at, in order: the journal's file (before anything opens it, so a damaged one
is seen as it is, never set aside by the look), stray temporary files, the hook server's
socket and the agent installations, then the memories as a check sees them (without
journalling): near-identical memories bound to the same code, memories whose every anchor
is gone, the share of ungrounded memories, memories nobody reaffirmed for months while their
code changed.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import shlex
import socket
import stat
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from moor_extractors.memory import normalise_value
from moor_extractors.reference import ANCHOR_PREFIX
from moor_store import intent
from moor_store.inside import NotInside, read_inside, stray_temporaries
from moor_store.journal import Entry, Journal, inspect
from moor_store.recall_index import INDEX_FILE
from moor_store.sqlite_health import integrity

from moor_engine.grounding.check import Evaluation
from moor_engine.grounding.trust import MemoryReport, State
from moor_engine.session import Session
from moor_engine.workspace.roots import CONFIG_FILE, STATE_DIR
from moor_engine.workspace.workspace import JOURNAL_FILE, LOCK_FILE, Workspace

# Text at least this alike (difflib's ratio over the normalised words) is "saying the same".
NEAR_IDENTICAL: Final = 0.9
_MONTH: Final = timedelta(days=30.44)
# Where a killed writer's temporary file may be left (as `session.remove_strays` sweeps).
_STRAY_FOLDERS: Final = (
    (".", (LOCK_FILE, CONFIG_FILE, ".gitignore")),
    (STATE_DIR, None),
    (f"{STATE_DIR}/diffs", None),
    (".claude", ("settings.json",)),
)
_HOOK_SOCKET: Final = "hooks.sock"
_MOOR_HOOK: Final = "moor hooks run "
_MCP_FILE: Final = ".mcp.json"


@dataclass(frozen=True)
class Finding:
    """One thing a person should act on (`act`), or know (`act` False), and the command
    that fixes it."""

    code: str  # stable: duplicate, all_anchors_gone, ungrounded_share, unreaffirmed, …
    message: str
    fix: str
    paths: tuple[str, ...] = ()
    act: bool = True

    def as_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "message": self.message,
            "fix": self.fix,
            "paths": list(self.paths),
            "act": self.act,
        }


@dataclass
class Health:
    memories: int
    findings: list[Finding] = field(default_factory=list)
    looked_at: list[str] = field(default_factory=list)  # what was examined, in order

    @property
    def needs_attention(self) -> bool:
        return any(finding.act for finding in self.findings)

    def as_json(self) -> dict[str, object]:
        return {
            "memories": self.memories,
            "needs_attention": self.needs_attention,
            "looked_at": self.looked_at,
            "findings": [finding.as_json() for finding in self.findings],
        }


def before_opening(workspace: Workspace) -> list[Finding]:
    """What must be seen before a session opens the workspace (opening one sets a damaged
    journal aside and sweeps stray temporary files)."""
    return [
        *_journal_file(workspace),
        *_recall_index(workspace.root),
        *_interrupted(workspace.root),
        *_strays(workspace.root),
    ]


def _interrupted(root: Path) -> list[Finding]:
    if not intent.pending(root):
        return []
    return [
        Finding(
            "interrupted_action",
            f"an action was interrupted ({intent.INTENT_PATH} is left): its writes are "
            "half done until a command completes them",
            "moor check  # any command that opens the workspace completes it",
            (intent.INTENT_PATH,),
        )
    ]


def journal_damaged(early: Iterable[Finding]) -> bool:
    """Whether `before_opening` found the journal damaged: then it is not to be opened."""
    return any(f.code in ("journal_corrupt", "journal_unreadable") for f in early)


def diagnose(session: Session, early: list[Finding], now: datetime | None = None) -> Health:
    """The corpus's health: `early` (from `before_opening`) and what this session sees."""
    now = now or datetime.now(UTC)
    paths = session.select()
    evaluation = session.evaluate(paths)
    reports = [m for m in evaluation.report.memories if m.state is not State.RETIRED]
    health = Health(len(evaluation.report.memories))
    health.looked_at = [
        "journal",
        "recall index",
        "interrupted actions",
        "temporary files",
        "hook server",
        "agent installation",
        "duplicates",
        "gone anchors",
        "custom anchors",
        "ungrounded share",
        "unreaffirmed",
    ]
    health.findings.extend(early)
    health.findings.extend(_hook_server(session.workspace.root))
    health.findings.extend(_installations(session.workspace.root))
    health.findings.extend(_duplicates(reports, evaluation))
    health.findings.extend(_all_gone(reports, session.lock.closed))
    health.findings.extend(_unwatched_anchors(session, reports))
    health.findings.extend(_ungrounded(reports, session.workspace.config.doctor.ungrounded_share))
    if session.journal is not None:
        months = session.workspace.config.doctor.unreaffirmed_months
        health.findings.extend(_unreaffirmed(reports, session.journal, months, now))
    return health


# -- the journal and the files beside it -------------------------------------------------


def _journal_file(workspace: Workspace) -> list[Finding]:
    path = workspace.journal_path
    rel = f"{STATE_DIR}/{JOURNAL_FILE}"
    aside = f"mv {rel} {rel}.broken && moor check"
    found: list[Finding] = []
    health = inspect(path) if not path.is_symlink() else None
    if health is not None and health.unreadable is not None:
        found.append(
            Finding(
                "journal_unreadable",
                f"{rel} cannot be read as a journal: {health.unreadable}",
                aside + "  # the old one is kept beside it",
                (rel,),
            )
        )
    elif health is not None and health.problems:
        shown = "; ".join(health.problems[:3])
        found.append(
            Finding(
                "journal_corrupt",
                f"{rel} fails SQLite's integrity check: {shown}",
                f"moor export --output journal-export.jsonl; {aside}; "
                "moor import journal-export.jsonl",
                (rel,),
            )
        )
    elif health is not None and health.missing:
        gaps = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in health.missing[:5])
        found.append(
            Finding(
                "journal_gap",
                f"{rel} misses entries (seq {gaps}): something other than moor removed them",
                aside + "  # history before the gap is kept in the old file",
                (rel,),
            )
        )
    with contextlib.suppress(OSError):
        broken = sorted(
            name
            for name in os.listdir(path.parent)
            if name.startswith(f"{JOURNAL_FILE}.broken-") and not name.endswith(("-wal", "-shm"))
        )
        if broken:
            found.append(
                Finding(
                    "journal_set_aside",
                    f"{len(broken)} unusable journal(s) were set aside and a new one started: "
                    f"their history is not in the journal moor reads",
                    f"rm {STATE_DIR}/{JOURNAL_FILE}.broken-*  # once nothing in them is wanted",
                    tuple(f"{STATE_DIR}/{name}" for name in broken),
                    act=False,
                )
            )
    return found


def _recall_index(root: Path) -> list[Finding]:
    """A recall index SQLite finds damaged. Recall rebuilds one it cannot open, but one whose
    damage is deeper than its header can answer from broken pages until then."""
    rel = f"{STATE_DIR}/{INDEX_FILE}"
    problems = integrity(root / rel)
    if not problems:
        return []
    return [
        Finding(
            "index_needs_rebuild",
            f"{rel} is damaged ({'; '.join(problems[:3])}): recall may miss memories",
            f"rm -- {rel} {rel}-wal {rel}-shm  # the next recall builds it again",
            (rel,),
        )
    ]


def _strays(root: Path) -> list[Finding]:
    found: list[str] = []
    for folder, names in _STRAY_FOLDERS:
        found.extend(
            name if folder == "." else f"{folder}/{name}"
            for name in stray_temporaries(root, folder, names)
        )
    with contextlib.suppress(OSError):
        checkpoints = root / STATE_DIR / "checkpoints"
        if checkpoints.is_dir() and not checkpoints.is_symlink():
            for agent in sorted(os.listdir(checkpoints)):
                rel = f"{STATE_DIR}/checkpoints/{agent}"
                found.extend(f"{rel}/{name}" for name in stray_temporaries(root, rel))
    if not found:
        return []
    return [
        Finding(
            "stray_temporary",
            f"{len(found)} temporary file(s) left by a killed moor write",
            "rm -- " + " ".join(shlex.quote(path) for path in found),
            tuple(found),
        )
    ]


def _hook_server(root: Path) -> list[Finding]:
    """A socket nobody answers on is only told: the next prompt hook replaces it."""
    rel = f"{STATE_DIR}/{_HOOK_SOCKET}"
    try:
        mode = os.lstat(root / rel).st_mode
    except OSError:
        return []
    if not stat.S_ISSOCK(mode):
        return [
            Finding(
                "hook_socket_not_a_socket",
                f"{rel} is not a socket: no prompt hook is answered by a hook server here",
                f"rm -- {rel}",
                (rel,),
            )
        ]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(root / rel))
        except OSError:
            return [
                Finding(
                    "hook_server_gone",
                    f"{rel} is left by a hook server that has stopped; the next prompt hook "
                    "starts another",
                    f"rm -- {rel}",
                    (rel,),
                    act=False,
                )
            ]
    return []


def _installations(root: Path) -> list[Finding]:
    from moor_engine.agents.agent_layouts import LAYOUTS

    found: list[Finding] = []
    for agent, layout in LAYOUTS.items():
        settings = _json_file(root, layout.file)
        if isinstance(settings, str):
            found.append(
                Finding(
                    "hooks_settings_unreadable",
                    f"{layout.file}: {settings}; moor's hooks cannot be installed or run",
                    f"fix {layout.file} by hand, then `moor hooks install {agent}`",
                    (layout.file,),
                )
            )
        elif isinstance(settings, dict):
            found.extend(_partial_hooks(agent, layout.file, layout.hooks, settings))
    mcp = _json_file(root, _MCP_FILE)
    if isinstance(mcp, str):
        found.append(
            Finding(
                "mcp_config_unreadable",
                f"{_MCP_FILE}: {mcp}; no MCP server it lists (moor's included) starts",
                f"fix {_MCP_FILE} by hand",
                (_MCP_FILE,),
            )
        )
    return found


def _partial_hooks(
    agent: str, file: str, events: Iterable[str], settings: dict[str, object]
) -> list[Finding]:
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    wanted = set(events)
    present = {event for event in wanted if _MOOR_HOOK in json.dumps(hooks.get(event, []))}
    missing = sorted(wanted - present)
    if not present or not missing:
        return []
    return [
        Finding(
            "hooks_partly_installed",
            f"{file} has moor's hooks for {', '.join(sorted(present))} but not for "
            f"{', '.join(missing)}",
            f"moor hooks install {agent}",
            (file,),
        )
    ]


def _json_file(root: Path, rel: str) -> object:
    """The file's JSON value, None when there is no file, or a text saying why it is none."""
    try:
        data = read_inside(root, rel)
    except FileNotFoundError:
        return None
    except (NotInside, OSError) as error:
        return f"cannot be read ({error})"
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        return "not UTF-8"
    except json.JSONDecodeError as error:
        return f"not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"


# -- the memories ------------------------------------------------------------------------


def _anchors(report: MemoryReport) -> set[str]:
    return {a.canonical for a in report.anchors if a.canonical is not None}


def _words(evaluation: Evaluation, path: str) -> tuple[str, ...]:
    """The memory's normalised words: compared as words, not characters (a memory of a few
    thousand characters compared character by character cost a second a pair)."""
    loaded = evaluation.loaded.get(path)
    if loaded is None or loaded.memory is None:
        return ()
    return tuple(normalise_value(f"{loaded.memory.title}\n{loaded.memory.body}").split())


def _duplicates(reports: list[MemoryReport], evaluation: Evaluation) -> list[Finding]:
    """By anchor first: only memories sharing an anchor are compared, then by their words."""
    by_anchor: dict[str, list[str]] = defaultdict(list)
    for report in reports:
        for anchor in sorted(_anchors(report)):
            by_anchor[anchor].append(report.path)
    pairs: set[tuple[str, str]] = set()
    for paths in by_anchor.values():
        ordered = sorted(set(paths))
        pairs.update((a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :] if a != b)
    words: dict[str, tuple[str, ...]] = {}
    found: list[Finding] = []
    for first, second in sorted(pairs):
        one = words.setdefault(first, _words(evaluation, first))
        other = words.setdefault(second, _words(evaluation, second))
        if not one or not other:
            continue
        matcher = difflib.SequenceMatcher(None, one, other, autojunk=False)
        # The cheap upper bounds first: most pairs about one anchor are not alike at all.
        if matcher.real_quick_ratio() < NEAR_IDENTICAL or matcher.quick_ratio() < NEAR_IDENTICAL:
            continue
        alike = matcher.ratio()
        if alike < NEAR_IDENTICAL:
            continue
        found.append(
            Finding(
                "duplicate",
                f"{first} and {second} are bound to the same code and say nearly the same "
                f"({round(alike * 100)} % alike)",
                f'moor supersede {shlex.quote(second)} --by {shlex.quote(first)} --why "says '
                f'what {first} says"',
                (first, second),
            )
        )
    return found


def _all_gone(reports: list[MemoryReport], closed: Collection[str]) -> list[Finding]:
    """Memories whose every anchor is gone, or closed (a closed custom anchor is watched no
    more: a memory only about closed ones tells nobody anything again)."""
    found = []
    for report in reports:
        anchors = [a for a in report.anchors if a.canonical is not None]
        if not anchors or any(
            a.state is not State.GONE and a.canonical not in closed for a in anchors
        ):
            continue
        first = anchors[0]
        if first.candidates and first.canonical not in closed:
            fix = (
                f"moor follow {shlex.quote(report.path)} --from {shlex.quote(first.ref)} "
                f"--to {shlex.quote(first.candidates[0].ref)}"
            )
        else:
            fix = f'moor forget {shlex.quote(report.path)} --why "the code it is about is gone"'
        found.append(
            Finding(
                "all_anchors_gone",
                f"{report.path}: everything it is about is gone or closed "
                f"({', '.join(a.ref for a in anchors)})",
                fix,
                (report.path,),
            )
        )
    return found


def _unwatched_anchors(session: Session, reports: list[MemoryReport]) -> list[Finding]:
    """Declared custom anchors (not closed) that no memory is about: their command runs at
    every check for nobody."""
    about = {canonical for report in reports for canonical in _anchors(report)}
    about.update(a for memory in session.lock.memories.values() for a in memory.anchors)
    found = []
    for name in sorted(session.workspace.config.anchors):
        canonical = ANCHOR_PREFIX + name
        if canonical in about or canonical in session.lock.closed:
            continue
        found.append(
            Finding(
                "anchor_unbound",
                f"{canonical} is declared in moor.toml but no memory is about it",
                f'moor close {canonical} --why "no memory is about it"  '
                f"# or remove [anchors.{name}] from moor.toml, or bind a memory to it",
                (CONFIG_FILE,),
            )
        )
    return found


def _ungrounded(reports: list[MemoryReport], share: float) -> list[Finding]:
    ungrounded = sorted(r.path for r in reports if r.state is State.UNGROUNDED)
    if not reports or len(ungrounded) / len(reports) <= share:
        return []
    first = ungrounded[0]
    return [
        Finding(
            "ungrounded_share",
            f"{len(ungrounded)} of {len(reports)} memories have no `about:` "
            f"(more than the {share:g} moor.toml's [doctor] ungrounded_share allows): "
            "nothing tells anyone when they stop being true",
            f"add `about:` to each (e.g. {first}), then `moor bind {shlex.quote(first)}`",
            tuple(ungrounded),
        )
    ]


_AFFIRMING: Final = {("open", "bind"), ("revise", "reaffirm"), ("revise", "follow")}


def _unreaffirmed(
    reports: list[MemoryReport], journal: Journal, months: int, now: datetime
) -> list[Finding]:
    """Memories whose latest bind, reaffirm or follow is older than `months` and whose code
    has moved since, as this clone's journal tells it (a clone without that history finds
    none)."""
    limit = now - months * _MONTH
    found = []
    for report in reports:
        anchors = _anchors(report)
        if not anchors:
            continue
        entries = journal.entries_for(report.path, anchors)
        affirmed = _last_affirmed(entries)
        if affirmed is None or _when(affirmed.at) > limit:
            continue
        moved = [e for e in entries if e.kind == "transition" and e.seq > affirmed.seq]
        if not moved:
            continue
        found.append(
            Finding(
                "unreaffirmed",
                f"{report.path}: nobody has reaffirmed it since {affirmed.at[:10]} "
                f"(more than {months} months) and its code has changed {len(moved)} time(s) "
                "since",
                f"moor diff {shlex.quote(report.path)}; moor reaffirm {shlex.quote(report.path)} "
                '--why "..."',
                (report.path,),
            )
        )
    return found


def _last_affirmed(entries: Iterable[Entry]) -> Entry | None:
    last = None
    for entry in entries:
        if (entry.kind, entry.code) in _AFFIRMING:
            last = entry
    return last


def _when(at: str) -> datetime:
    try:
        return datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return datetime.max.replace(tzinfo=UTC)  # unreadable: never "old"
