"""Recall: which memories answer a query, best first, knowing which of them are stale.

The score of a memory is its BM25 relevance (FTS5, fields weighted) multiplied by one factor
per signal, in this order: trust (the engine's verdict: drifted and gone memories are ranked
down and always flagged with why), `confidence`, `pinned`, and a weak recency. Trust ranks a
stale memory below the live memories about its own code: a drifted (moved, unverified,
rewritten) memory that no live hit shares a reference with keeps its relevance, flagged —
stale knowledge of the code asked about is what a reader most needs to see, and a penalty
would put answers to other questions above it. A gone memory's code no longer exists: its
penalty always applies. Retired
memories are removed before any of it. Ties are broken by path, so the same query over the
same memories always gives the same answer. `--explain` renders the `Signal`s computed here:
there is no second scoring path to drift from this one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from moor_store.recall_index import Match, RecallIndex

from moor_engine.grounding.trust import MemoryReport, State
from moor_engine.memory import namespaces
from moor_engine.memory.recall_tokens import joined_terms, query_terms

# Field weights for bm25(): the code a memory is about weighs most (queries name code, and
# a reference is the one field a person cannot word loosely), then the title; questions and
# body least per word. On bench/recall_quality.py any of 1:1:1:1 to 4:2:3:1 moves recall@5
# by about one point: the weights are a judgement, not a fit.
WEIGHTS: Mapping[str, float] = {"title": 1.5, "questions": 1.0, "refs": 3.0, "body": 1.0}
# Trust: stale memories still answer (a person may need the history) but below any current
# memory of similar relevance. States not listed weigh 1.
TRUST_FACTOR: Mapping[State, float] = {
    State.GONE: 0.25,
    State.DRIFTED: 0.35,
    State.INVALID: 0.35,
    State.MOVED: 0.8,
    State.UNVERIFIED: 0.8,
    State.REWRITTEN: 0.9,
}
# Stale states whose penalty applies only beside a live hit about the same code (the module's
# docstring): their code is still there to be asked about.
SIBLING_RELATIVE = frozenset({State.DRIFTED, State.MOVED, State.UNVERIFIED, State.REWRITTEN})
# States shown with a flag and the engine's reasons, whatever their factor.
FLAGGED = frozenset(
    {State.GONE, State.DRIFTED, State.INVALID, State.MOVED, State.UNVERIFIED, State.REWRITTEN}
)
CONFIDENCE_FACTOR: Mapping[str, float] = {"verified": 1.0, "inferred": 0.8, "unverified": 0.65}
PIN_FACTOR = 1.3
# At most +5 % for the newest memory, halving every 90 days older than the newest (relative
# to the newest memory, not to today: the same memories rank the same tomorrow).
RECENCY_WEIGHT = 0.05
RECENCY_HALF_LIFE_DAYS = 90.0
# Hits scoring below this share of the top score are cut.
CUT = 0.2
# A match is weak when its best hit contains fewer than this share of the query's terms.
WEAK_COVERAGE = 0.5
_POOL_MIN = 20
_BATCH_MARGIN = 4  # candidates judged beyond the limit at first (some may be retired)
_FEEDBACK_TERMS = 6

Verdicts = Callable[[Sequence[str]], Mapping[str, MemoryReport]]
# What a candidate not judged yet is scored as for its upper bound: trust's factor 1, the
# largest any state has (`TRUST_FACTOR`).
_UNJUDGED = MemoryReport("", State.CURRENT)


@dataclass(frozen=True)
class Signal:
    name: str  # bm25 | trust | confidence | pinned | recency
    factor: float  # what the score was multiplied by (bm25: the relevance itself)
    contribution: float  # how much the score moved by it
    why: str

    def as_json(self) -> dict[str, object]:
        return {
            "signal": self.name,
            "factor": self.factor,
            "contribution": self.contribution,
            "why": self.why,
        }


@dataclass(frozen=True)
class Hit:
    path: str
    title: str
    score: float
    state: State
    flagged: bool
    why: tuple[str, ...]  # the engine's reasons for a flagged state
    signals: tuple[Signal, ...]
    matched: tuple[str, ...]  # query terms this memory contains
    refs: tuple[str, ...]
    questions: tuple[str, ...]
    confidence: str
    pinned: bool
    # The verdict the hit was judged by (each anchor's state), for a surface that frames it.
    report: MemoryReport = field(repr=False, compare=False)

    def as_json(self, *, explain: bool = False) -> dict[str, object]:
        value: dict[str, object] = {
            "path": self.path,
            "title": self.title,
            "score": self.score,
            "state": self.state.value,
            "flagged": self.flagged,
            "why": list(self.why),
            "about": list(self.refs),
            "questions": list(self.questions),
            "confidence": self.confidence,
            "pinned": self.pinned,
            "matched": list(self.matched),
        }
        if explain:
            value["signals"] = [signal.as_json() for signal in self.signals]
        return value


@dataclass(frozen=True)
class TermFeedback:
    """A query term few or no memories use, and indexed words spelt like it."""

    term: str
    documents: int
    nearby: tuple[tuple[str, int], ...]  # (word, how many memories use it)

    def as_json(self) -> dict[str, object]:
        return {
            "term": self.term,
            "memories": self.documents,
            "nearby": [{"word": w, "memories": n} for w, n in self.nearby],
        }


@dataclass
class RecallResult:
    query: str
    terms: list[str]
    hits: list[Hit]
    weak: bool = False
    feedback: list[TermFeedback] = field(default_factory=list)
    retired: int = 0  # candidates removed before scoring
    cut: int = 0  # hits below the relative cut
    threshold: float = 0.0
    # The candidates are exactly the best by bm25 of every match; False when the index's
    # budget of postings was spent first (`recall_postings`: each score is still exact).
    exact: bool = True
    judged: int = 0  # candidates whose trust was evaluated (the rest could not be hits)

    def as_json(self, *, explain: bool = False) -> dict[str, object]:
        return {
            "query": self.query,
            "terms": self.terms,
            "hits": [hit.as_json(explain=explain) for hit in self.hits],
            "weak": self.weak,
            "feedback": [item.as_json() for item in self.feedback],
            "retired_removed": self.retired,
            "cut": self.cut,
            "threshold": self.threshold,
            "exact": self.exact,
        }


def recall(
    index: RecallIndex,
    query: str,
    verdicts: Verdicts,
    *,
    limit: int = 10,
    agent: str | None = None,
) -> RecallResult:
    terms = query_terms(query)
    result = RecallResult(query, terms, [])
    if not terms:
        result.weak = True
        return result
    # Joined runs widen what matches (and its BM25), never the terms a hit is judged by.
    phrases = [*terms, *joined_terms(query)]
    pool = max(_POOL_MIN, 4 * limit)
    # What the reader is told beyond its hits (recency's reference date, how many memories
    # use a word, nearby words) comes from the memories it may see only.
    owners = visible_owners(index, agent)
    newest = _day(index.newest_created(owners))
    scored: list[tuple[Hit, Match]] = []
    # Candidates not judged yet, best upper bound last: a score is the bound times trust's
    # factor (at most 1), so one whose bound is below the limit-th score cannot be a hit and
    # need not be judged (a check of its anchors is most of a recall's cost).
    pending: list[tuple[float, Match]] = []
    taken: set[str] = set()
    offset = 0
    full_page = True
    while True:
        if not pending and full_page:
            ranking = index.ranked(phrases, offset + pool)
            result.exact = result.exact and ranking.exact
            found = ranking.matches[offset:]
            offset += len(found)
            full_page = len(found) >= pool
            # Another agent's memories are not candidates at all: not scored, not counted. A
            # ranking cut by its budget may differ from the last one's beyond its prefix: a
            # memory already taken is not taken twice.
            matches = [
                m
                for m in found
                if namespaces.visible(_owner(m.meta), agent) and m.path not in taken
            ]
            taken.update(m.path for m in matches)
            pending.extend((_bound(m, newest), m) for m in matches)
            pending.sort(key=lambda item: (round(item[0], 9), _Reversed(item[1].path)))
        if not pending:
            break
        if _decided(scored, pending[-1][0], limit):
            break
        batch = [pending.pop()[1] for _ in range(min(len(pending), _batch(limit, scored)))]
        states = verdicts([m.path for m in batch])
        result.judged += len(batch)
        for candidate in batch:
            report = states.get(candidate.path)
            if report is not None and report.state == State.RETIRED:
                result.retired += 1  # removed before scoring
                continue
            scored.append((_hit(candidate, report, newest), candidate))
        if not pending and (not full_page or len(scored) >= pool):
            break
    unjudged = [bound for bound, _m in pending]
    # Only raises scores (the factor 1 instead of a penalty): what `_decided` ruled out is
    # still below the limit-th hit.
    scored = _without_lone_penalties(scored, newest)
    scored.sort(key=lambda pair: (-round(pair[0].score, 9), pair[0].path))
    if scored:
        result.threshold = scored[0][0].score * CUT
    kept = [pair for pair in scored if pair[0].score >= result.threshold]
    # Not judged and bound below the cut: below it whatever its state (retired aside).
    result.cut = len(scored) - len(kept) + sum(1 for b in unjudged if b < result.threshold)
    kept = kept[:limit]
    matched = _matched(index, terms, [m for _h, m in kept])
    result.hits = [_with_matched(hit, matched.get(m.path, ())) for hit, m in kept]
    top = result.hits[0] if result.hits else None
    result.weak = top is None or len(top.matched) < WEAK_COVERAGE * len(terms)
    if result.weak:
        result.feedback = _feedback(index, terms, top, owners)
    return result


def _without_lone_penalties(
    scored: list[tuple[Hit, Match]], newest: date | None
) -> list[tuple[Hit, Match]]:
    """Each stale hit of a `SIBLING_RELATIVE` state scored without its trust penalty when
    no live hit (one not flagged) is about any code it is about."""
    live = {ref for hit, _m in scored if not hit.flagged for ref in hit.refs}
    return [
        (_hit(m, hit.report, newest, alone=True), m)
        if hit.state in SIBLING_RELATIVE and hit.refs and live.isdisjoint(hit.refs)
        else (hit, m)
        for hit, m in scored
    ]


def _decided(scored: Sequence[tuple[Hit, Match]], bound: float, limit: int) -> bool:
    """Whether a candidate whose score is at most `bound` can no longer be a hit: `limit`
    hits judged already score above it (ties go by path: it must be strictly below)."""
    if len(scored) < limit:
        return False
    scores = sorted((round(hit.score, 9) for hit, _m in scored), reverse=True)
    return round(bound, 9) < scores[limit - 1]


def _batch(limit: int, scored: Sequence[tuple[Hit, Match]]) -> int:
    """How many candidates to judge at once: a check has a cost per call, not only per
    memory, so the first batch is about what the limit needs, then more each time."""
    return max(limit + _BATCH_MARGIN, len(scored))


class _Reversed(str):
    """A path that sorts after the paths before it: pending's last is the best bound,
    among equal bounds the first path (the order of the final sort)."""

    def __lt__(self, other: object) -> bool:
        return isinstance(other, str) and str.__gt__(self, other)


def visible_owners(index: RecallIndex, agent: str | None) -> list[str | None]:
    """The owners in the index whose memories reader `agent` may see (`namespaces`)."""
    return [owner for owner in index.owners() if namespaces.visible(owner, agent)]


def _owner(meta: Mapping[str, object]) -> str | None:
    owner = meta.get("agent")
    return owner if isinstance(owner, str) else None


def _with_matched(hit: Hit, matched: tuple[str, ...]) -> Hit:
    return Hit(
        hit.path,
        hit.title,
        hit.score,
        hit.state,
        hit.flagged,
        hit.why,
        hit.signals,
        matched,
        hit.refs,
        hit.questions,
        hit.confidence,
        hit.pinned,
        hit.report,
    )


def _bound(match: Match, newest: date | None) -> float:
    """`_hit(match, _UNJUDGED, newest).score` (the same product, in the same order, to the
    last bit) without the hit: every candidate has one, most are never judged."""
    meta = match.meta
    score = -match.bm25 * TRUST_FACTOR.get(_UNJUDGED.state, 1.0)
    score *= CONFIDENCE_FACTOR.get(str(meta.get("confidence") or "unverified"), 1.0)
    score *= PIN_FACTOR if meta.get("pinned") else 1.0
    return score * _recency_factor(_day(meta.get("created")), newest)


def _hit(
    match: Match, report: MemoryReport | None, newest: date | None, *, alone: bool = False
) -> Hit:
    meta = match.meta
    relevance = -match.bm25
    signals = [Signal("bm25", relevance, relevance, "text relevance (FTS5 bm25, fields weighted)")]
    score = relevance
    if report is None:
        report = MemoryReport(match.path, State.UNVERIFIED, notes=["no verdict for this memory"])
    state = report.state
    why = state_reasons(report)

    def apply(name: str, factor: float, reason: str) -> None:
        nonlocal score
        before = score
        score *= factor
        signals.append(Signal(name, factor, score - before, reason))

    stated = f"{state.value}" + (f": {why[0]}" if why else "")
    if alone:
        stated += "; not ranked down: no live memory answering this is about the same code"
    apply("trust", 1.0 if alone else TRUST_FACTOR.get(state, 1.0), stated)
    confidence = str(meta.get("confidence") or "unverified")
    apply("confidence", CONFIDENCE_FACTOR.get(confidence, 1.0), f"confidence: {confidence}")
    pinned = bool(meta.get("pinned"))
    apply("pinned", PIN_FACTOR if pinned else 1.0, "pinned: true" if pinned else "not pinned")
    created = _day(meta.get("created"))
    factor, reason = _recency(created, newest)
    apply("recency", factor, reason)
    flagged = state in FLAGGED
    return Hit(
        match.path,
        str(meta.get("title") or match.path),
        score,
        state,
        flagged,
        why if flagged else (),
        tuple(signals),
        (),
        tuple(str(r) for r in _list(meta.get("refs"))),
        tuple(str(q) for q in _list(meta.get("questions"))),
        confidence,
        pinned,
        report,
    )


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def state_reasons(report: MemoryReport) -> tuple[str, ...]:
    """The engine's own words for why a memory is in its state."""
    reasons = [
        f"{anchor.ref}: {anchor.state.value}" + (f" ({anchor.detail})" if anchor.detail else "")
        for anchor in report.anchors
        if anchor.state not in (State.CURRENT, State.UNBOUND)
    ]
    reasons.extend(report.notes)
    return tuple(reasons)


