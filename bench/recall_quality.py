"""How well `moor recall` finds the memory a query is after, how fast, and whether the current
memory of a subject outranks its stale ones — beside a grep baseline and plain BM25.

The corpus is built at run time, offline, from real code nobody here wrote: the running
interpreter's standard library, then the packages installed beside moor (site-packages).
Each function with a docstring (else comments) of six words or more becomes one memory,
`about:` that function, in a real workspace on disk (the source files copied in). The
standard library's own tests count: without them there are fewer than 30,000 such
functions on this machine. Queries are held out of the memory text:

* ``name`` — the words of the function's own name (`parse_header_params` -> "parse header
  params"), for names of two words or more; every memory about a function of that name
  counts as relevant;
* ``sentence`` — the first sentence of a docstring of two sentences or more; that sentence is
  left out of the memory, which keeps the rest. One relevant memory.

Systems, on the same memories and queries in the same run:

* ``moor`` — the engine's recall (`moor_engine.memory.recall.recall`) over the index file it builds
  (`moor_engine.memory.recall_index.ready_index`), with trust states from one real check;
* ``bm25`` — plain FTS5 BM25 (porter unicode61) over each memory file's raw text, one column,
  no code-aware tokens, no field weights, no trust;
* ``grep`` — each query word searched case-insensitively in each memory file (as
  `grep -il WORD memories/*`), ranked by how many words a file contains, then by path.

Revision currency: subjects with a history, each with a current memory written after it —
the code changed after a memory was bound (its body edited: the old memory is ``drifted``;
the function deleted: ``gone``), or the memory layer retired the old one: a new memory
``supersedes:`` it (``retired``), or it was forgotten (``moor forget``) and then its text
came back in a new file, as it does when an agent writes what it remembers or a branch from
before brings the file back (moor refuses that text through ``add`` and keeps a file of it
out of recall: ``retired``, ``tombstoned``). A subject counts when its current memory ranks
above every stale one and lands in the top 5. The states are moor's own, from a real bind,
edit, supersede, forget and check. Subjects are functions whose name has two words or more
that are not stopwords; the query is the words of the qualified name (`Fraction.from_int` ->
"fraction from int"), as a person names a subject. The baselines read the same files.

    python bench/recall_quality.py [--sizes 1000,10000,30000] [--queries N] [--subjects N]
                                   [--json PATH]
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import shutil
import sqlite3
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from moor_engine.grounding.actions import bind
from moor_engine.grounding.trust import MemoryReport
from moor_engine.memory.latch_actions import forget
from moor_engine.memory.memory_writes import Draft, add
from moor_engine.memory.recall import recall
from moor_engine.memory.recall_index import ready_index, session_verdicts
from moor_engine.memory.recall_tokens import STOPWORDS
from moor_engine.session import Session

SEED = 11
DEFAULT_SIZES = (1000, 10000, 30000)
DEFAULT_QUERIES = 150  # per kind
DEFAULT_SUBJECTS = 60  # per kind of history (drifted, gone, superseded, forgotten)
CHANGES = ("drifted", "gone", "superseded", "forgotten")
CURRENCY_NOISE = 1000  # other memories in the revision-currency workspace
TOP = 5
CHECKED_QUERIES = 60  # queries timed with a check of their candidates
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@dataclass(frozen=True)
class Function:
    source: Path  # the real file
    rel: str  # where it is copied in the workspace
    qname: str
    name: str
    lineno: int  # where its decorators start
    end_lineno: int
    body_indent: int
    def_indent: int
    sentences: tuple[str, ...]

    @property
    def ref(self) -> str:
        return f"{self.rel}#{self.qname}"


@dataclass
class Query:
    kind: str  # name | sentence
    text: str
    relevant: frozenset[str]  # memory paths


# --------------------------------------------------------------------------------------------
# The corpus


def source_roots() -> list[tuple[str, Path]]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    purelib = Path(sysconfig.get_paths()["purelib"])
    return [("stdlib", stdlib), ("site", purelib)]


def python_files() -> list[tuple[str, Path, Path]]:
    """Every source file, in a fixed shuffled order (so a prefix is a fair sample)."""
    skip = {"site-packages", "__pycache__"}
    found: list[tuple[str, Path, Path]] = []
    for label, root in source_roots():
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).parts
            if label == "stdlib" and skip.intersection(parts):
                continue
            if label == "site" and ("__pycache__" in parts or "moor" in parts[0]):
                continue
            found.append((label, root, path))
    random.Random(SEED).shuffle(found)
    return found


def clean(text: str) -> str:
    lines = [line for line in text.splitlines() if not line.strip().startswith((">>>", "..."))]
    return " ".join(" ".join(lines).split())[:700]


def functions_of(label: str, root: Path, path: Path) -> list[Function]:
    try:
        data = path.read_bytes()
        if len(data) > 400_000:
            return []
        text = data.decode("utf-8")
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    lines = text.split("\n")
    rel = f"lib/{label}/{path.relative_to(root).as_posix()}"
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((prefix + child.name, child))
                walk(child, f"{prefix}{child.name}.")

    walk(tree, "")
    counts: dict[str, int] = {}
    for qname, _node in found:
        counts[qname] = counts.get(qname, 0) + 1
    result: list[Function] = []
    for qname, node in found:
        if counts[qname] > 1 or node.end_lineno is None or not node.body:
            continue
        doc = ast.get_docstring(node) or ""
        if len(doc.split()) < 6:
            comments = [
                line.strip().lstrip("#").strip()
                for line in lines[node.lineno - 1 : node.end_lineno]
                if line.strip().startswith("#")
            ]
            doc = " ".join(comments)
        doc = clean(doc)
        if len(doc.split()) < 6:
            continue
        sentences = tuple(s for s in _SENTENCE.split(doc) if s)
        indent = node.body[-1].col_offset
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        result.append(
            Function(
                path,
                rel,
                qname,
                node.name,
                start,
                node.end_lineno,
                indent,
                node.col_offset,
                sentences,
            )
        )
    return result


def corpus(size: int) -> list[Function]:
    """The first `size` functions of the fixed shuffled order of files."""
    picked: list[Function] = []
    for label, root, path in python_files():
        picked.extend(functions_of(label, root, path))
        if len(picked) >= size:
            break
    return picked[:size]


def name_words(name: str) -> list[str]:
    words: list[str] = []
    for part in name.split("_"):
        words.extend(_HUMP.findall(part) if part.isascii() else [part])
    return [w.lower() for w in words if w]


def memory_text(function: Function, held_out: bool) -> str:
    sentences = function.sentences[1:] if held_out else function.sentences
    title = sentences[0][:90].rstrip(".")
    return (
        f"---\nabout:\n  - {json.dumps(function.ref)}\n---\n# {title}\n\n"
        + " ".join(sentences)
        + f"\n\n## When this changes, ask\n- Does `{function.qname}` still do this?\n"
    )


def held_out(function: Function) -> bool:
    """Whether its first sentence is kept for a query (and left out of the memory)."""
    return len(function.sentences) >= 2 and len(_content(function.sentences[0])) >= 4


def _content(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text) if w.lower() not in STOPWORDS]


def slug_of(index: int) -> str:
    return f"m{random.Random(index * 7919 + SEED).getrandbits(40):010x}"


@dataclass
class Built:
    root: Path
    paths: list[str]  # memory paths, in corpus order
    texts: dict[str, str]


def build_workspace(root: Path, functions: Sequence[Function]) -> Built:
    (root / "memories").mkdir(parents=True)
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    copied: set[str] = set()
    paths: list[str] = []
    texts: dict[str, str] = {}
    for index, function in enumerate(functions):
        if function.rel not in copied:
            target = root / function.rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(function.source, target)
            copied.add(function.rel)
        path = f"memories/{slug_of(index)}.md"
        text = memory_text(function, held_out(function))
        (root / path).write_text(text, encoding="utf-8")
        paths.append(path)
        texts[path] = text
    return Built(root, paths, texts)


def queries(functions: Sequence[Function], paths: Sequence[str], count: int) -> list[Query]:
    """Queries about the functions of the smallest size (so every size asks the same)."""
    rng = random.Random(SEED)
    by_name: dict[str, set[str]] = {}
    for function, path in zip(functions, paths, strict=True):
        by_name.setdefault(function.name, set()).add(path)
    named = [(f, p) for f, p in zip(functions, paths, strict=True) if len(name_words(f.name)) >= 2]
    sentenced = [(f, p) for f, p in zip(functions, paths, strict=True) if held_out(f)]
    out: list[Query] = []
    for function, _path in rng.sample(named, min(count, len(named))):
        out.append(Query("name", " ".join(name_words(function.name)), frozenset()))
        out[-1].relevant = frozenset(by_name[function.name])
    for function, path in rng.sample(sentenced, min(count, len(sentenced))):
        out.append(Query("sentence", function.sentences[0], frozenset({path})))
    return out


def widen(query_list: list[Query], functions: Sequence[Function], paths: Sequence[str]) -> None:
    """At a larger size, every memory about a function of the asked name is relevant too."""
    by_name: dict[str, set[str]] = {}
    for function, path in zip(functions, paths, strict=True):
        by_name.setdefault(function.name, set()).add(path)
    for query in query_list:
        if query.kind == "name":
            name = "_".join(query.text.split())
            extra = {p for n, ps in by_name.items() if "_".join(name_words(n)) == name for p in ps}
            query.relevant = frozenset(query.relevant | extra)


# --------------------------------------------------------------------------------------------
# Systems


Ranker = Callable[[str], list[str]]


class Grep:
    def __init__(self, texts: dict[str, str]) -> None:
        self.items = sorted((path, text.lower()) for path, text in texts.items())

    def __call__(self, query: str) -> list[str]:
        words = _content(query) or [w.lower() for w in _WORD.findall(query)]
        counts = [(sum(w in text for w in words), path) for path, text in self.items]
        hits = [(-n, path) for n, path in counts if n]
        hits.sort()
        return [path for _n, path in hits[:TOP]]


class PlainBM25:
    def __init__(self, texts: dict[str, str]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE VIRTUAL TABLE t USING fts5(path UNINDEXED, text, tokenize = 'porter unicode61')"
        )
        self.db.executemany("INSERT INTO t (path, text) VALUES (?, ?)", sorted(texts.items()))

    def __call__(self, query: str) -> list[str]:
        words = _content(query) or [w.lower() for w in _WORD.findall(query)]
        if not words:
            return []
        expression = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))
        rows = self.db.execute(
            "SELECT path FROM t WHERE t MATCH ? ORDER BY bm25(t), path LIMIT ?",
            (expression, TOP),
        ).fetchall()
        return [row[0] for row in rows]


@dataclass
class Moor:
    root: Path
    build_s: float = 0.0
    sync_s: float = 0.0
    check_s: float = 0.0
    session: Session | None = None
    verdicts: dict[str, MemoryReport] = field(default_factory=dict)
    asked: int = 0
    exact: int = 0  # queries whose candidates were exactly the best by bm25 of every match

    def open(self) -> None:
        started = time.perf_counter()
        self.session = Session.open(self.root)
        index, _status = ready_index(self.session)
        index.close()
        self.build_s = time.perf_counter() - started
        started = time.perf_counter()
        self.index, status = ready_index(self.session)
        self.sync_s = time.perf_counter() - started
        assert status.reindexed == 0, status
        started = time.perf_counter()
        report = self.session.check(self.session.select([]), record=False)
        self.check_s = time.perf_counter() - started
        self.verdicts = {m.path: m for m in report.memories}

    def __call__(self, query: str) -> list[str]:
        verdicts = self.verdicts
        result = recall(self.index, query, lambda paths: verdicts, limit=TOP)
        self.asked += 1
        self.exact += result.exact
        return [hit.path for hit in result.hits]

    def checked(self, query: str) -> list[str]:
        """As `moor recall` does it: the candidates' states from a check of them, per query."""
        assert self.session is not None
        verdicts = session_verdicts(self.session)
        return [hit.path for hit in recall(self.index, query, verdicts, limit=TOP).hits]

    def close(self) -> None:
        self.index.close()
        if self.session is not None:
            self.session.close()


