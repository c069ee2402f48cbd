"""Are agents served stale code memories? A benchmark built at run time from a public
repository's history (docs/benchmarks.md publishes its table).

1. The repository's Python files at commit A are written into a temporary workspace. Each
   function or method with a docstring of six words or more and a name of two words or
   more gets a memory, `about:` it, saying the docstring's first paragraph — what an agent
   would have noted at A. moor binds them (a real `bind`).
2. The code advances to commit B (its files at B written over A's). An oracle that is not
   moor — `ast`, the definition without its docstring compared at A and B — says which
   memories are still true: the function is the same (current), changed or gone (stale).
3. For every other changed subject, an agent wrote a new memory at B (its docstring at B)
   and left the old one: the new one is current, the old one stale.
4. Each subject is asked about by the words of its qualified name (`Command.get_help` ->
   "command get help"), as an agent names what it is about to change. The memory that
   answers it is the current one when there is one, else the stale one (flagged, it is
   still the right thing to show).

Metrics, per system, over the top 5 of each question:

* stale served as current — share of questions whose top 5 holds a stale memory that is
  not flagged;
* current missed — share of questions with a current memory where it is not in the top 5,
  or is flagged stale (the agent is told to distrust what holds);
* recall@5 — share of questions whose answer is in the top 5;
* tokens — mean tokens injected per question (one per four characters, as moor's budgets
  count).

    python bench/staleness/run.py [--repo GIT_DIR] [--from A] [--to B] [--prefix src/click]
                                  [--subjects N] [--memories M] [--json PATH] [--markdown]
"""

from __future__ import annotations

import json
import random
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from moor_engine.grounding.actions import bind
from moor_engine.session import Session

from staleness.history import (
    Function,
    changed_files,
    commit_of,
    eligible,
    export,
    first_sentence,
    functions,
    repository_name,
)
from staleness.systems import (
    TOP,
    Answer,
    BasicMemory,
    Grep,
    Moor,
    Timestamp,
    basic_memory_command,
    memory_texts,
)

SEED = 26
KINDS = ("unchanged", "changed", "refreshed", "gone")


@dataclass(frozen=True)
class Subject:
    function: Function
    kind: str  # one of KINDS: unchanged (current), changed / gone (stale), refreshed
    memory: str  # the memory written at A
    refreshed: str | None  # the memory written at B (kind "refreshed")

    @property
    def query(self) -> str:
        return " ".join(self.function.words)

    @property
    def answer(self) -> str:
        return self.refreshed or self.memory

    @property
    def current(self) -> str | None:
        return self.refreshed or (self.memory if self.kind == "unchanged" else None)


@dataclass
class Score:
    questions: int = 0
    stale_as_current: int = 0
    with_current: int = 0
    current_missed: int = 0
    found: int = 0
    tokens: int = 0
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)

    def rates(self) -> dict[str, float]:
        return {
            "stale_served_as_current": _share(self.stale_as_current, self.questions),
            "current_missed": _share(self.current_missed, self.with_current),
            "recall_at_5": _share(self.found, self.questions),
            "tokens_per_question": _share(self.tokens, self.questions),
        }


@dataclass
class Result:
    repo: str
    commits: tuple[str, str]  # A, B (full hashes)
    dates: tuple[str, str]
    labels: tuple[str, str]  # as asked (tags)
    memories: int
    subjects: dict[str, int]  # kind -> how many
    scores: dict[str, Score]
    skipped: list[str]
    source: str  # who the history is of (`history.repository_name`): the published label

    def as_json(self) -> dict[str, object]:
        return {
            "repo": self.repo,
            "source": self.source,
            "from": {"rev": self.labels[0], "commit": self.commits[0], "date": self.dates[0]},
            "to": {"rev": self.labels[1], "commit": self.commits[1], "date": self.dates[1]},
            "memories": self.memories,
            "subjects": self.subjects,
            "systems": {
                name: {**score.rates(), "by_kind": score.by_kind}
                for name, score in self.scores.items()
            },
            "skipped": self.skipped,
        }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def memory_text(function: Function, doc: str, created: str, lead: str = "") -> str:
    said = f"{lead}{doc}"
    title = first_sentence(said)[:90].rstrip()
    return (
        f"---\nabout:\n  - {json.dumps(function.ref)}\ncreated: {json.dumps(created)}\n---\n"
        f"# {title}\n\n{said}\n\n## When this changes, ask\n- Does this still hold?\n"
    )


def _slug(function: Function, suffix: str = "") -> str:
    stem = Path(function.rel).stem
    name = re.sub(r"[^a-z0-9]+", "-", f"{stem}-{function.qname}".lower()).strip("-")
    return f"memories/{name}{suffix}.md"