def _day(value: object) -> date | None:
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def _recency(created: date | None, newest: date | None) -> tuple[float, str]:
    if created is None or newest is None:
        return 1.0, "no `created:` date"
    age = max(0, (newest - created).days)
    return _recency_factor(created, newest), (
        f"created {created.isoformat()}, {age} days before the newest memory"
    )


def _recency_factor(created: date | None, newest: date | None) -> float:
    if created is None or newest is None:
        return 1.0
    age = max(0, (newest - created).days)
    return 1.0 + RECENCY_WEIGHT * math.pow(0.5, age / RECENCY_HALF_LIFE_DAYS)


def _matched(
    index: RecallIndex, terms: Sequence[str], matches: Sequence[Match]
) -> dict[str, tuple[str, ...]]:
    """Per hit, the query terms it contains (stemmed as the index stems them)."""
    held = index.containing(terms, [m.rowid for m in matches])
    return {m.path: tuple(t for t in terms if t in held[m.rowid]) for m in matches}


def _feedback(
    index: RecallIndex, terms: Sequence[str], top: Hit | None, owners: Sequence[str | None]
) -> list[TermFeedback]:
    """For each term the best hit lacks: how many memories use it, and indexed words close
    to it — the vocabulary the memories of these owners actually use."""
    missing = [t for t in terms if top is None or t not in top.matched]
    feedback: list[TermFeedback] = []
    for term in missing[:_FEEDBACK_TERMS]:
        documents = index.count(term, owners)
        # Other spellings only for a word no memory uses: one that some use is spelt right.
        close = tuple(nearby(index, term, owners)) if documents == 0 else ()
        feedback.append(TermFeedback(term, documents, close))
    return feedback


def nearby(
    index: RecallIndex, term: str, owners: Sequence[str | None], count: int = 5
) -> list[tuple[str, int]]:
    """Words of the owners' memories that look like `term`: longer words it begins, then
    close spellings."""
    ranked: list[str] = []
    words: dict[str, int] = {}
    for prefix in (term[:3], term[:1]):  # a typo is rarely in the first letter
        words = dict(index.words_between(prefix, prefix + "\uffff", owners, limit=50_000))
        words.pop(term, None)
        longer = sorted((w for w in words if w.startswith(term)), key=lambda w: (-words[w], w))
        # Only words of about its length can be close spellings: difflib is slow.
        alike = [w for w in words if abs(len(w) - len(term)) <= 2]
        import difflib  # for a weak match only

        close = difflib.get_close_matches(term, alike, n=count * 2, cutoff=0.7)
        ranked = list(dict.fromkeys([*longer[:count], *close]))[:count]
        if ranked:
            break
    return [(word, words[word]) for word in ranked]