# --------------------------------------------------------------------------------------------
# Measuring


@dataclass
class Scores:
    recall_at_5: float
    mrr: float
    p50_ms: float
    p95_ms: float
    queries: int


def score(ranker: Ranker, query_list: Sequence[Query]) -> dict[str, Scores]:
    """Each query run once; recall@5, MRR and latency per kind of query and over all."""
    runs: list[tuple[str, int, float]] = []  # kind, rank of the first relevant (0: none), ms
    for query in query_list:
        started = time.perf_counter()
        ranked = ranker(query.text)
        elapsed = (time.perf_counter() - started) * 1000
        rank = next((i for i, p in enumerate(ranked[:TOP], 1) if p in query.relevant), 0)
        runs.append((query.kind, rank, elapsed))
    table: dict[str, Scores] = {}
    for kind in ("all", "name", "sentence"):
        chosen = [r for r in runs if kind == "all" or r[0] == kind]
        n = max(len(chosen), 1)
        times = [r[2] for r in chosen]
        table[kind] = Scores(
            sum(1 for r in chosen if r[1]) / n,
            sum(1 / r[1] for r in chosen if r[1]) / n,
            percentile(times, 50),
            percentile(times, 95),
            len(chosen),
        )
    return table


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


@dataclass
class SizeResult:
    size: int
    build_s: float
    sync_s: float
    check_s: float
    systems: dict[str, dict[str, Scores]]  # system -> kind ("all", "name", "sentence")
    exact_share: float = 1.0  # of moor's queries, those ranked as every match scored would


