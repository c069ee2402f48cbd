"""`moor recall` as a person and an agent run it: text, JSON, --explain, --limit, mistakes."""

from __future__ import annotations

import math

import pytest
from moor_engine.memory.recall import CUT

from tests.conftest import Workspace

CODE = (
    "class Client:\n    def send_with_retry(self):\n        return 1\n\n"
    "    def close(self):\n        return 0\n"
)


def setup(ws: Workspace) -> None:
    ws.write("src/net/client.py", CODE)
    ws.memory(
        "retry", "src/net/client.py#Client.send_with_retry", body="Three attempts, then it stops."
    )
    ws.memory("close", "src/net/client.py#Client.close", body="Closing twice is harmless.")


def test_send_retry_finds_the_memory_about_send_with_retry(ws: Workspace) -> None:
    setup(ws)
    run = ws.moor("recall", "send retry")
    assert run.code == 0, run.err
    first = run.out.splitlines()[0]
    assert first.startswith("1. memories/retry.md")
    assert "about: src/net/client.py#Client.send_with_retry" in run.out
    assert "ask: Does it still hold?" in run.out
    assert "memories/close.md" not in run.out  # control: the other memory is not a match


def test_a_drifted_hit_is_flagged_in_text_and_json(ws: Workspace) -> None:
    setup(ws)
    ws.moor("bind", check=True)
    assert "[" not in ws.moor("recall", "attempts").out.splitlines()[0]  # control: current
    ws.write("src/net/client.py", CODE.replace("return 1", "return 2"))
    run = ws.moor("recall", "attempts")
    assert run.out.splitlines()[0].startswith("1. memories/retry.md  [drifted]")
    assert "! src/net/client.py#Client.send_with_retry: drifted (body changed" in run.out
    hit = ws.moor("recall", "--json", "attempts").json()["hits"][0]
    assert hit["state"] == "drifted" and hit["flagged"] is True and hit["why"]


def test_explain_shows_the_signals_of_the_very_score_it_ranks_by(ws: Workspace) -> None:
    setup(ws)
    answer = ws.moor("recall", "--json", "send retry").json()
    assert answer["exact"] is True  # two memories: every posting was read
    plain = answer["hits"]
    explained = ws.moor("recall", "--json", "--explain", "send retry").json()["hits"]
    assert [h["score"] for h in plain] == [h["score"] for h in explained]
    signals = explained[0]["signals"]
    assert [s["signal"] for s in signals] == ["bm25", "trust", "confidence", "pinned", "recency"]
    product = math.prod(s["factor"] for s in signals)
    assert math.isclose(product, explained[0]["score"], rel_tol=1e-4)
    assert "signals" not in plain[0]
    text = ws.moor("recall", "--explain", "send retry").out
    assert "score: bm25" in text and "confidence x0.650" in text
    assert "index: 2 memories" in text


def test_limit_caps_the_hits(ws: Workspace) -> None:
    setup(ws)
    for n in range(6):
        ws.memory(f"more{n}", "src/net/client.py#Client.close", body="Closing is harmless.")
    assert len(ws.moor("recall", "--json", "closing harmless").json()["hits"]) == 7
    assert len(ws.moor("recall", "--json", "--limit", "2", "closing harmless").json()["hits"]) == 2


KEYS = (
    "def derive_idempotency_key(payload):\n    return hash(payload)\n\n\n"
    "def flush(buffer):\n    return buffer\n"
)
WIRE_WORDS = (
    "sockets timeouts queues retries backoff batching compression framing headers trailers "
    "chunking pooling keepalive handshakes certificates proxies redirects cookies caching "
    "logging metrics tracing sampling deadlines quotas"
)
# One mention of the query's word, drowned in a long note: it matches, but scores far below
# a memory about that word (at about half of the cut: `recall.CUT` of the top score).
LONG_NOTE = (
    "Flushing writes the buffer out. "
    + "".join(
        f"The {word} are all handled before the buffer is flushed to the wire. "
        for word in WIRE_WORDS.split(" ")
    )
    + "The idempotency of a flush is not guaranteed."
)


