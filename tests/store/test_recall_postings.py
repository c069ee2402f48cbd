"""Recall's postings rank exactly as FTS5's bm25 over every match would, whenever they say
so (`exact`), and every score they give is the document's full bm25 even when not."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moor_store.recall_index import Document, RecallIndex, phrases

# Stem variants (run/running/runs share a stem), words in many documents and in few, and a
# word no document holds.
VOCABULARY = (
    "run",
    "running",
    "runs",
    "send",
    "sending",
    "retry",
    "retries",
    "key",
    "idempotent",
    "client",
    "the",
    "of",
)
ABSENT = "zebra"
WEIGHTS = ((1.0, 1.0, 1.0, 1.0), (10.0, 4.0, 2.0, 1.0), (3.5, 0.5, 2.0, 0.25))
TOLERANCE = 1e-9

Fields = tuple[str, str, str, str]


def document(number: int, fields: Fields) -> Document:
    words = frozenset(" ".join(fields).split())
    return Document(f"m{number:04}.md", f"hash-{number}-{hash(fields)}", fields, words, {})


def index_of(corpus: Sequence[Fields], weights: Sequence[float] = WEIGHTS[0]) -> RecallIndex:
    index = RecallIndex(None, "test", weights)
    index.update([document(i, fields) for i, fields in enumerate(corpus)], [])
    return index


def every_match(index: RecallIndex, terms: Sequence[str]) -> dict[str, float]:
    """Each matching document's score as FTS5 gives it, scoring every match (its bm25 is
    negative: lower is better; here higher is better, as `ranked` gives it)."""
    columns = ", ".join(f"{w:g}" for w in index.weights)
    rows = index._db.execute(
        f"SELECT docs.path, bm25(fts, {columns}) FROM fts JOIN docs ON docs.id = fts.rowid "
        "WHERE fts MATCH ?",
        (phrases(terms),),
    ).fetchall()
    return {str(path): -float(score) for path, score in rows}


def assert_the_best_of(
    found: Sequence[tuple[str, float]], reference: dict[str, float], count: int
) -> None:
    """`found` is a top `count` of `reference`: as many as there are (up to `count`), each
    with its own score, best first, and nothing left out scoring more than the last."""
    assert len(found) == min(count, len(reference))
    for path, score in found:
        assert abs(score - reference[path]) <= TOLERANCE
    scores = [score for _path, score in found]
    assert scores == sorted(scores, reverse=True)
    if found:
        chosen = {path for path, _score in found}
        left = [s for path, s in reference.items() if path not in chosen]
        assert all(s <= scores[-1] + TOLERANCE for s in left)


words_of_a_field = st.lists(st.sampled_from(VOCABULARY), max_size=8).map(" ".join)
corpora = st.lists(
    st.tuples(words_of_a_field, words_of_a_field, words_of_a_field, words_of_a_field),
    min_size=1,
    max_size=40,
)
queries = st.lists(st.sampled_from((*VOCABULARY, ABSENT)), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=corpora,
    terms=queries,
    weights=st.sampled_from(WEIGHTS),
    count=st.integers(1, 12),
    budget=st.integers(1, 120),
)
def test_an_exact_ranking_is_the_best_by_bm25_of_every_match_and_every_score_is_full(
    corpus: list[Fields],
    terms: list[str],
    weights: tuple[float, float, float, float],
    count: int,
    budget: int,
) -> None:
    index = index_of(corpus, weights)
    reference = every_match(index, terms)
    ranking = index.ranked(terms, count, budget=budget)
    found = [(m.path, -m.bm25) for m in ranking.matches]
    for path, score in found:
        assert abs(score - reference[path]) <= TOLERANCE
    if ranking.exact:
        assert_the_best_of(found, reference, count)
    # Given all it could read, it always reads everything it needs.
    whole = index.ranked(terms, count, budget=10**9)
    assert whole.exact
    assert_the_best_of([(m.path, -m.bm25) for m in whole.matches], reference, count)


def test_a_budget_too_small_to_decide_says_the_ranking_is_not_exact() -> None:
    # Both words in every document, in counts that make "alpha" alone a poor guide: the
    # second word's postings decide the order, and a budget of one word's cannot read them.
    corpus: list[Fields] = [
        ("", "", "", " ".join(["alpha"] * (1 + i % 3) + ["beta"] * (1 + (7 * i) % 11)))
        for i in range(300)
    ]
    corpus += [("", "", "", "gamma")] * 300  # so neither word is in more than half
    index = index_of(corpus)
    reference = every_match(index, ["alpha", "beta"])
    cut = index.ranked(["alpha", "beta"], 5, budget=300)
    assert not cut.exact
    assert cut.postings_read == 300
    for match in cut.matches:  # still each document's own full score
        assert abs(-match.bm25 - reference[match.path]) <= TOLERANCE
    # The control: with the postings of both read, the same query is exact.
    whole = index.ranked(["alpha", "beta"], 5, budget=600)
    assert whole.exact
    assert_the_best_of([(m.path, -m.bm25) for m in whole.matches], reference, 5)


def test_a_term_of_two_words_is_ranked_by_fts5_as_a_phrase() -> None:
    index = index_of(
        [
            ("", "", "", "two words side by side"),
            ("", "", "", "words two, the other way round"),
            ("", "", "", "nothing of the sort"),
        ]
    )
    ranking = index.ranked(["two words"], 10)
    assert ranking.exact
    assert [m.path for m in ranking.matches] == ["m0000.md"]
    # The control: each word alone matches the reversed one too.
    assert {m.path for m in index.ranked(["two", "words"], 10).matches} == {
        "m0000.md",
        "m0001.md",
    }


def postings_of(index: RecallIndex) -> tuple[list[tuple[object, ...]], str | None]:
    rows = index._db.execute(
        "SELECT terms.stem, terms.docs, docs.path, postings.weight, postings.length "
        "FROM postings JOIN terms ON terms.id = postings.term "
        "JOIN docs ON docs.id = postings.doc ORDER BY terms.stem, docs.path"
    ).fetchall()
    return rows, index._meta("tokens")


@settings(max_examples=60, deadline=None)
@given(
    before=corpora,
    after=corpora,
    gone=st.sets(st.integers(0, 39)),
    terms=queries,
    weights=st.sampled_from(WEIGHTS),
)
def test_an_index_updated_in_place_equals_one_built_afresh(
    before: list[Fields],
    after: list[Fields],
    gone: set[int],
    terms: list[str],
    weights: tuple[float, ...],
) -> None:
    updated = index_of(before, weights)
    # `after` rewrites the first documents (and adds any beyond), then some are removed.
    final = dict(enumerate(before)) | dict(enumerate(after))
    removed = [document(i, final[i]).path for i in sorted(gone) if i in final]
    updated.update([document(i, f) for i, f in enumerate(after)], [])
    updated.update([], removed)
    kept = {i: f for i, f in final.items() if document(i, f).path not in removed}
    fresh = index_of([], weights)
    fresh.update([document(i, f) for i, f in sorted(kept.items())], [])
    assert postings_of(updated) == postings_of(fresh)
    assert updated._db.execute("SELECT count(*) FROM terms WHERE docs <= 0").fetchone()[0] == 0
    ours = [(m.path, m.bm25) for m in updated.ranked(terms, 10).matches]
    theirs = [(m.path, m.bm25) for m in fresh.ranked(terms, 10).matches]
    assert len(ours) == len(theirs)
    for (_path, score), (_other, expected) in zip(ours, theirs, strict=True):
        assert abs(score - expected) <= TOLERANCE
    # The control: what is indexed is the documents kept, each as its text says.
    held = {str(row[2]) for row in postings_of(updated)[0]}
    assert held == {document(i, f).path for i, f in kept.items() if "".join(f)}
    assert postings_of(updated)[1] == str(sum(len(" ".join(f).split()) for f in kept.values()))


def test_other_field_weights_are_another_index() -> None:
    corpus: list[Fields] = [("retry", "", "", ""), ("", "", "", "retry retry")]
    title_first = index_of(corpus, (10.0, 1.0, 1.0, 1.0))
    body_first = index_of(corpus, (1.0, 1.0, 1.0, 10.0))
    assert [m.path for m in title_first.ranked(["retry"], 2).matches] == ["m0000.md", "m0001.md"]
    assert [m.path for m in body_first.ranked(["retry"], 2).matches] == ["m0001.md", "m0000.md"]
    assert title_first.derivation != body_first.derivation