def quality(sizes: Sequence[int], count: int, work: Path) -> list[SizeResult]:
    largest = corpus(max(sizes))
    smallest = min(sizes)
    first_paths = [f"memories/{slug_of(i)}.md" for i in range(min(smallest, len(largest)))]
    query_list = queries(largest[:smallest], first_paths, count)
    results: list[SizeResult] = []
    for size in sizes:
        functions = largest[:size]
        root = work / f"quality-{size}"
        built = build_workspace(root, functions)
        widen(query_list, functions, built.paths)
        moor = Moor(root)
        moor.open()
        systems: dict[str, Ranker] = {
            "moor": moor,
            "bm25": PlainBM25(built.texts),
            "grep": Grep(built.texts),
        }
        for ranker in systems.values():  # warm caches the same way for each
            for query in query_list[:10]:
                ranker(query.text)
        moor.asked = moor.exact = 0
        table = {name: score(ranker, query_list) for name, ranker in systems.items()}
        exact_share = moor.exact / max(moor.asked, 1)
        table["moor+check"] = score(moor.checked, query_list[:CHECKED_QUERIES])
        results.append(
            SizeResult(len(functions), moor.build_s, moor.sync_s, moor.check_s, table, exact_share)
        )
        moor.close()
        shutil.rmtree(root, ignore_errors=True)
    return results