def test_a_matching_memory_far_below_the_top_hit_is_cut_and_the_answer_counts_it(
    ws: Workspace,
) -> None:
    ws.write("src/keys.py", KEYS)
    ws.memory(
        "idempotency-keys",
        "src/keys.py#derive_idempotency_key",
        body="The idempotency key is derived from the payload: one idempotency key per request.",
    )
    ws.memory("buffers", "src/keys.py#flush", body=LONG_NOTE)
    for n in range(24):  # short memories that never say the word
        ws.memory(f"note{n}", "src/keys.py#flush", body="Short.")

    cut = ws.moor("recall", "--json", "idempotency")

    assert cut.code == 0, cut.err
    answer = cut.json()
    assert [h["path"] for h in answer["hits"]] == ["memories/idempotency-keys.md"]
    assert answer["cut"] == 1 and answer["retired_removed"] == 0
    assert math.isclose(answer["threshold"], answer["hits"][0]["score"] * CUT) and CUT > 0
    text = ws.moor("recall", "idempotency").out
    assert "memories/buffers.md" not in text
    assert f"(1 weaker matches below {answer['threshold']:.3f} left out)" in text
    # Positive controls: the cut memory does match the word. Where it is the best match it
    # is the top hit, the word among its matched terms; and alone, the same query finds it.
    best = ws.moor("recall", "--json", "wire idempotency").json()
    assert best["hits"][0]["path"] == "memories/buffers.md"
    assert best["hits"][0]["matched"] == ["wire", "idempotency"]
    (ws.root / "memories/idempotency-keys.md").unlink()
    alone = ws.moor("recall", "--json", "idempotency").json()
    assert [h["path"] for h in alone["hits"]] == ["memories/buffers.md"]
    assert alone["hits"][0]["matched"] == ["idempotency"] and alone["cut"] == 0


def test_no_match_exits_1_and_names_nearby_words(ws: Workspace) -> None:
    setup(ws)
    run = ws.moor("recall", "atempts")
    assert run.code == 1
    assert "no memory matches 'atempts'" in run.out
    assert "weak match: 'atempts': no memory uses it; nearby: attempts (1)" in run.out


@pytest.mark.parametrize("limit", ["0", "-3", "many"])
def test_a_bad_limit_is_a_usage_error(ws: Workspace, limit: str) -> None:
    setup(ws)
    run = ws.moor("recall", "--limit", limit, "send")
    assert run.code == 2 and "--limit" in run.err and "Traceback" not in run.err


def test_a_query_of_punctuation_only_is_answered_not_crashed(ws: Workspace) -> None:
    setup(ws)
    run = ws.moor("recall", "--json", '"*) OR NEAR(')
    assert run.code == 1, run.err
    assert run.json()["hits"] == [] and "Traceback" not in run.err
    # FTS5 syntax in a query is only words to moor.
    words = ws.moor("recall", "--json", "send AND NOT retry")
    assert words.json()["hits"][0]["path"] == "memories/retry.md"


def test_a_superseded_memory_is_never_recalled(ws: Workspace) -> None:
    setup(ws)
    # The control: live, the old memory is recalled.
    before = [h["path"] for h in ws.moor("recall", "--json", "attempts stops").json()["hits"]]
    assert "memories/retry.md" in before
    ws.write(
        "memories/retry-v2.md",
        "---\nabout:\n  - src/net/client.py#Client.send_with_retry\n"
        "supersedes: memories/retry.md\n---\n# Retry v2\n\nFive attempts, then it stops.\n",
    )
    ws.moor("bind", check=True)
    assert ws.state("memories/retry.md") == "retired"
    hits = [h["path"] for h in ws.moor("recall", "--json", "attempts stops").json()["hits"]]
    assert hits == ["memories/retry-v2.md"]


def test_a_memory_retired_by_one_that_does_not_match_is_left_out_too(ws: Workspace) -> None:
    setup(ws)
    # The superseding memory shares no word with the query, and nothing is bound: only its
    # declaration can retire the old one.
    ws.write(
        "memories/zz-newer.md",
        "---\nabout:\n  - src/net/client.py#Client.close\n"
        "supersedes: memories/retry.md\n---\n# Unrelated wording\n\nNothing in common.\n",
    )
    assert ws.state("memories/retry.md") == "retired"
    value = ws.moor("recall", "--json", "attempts stops").json()
    assert value["hits"] == [] and value["retired_removed"] == 1
    about = ws.moor("about", "--json", "src/net/client.py").json()
    assert "memories/retry.md" not in [m["path"] for m in about["memories"]]
    assert about["retired_left_out"] == 1
    # Control: without the declaration the old memory is recalled.
    (ws.root / "memories/zz-newer.md").unlink()
    again = ws.moor("recall", "--json", "attempts stops").json()
    assert [h["path"] for h in again["hits"]] == ["memories/retry.md"]