def choose(
    before: dict[str, Function], after: dict[str, Function], subjects: int, memories: int
) -> tuple[list[Subject], list[Function]]:
    """The subjects asked about (up to `subjects` of each kind) and the functions noted at A
    (every subject's, then others, up to `memories` in all)."""
    rng = random.Random(SEED)
    kinds: dict[str, list[Function]] = {"unchanged": [], "changed": [], "gone": []}
    for ref in sorted(before):
        function = before[ref]
        if not eligible(function):
            continue
        now = after.get(ref)
        kind = "gone" if now is None else "unchanged" if now.shape == function.shape else "changed"
        kinds[kind].append(function)
    chosen: list[Subject] = []
    changed = rng.sample(kinds["changed"], min(2 * subjects, len(kinds["changed"])))
    for n, function in enumerate(sorted(changed, key=lambda f: f.ref)):
        refresh = n % 2 == 1 and len(after[function.ref].doc.split()) >= 6
        kind = "refreshed" if refresh else "changed"
        chosen.append(
            Subject(function, kind, _slug(function), _slug(function, "-now") if refresh else None)
        )
    for kind in ("unchanged", "gone"):
        picked = rng.sample(kinds[kind], min(subjects, len(kinds[kind])))
        chosen += [Subject(f, kind, _slug(f), None) for f in sorted(picked, key=lambda f: f.ref)]
    noted = {s.function.ref: s.function for s in chosen}
    others = [f for k in kinds.values() for f in k if f.ref not in noted]
    for function in rng.sample(others, min(max(0, memories - len(noted)), len(others))):
        noted[function.ref] = function
    return chosen, [noted[ref] for ref in sorted(noted)]


def run(
    git_dir: Path,
    rev_a: str,
    rev_b: str,
    prefix: str,
    subjects: int,
    memories: int,
    work: Path | None = None,
    basic_memory: str = "off",
    cache: Path | None = None,
) -> Result:
    """`basic_memory`: `off`, `auto` (installed under `cache` when it can be) or the path of
    its executable (`systems.basic_memory_command`)."""
    commit_a, date_a = commit_of(git_dir, rev_a)
    commit_b, date_b = commit_of(git_dir, rev_b)
    with tempfile.TemporaryDirectory(prefix="moor-staleness-", dir=work) as tmp:
        root = Path(tmp) / "ws"
        (root / "memories").mkdir(parents=True)
        (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
        before = functions(root, export(git_dir, commit_a, prefix, root))
        after_root = Path(tmp) / "b"
        after = functions(after_root, export(git_dir, commit_b, prefix, after_root))
        chosen, noted = choose(before, after, subjects, memories)
        by_ref = {s.function.ref: s for s in chosen}
        paths = []
        about_file: dict[str, str] = {}  # memory written at A -> the file it is about
        for function in noted:
            path = by_ref[function.ref].memory if function.ref in by_ref else _slug(function)
            (root / path).write_text(memory_text(function, function.doc, date_a), "utf-8")
            paths.append(path)
            about_file[path] = function.rel
        with Session.open(root) as session:
            bound = bind(session, [])
            assert not bound.refused, [r.message for r in bound.refused]
        export(git_dir, commit_b, prefix, root)  # the code advances to B
        refreshed = [s for s in chosen if s.refreshed is not None]
        for subject in refreshed:
            now = after[subject.function.ref]
            text = memory_text(now, now.doc, date_b, lead="As of this release: ")
            assert subject.refreshed is not None
            (root / subject.refreshed).write_text(text, "utf-8")
            paths.append(subject.refreshed)
        with Session.open(root) as session:
            if refreshed:
                done = bind(session, [s.refreshed for s in refreshed if s.refreshed])
                assert not done.refused, [r.message for r in done.refused]
            touched = changed_files(git_dir, commit_a, commit_b, prefix)
            texts = memory_texts(root, paths)
            stale_by_date = [p for p, rel in about_file.items() if rel in touched]
            systems: dict[str, Moor | Grep | BasicMemory] = {
                "moor": Moor(session),
                "grep": Grep(texts),
                "timestamp": Timestamp(texts, stale_by_date),
            }
            skipped: list[str] = []
            command = basic_memory_command(
                basic_memory, cache or Path.home() / ".cache" / "moor-bench"
            )
            if isinstance(command, Path):
                # A copy: its indexing may rewrite the files it reads, which moor reads too.
                notes = Path(tmp) / "basic-memory-notes"
                shutil.copytree(root / "memories", notes)
                other = BasicMemory(command, notes, Path(tmp) / "basic-memory-home")
                other.prepare([s.query for s in chosen])
                systems["basic-memory"] = other
            else:
                skipped.append(command)
            stale = {s.memory for s in chosen if s.kind != "unchanged"}
            stale |= {
                _slug(f)
                for f in noted
                if f.ref not in by_ref
                and (after.get(f.ref) is None or after[f.ref].shape != f.shape)
            }
            scores = {name: score(system.ask, chosen, stale) for name, system in systems.items()}
    counts = {kind: sum(1 for s in chosen if s.kind == kind) for kind in KINDS}
    return Result(
        str(git_dir),
        (commit_a, commit_b),
        (date_a, date_b),
        (rev_a, rev_b),
        len(paths),
        counts,
        scores,
        skipped,
        repository_name(git_dir),
    )


def score(ask: Callable[[str], Answer], chosen: Sequence[Subject], stale: set[str]) -> Score:
    total = Score()
    for subject in chosen:
        answer: Answer = ask(subject.query)
        kind = total.by_kind.setdefault(
            subject.kind,
            {"questions": 0, "stale_as_current": 0, "current_missed": 0, "found": 0},
        )
        total.questions += 1
        kind["questions"] += 1
        total.tokens += answer.tokens
        served = {hit.path: hit for hit in answer.hits[:TOP]}
        if any(path in stale and not hit.flagged for path, hit in served.items()):
            total.stale_as_current += 1
            kind["stale_as_current"] += 1
        current = subject.current
        if current is not None:
            total.with_current += 1
            if current not in served or served[current].flagged:
                total.current_missed += 1
                kind["current_missed"] += 1
        if subject.answer in served:
            total.found += 1
            kind["found"] += 1
    return total