# --------------------------------------------------------------------------------------------
# Revision currency


@dataclass
class Subject:
    function: Function
    change: str  # one of CHANGES
    stale: str  # memory path (forgotten: the file its text came back in)
    current: str
    query: str


@dataclass
class CurrencyResult:
    subjects: int
    verified: int  # subjects whose stale memory moor really judged drifted/gone/retired
    rates: dict[str, float]  # system -> share of subjects passing
    stale_shown: dict[str, float]  # system -> share with a stale memory in its top 5
    by_change: dict[str, dict[str, float]]
    stale_shown_by_change: dict[str, dict[str, float]]  # system -> history -> share


STALE_STATE = {"superseded": "retired", "forgotten": "retired"}  # as moor's check names it


def revise(root: Path, subject: Subject) -> None:
    """What happened to a subject after its first memory was bound, and its current memory."""
    function = subject.function
    target = root / function.rel
    about = function.ref
    header = ""
    if subject.change == "drifted":
        target.write_text(edit_body(target.read_text(encoding="utf-8"), function), "utf-8")
        lead = "Since the revision marker was added"
    elif subject.change == "gone":
        target.write_text(delete(target.read_text(encoding="utf-8"), function), "utf-8")
        about, lead = function.rel, f"{function.qname} was removed from this module"
    elif subject.change == "superseded":
        header = f"supersedes:\n  - {json.dumps(subject.stale)}\n"
        lead = "Said more exactly"
    else:
        lead = "Corrected"
    body = f"{lead}: {function.sentences[0]}"
    (root / subject.current).write_text(
        f"---\nabout:\n  - {json.dumps(about)}\n{header}---\n# {body[:90]}\n\n{body}\n",
        encoding="utf-8",
    )


def come_back(session: Session, subject: Subject) -> None:
    """Forget the subject's first memory, then have its text come back: through `add` (moor
    refuses it) and as a file in a new place (moor keeps it out of recall); `subject.stale`
    becomes that file, which the baselines read like any other."""
    root = session.workspace.root
    original = subject.stale
    text = (root / original).read_text(encoding="utf-8")
    forgotten = forget(session, original, "it never held")
    assert forgotten.ok, forgotten.refused
    heading, _, rest = text.split("\n---\n# ", 1)[1].partition("\n\n")
    said = rest.split("\n\n## When this changes, ask", 1)[0]
    again = add(session, Draft(text=said, title=heading, about=[subject.function.ref]))
    assert [r.code for r in again.refused] == ["forgotten"], again.as_json()
    subject.stale = original.replace(".md", "-again.md")
    (root / subject.stale).write_text(text, encoding="utf-8")


def edit_body(text: str, function: Function) -> str:
    lines = text.split("\n")
    last = function.end_lineno - 1
    lines.insert(last + 1, " " * function.body_indent + "_revision_marker = None")
    return "\n".join(lines)


def delete(text: str, function: Function) -> str:
    lines = text.split("\n")
    del lines[function.lineno - 1 : function.end_lineno]
    lines.insert(function.lineno - 1, " " * function.def_indent + "pass")  # never an empty block
    return "\n".join(lines)


def changed_soundly(before: str, after: str, function: Function, change: str) -> bool:
    """Whether the edit parses and did what it says (checked with `ast`, not moor)."""
    try:
        tree = ast.parse(after)
    except SyntaxError:
        return False
    names = {
        n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    if change == "gone":
        return function.name not in names or before.count(f"def {function.name}(") > 1
    return "_revision_marker" in after and function.name in names


def currency(subject_count: int, work: Path) -> CurrencyResult:
    pool = corpus(CURRENCY_NOISE + 60 * subject_count)  # enough files for a subject each
    rng = random.Random(SEED + 1)
    eligible = [
        f
        for f in pool
        if len([w for w in name_words(f.name) if w not in STOPWORDS]) >= 2
        and f.lineno > 1
        and "." not in f.qname.rpartition(".")[0]
    ]
    by_file: dict[str, Function] = {}
    for function in eligible:
        by_file.setdefault(function.rel, function)  # one subject per file: edits stay apart
    chosen = rng.sample(
        sorted(by_file.values(), key=lambda f: f.ref),
        min(len(CHANGES) * subject_count, len(by_file)),
    )
    subject_refs = {f.ref for f in chosen}
    noise = [f for f in pool if f.ref not in subject_refs and f.rel not in {c.rel for c in chosen}]
    noise = noise[:CURRENCY_NOISE]
    root = work / "currency"
    built = build_workspace(root, noise)
    subjects: list[Subject] = []
    for index, function in enumerate(chosen):
        target = root / function.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(function.source, target)
        stale = f"memories/{slug_of(100_000 + 2 * index)}.md"
        current = f"memories/{slug_of(100_001 + 2 * index)}.md"
        change = CHANGES[index % len(CHANGES)]
        (root / stale).write_text(memory_text(function, False), encoding="utf-8")
        # The query names the subject as a person would: `Class.method` -> "class method".
        query = " ".join(w for part in function.qname.split(".") for w in name_words(part))
        subjects.append(Subject(function, change, stale, current, query))
    with Session.open(root) as session:
        outcome = bind(session, [])
    for subject in subjects:
        revise(root, subject)
    with Session.open(root) as session:
        outcome = bind(session, [s.current for s in subjects])
        assert not outcome.refused, outcome.refused[:3]
        for subject in subjects:
            if subject.change == "forgotten":
                come_back(session, subject)
    texts = {**built.texts}
    for subject in subjects:
        for path in (subject.stale, subject.current):
            texts[path] = (root / path).read_text(encoding="utf-8")
    moor = Moor(root)
    moor.open()
    verified = [
        s
        for s in subjects
        if moor.verdicts[s.stale].state.value == STALE_STATE.get(s.change, s.change)
        and moor.verdicts[s.current].state.value == "current"
    ]
    systems: dict[str, Ranker] = {"moor": moor, "bm25": PlainBM25(texts), "grep": Grep(texts)}
    rates: dict[str, float] = {}
    shown: dict[str, float] = {}
    by_change: dict[str, dict[str, float]] = {}
    shown_by_change: dict[str, dict[str, float]] = {}
    for name, ranker in systems.items():
        passed = dict.fromkeys(CHANGES, 0)
        totals = dict.fromkeys(CHANGES, 0)
        stale_seen = 0
        seen_by_change = dict.fromkeys(CHANGES, 0)
        for subject in verified:
            ranked = ranker(subject.query)[:TOP]
            totals[subject.change] += 1
            if subject.stale in ranked:
                stale_seen += 1
                seen_by_change[subject.change] += 1
            if subject.current in ranked and (
                subject.stale not in ranked
                or ranked.index(subject.current) < ranked.index(subject.stale)
            ):
                passed[subject.change] += 1
        n = max(len(verified), 1)
        rates[name] = sum(passed.values()) / n
        shown[name] = stale_seen / n
        by_change[name] = {k: passed[k] / max(totals[k], 1) for k in passed}
        shown_by_change[name] = {k: seen_by_change[k] / max(totals[k], 1) for k in passed}
    moor.close()
    shutil.rmtree(root, ignore_errors=True)
    return CurrencyResult(len(subjects), len(verified), rates, shown, by_change, shown_by_change)


# --------------------------------------------------------------------------------------------
# Reporting


def markdown(results: list[SizeResult], currency_result: CurrencyResult) -> str:
    lines = [
        "Recall quality (held-out queries over memories made from the docstrings and comments "
        "of the standard library and installed packages; recall@5 / MRR; latency of one query "
        "p50 / p95):",
        "",
        "| memories | moor | plain BM25 | grep | moor p50 / p95 | + check of candidates "
        "| BM25 p50 / p95 | index build | no-change sync |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        cell = {n: result.systems[n]["all"] for n in ("moor", "bm25", "grep", "moor+check")}
        lines.append(
            f"| {result.size:,} | {cell['moor'].recall_at_5:.2f} / {cell['moor'].mrr:.2f} "
            f"| {cell['bm25'].recall_at_5:.2f} / {cell['bm25'].mrr:.2f} "
            f"| {cell['grep'].recall_at_5:.2f} / {cell['grep'].mrr:.2f} "
            f"| {cell['moor'].p50_ms:.1f} / {cell['moor'].p95_ms:.1f} ms "
            f"| {cell['moor+check'].p50_ms:.1f} / {cell['moor+check'].p95_ms:.1f} ms "
            f"| {cell['bm25'].p50_ms:.1f} / {cell['bm25'].p95_ms:.1f} ms "
            f"| {result.build_s:.1f} s | {result.sync_s:.2f} s |"
        )
    largest = results[-1] if results else None
    if largest is not None:
        lines += [
            "",
            f"At {largest.size:,} memories moor's candidates were exactly the best by bm25 of "
            f"every match for {largest.exact_share:.0%} of queries; for the rest its budget of "
            "postings was spent first (rarest words first: each score is still exact).",
        ]
    c = currency_result
    lines += [
        "",
        f"Revision currency ({c.verified} subjects whose old memory moor judged drifted, "
        "gone, superseded or forgotten-and-written-back, each with a current memory): the "
        f"current memory above every stale one and in the top 5 — moor {c.rates['moor']:.0%}, "
        f"plain BM25 {c.rates['bm25']:.0%}, grep {c.rates['grep']:.0%} (grep by history: "
        + ", ".join(f"{k} {v:.0%}" for k, v in c.by_change["grep"].items())
        + f"); a stale memory in grep's top 5 for {c.stale_shown['grep']:.0%} of subjects (moor "
        "shows a drifted or gone one too, flagged, when it is still relevant; never a retired "
        f"one: {c.stale_shown['moor']:.0%}).",
    ]
    return "\n".join(lines)


def print_results(results: list[SizeResult], currency_result: CurrencyResult | None) -> None:
    for result in results:
        print(
            f"\n{result.size:,} memories: index build {result.build_s:.2f} s, no-change sync "
            f"{result.sync_s:.3f} s, one check of every memory {result.check_s:.2f} s"
        )
        print(
            f"  {'system':<6} {'kind':<9} {'n':>4} {'recall@5':>9} {'MRR':>6} "
            f"{'p50 ms':>8} {'p95 ms':>8}"
        )
        for name, kinds in result.systems.items():
            for kind, s in kinds.items():
                print(
                    f"  {name:<6} {kind:<9} {s.queries:>4} {s.recall_at_5:>9.3f} {s.mrr:>6.3f} "
                    f"{s.p50_ms:>8.2f} {s.p95_ms:>8.2f}"
                )
        moor_all, grep_all, bm25_all = (result.systems[n]["all"] for n in ("moor", "grep", "bm25"))
        print(
            f"  ratios: recall@5 moor/grep {ratio(moor_all.recall_at_5, grep_all.recall_at_5)}, "
            f"moor/bm25 {ratio(moor_all.recall_at_5, bm25_all.recall_at_5)}; MRR moor/grep "
            f"{ratio(moor_all.mrr, grep_all.mrr)}, moor/bm25 {ratio(moor_all.mrr, bm25_all.mrr)}; "
            f"p50 moor/bm25 {ratio(moor_all.p50_ms, bm25_all.p50_ms)}, moor/grep "
            f"{ratio(moor_all.p50_ms, grep_all.p50_ms)}"
        )
    if currency_result is not None:
        c = currency_result
        print(f"\nrevision currency: {c.subjects} subjects, {c.verified} verified by moor's check")
        for name in c.rates:
            print(
                f"  {name:<6} current above stale and in top 5: {c.rates[name]:.1%} "
                f"({', '.join(f'{k} {v:.1%}' for k, v in c.by_change[name].items())}); "
                f"a stale memory in its top 5: {c.stale_shown[name]:.1%}"
            )
        print(f"  ratio moor/grep: {ratio(c.rates['moor'], c.rates['grep'])}")


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "inf"


def as_json(results: list[SizeResult], currency_result: CurrencyResult | None) -> dict[str, object]:
    return {
        "quality": [
            {
                "size": r.size,
                "build_s": r.build_s,
                "sync_s": r.sync_s,
                "check_s": r.check_s,
                "exact_share": r.exact_share,
                "systems": {
                    name: {kind: vars(s) for kind, s in kinds.items()}
                    for name, kinds in r.systems.items()
                },
            }
            for r in results
        ],
        "currency": None if currency_result is None else vars(currency_result),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES, help="per kind")
    parser.add_argument("--subjects", type=int, default=DEFAULT_SUBJECTS, help="per change")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--markdown", action="store_true", help="print the README section")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    with tempfile.TemporaryDirectory(prefix="moor-recall-") as folder:
        work = Path(folder)
        results = quality(sizes, args.queries, work) if sizes else []
        currency_result = currency(args.subjects, work) if args.subjects else None
    print_results(results, currency_result)
    if args.markdown and currency_result is not None:
        print("\n" + markdown(results, currency_result))
    if args.json is not None:
        args.json.write_text(json.dumps(as_json(results, currency_result), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
