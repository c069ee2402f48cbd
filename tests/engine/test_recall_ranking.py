"""Recall's ranking on real workspaces: a real index file, real checks for the trust states."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

from moor_engine.grounding.actions import bind, reaffirm
from moor_engine.memory.recall import CUT, RecallResult
from moor_engine.memory.recall_index import session_recall
from moor_engine.session import Session

CODE = """
class Client:
    def send(self, payload):
        key = self.idempotency_key(payload)
        return self.transport.post(payload, key)

    def send_with_retry(self, payload, attempts=3):
        for _ in range(attempts):
            if self.send(payload):
                return True
        return False
"""


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def memory(
    root: Path,
    name: str,
    about: str,
    title: str,
    body: str,
    *,
    extra: str = "",
) -> None:
    front = f"about:\n  - {about}\n{extra}"
    text = f"---\n{front}---\n# {title}\n\n{body}\n\n## When this changes, ask\n- Still true?\n"
    write(root, f"memories/{name}.md", text)


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "moor.toml", 'memory_roots = ["memories"]\n')
    write(root, "src/net/client.py", CODE)
    return root


def ask(root: Path, query: str, limit: int = 10) -> RecallResult:
    with Session.open(root) as session:
        result, _status = session_recall(session, query, limit=limit)
    return result


def order(result: RecallResult) -> list[str]:
    return [hit.path.removeprefix("memories/").removesuffix(".md") for hit in result.hits]


def bind_all(root: Path) -> None:
    with Session.open(root) as session:
        outcome = bind(session, [])
    assert not outcome.refused, outcome.refused


def test_confidence_changes_the_order_of_equally_relevant_memories(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    body = "Payloads carry an idempotency key."
    for name in ("a-first", "b-second"):
        memory(root, name, "src/net/client.py#Client.send", "Sending is safe", body)
    # Control: equal confidence ties, and the tie is broken by path.
    assert order(ask(root, "idempotency key")) == ["a-first", "b-second"]
    memory(
        root,
        "b-second",
        "src/net/client.py#Client.send",
        "Sending is safe",
        body,
        extra="confidence: verified\n",
    )
    memory(
        root,
        "a-first",
        "src/net/client.py#Client.send",
        "Sending is safe",
        body,
        extra="confidence: inferred\n",
    )
    assert order(ask(root, "idempotency key")) == ["b-second", "a-first"]


def test_a_drifted_memory_ranks_below_a_current_one_and_says_why(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    # The old memory matches the query a little better (it says "key" twice).
    memory(
        root,
        "a-old",
        "src/net/client.py#Client.send",
        "Idempotent sends",
        "Send attaches an idempotency key to the payload; the key makes a resend safe.",
    )
    memory(
        root,
        "b-new",
        "src/net/client.py#Client.send",
        "Idempotent sends",
        "Send attaches an idempotency key derived from the payload hash.",
    )
    bind_all(root)
    before = ask(root, "send idempotency key")
    # Control: while both are current, the better text match comes first.
    assert order(before) == ["a-old", "b-new"]
    assert not any(hit.flagged for hit in before.hits)
    code = (root / "src/net/client.py").read_text(encoding="utf-8")
    (root / "src/net/client.py").write_text(
        code.replace("return self.transport.post(payload, key)", "return self.queue.put(payload)"),
        encoding="utf-8",
    )
    with Session.open(root) as session:
        done = reaffirm(session, "memories/b-new.md", "the transport part still holds")
    assert done.done, done.refused
    after = ask(root, "send idempotency key")
    assert order(after) == ["b-new", "a-old"]
    old = after.hits[1]
    assert old.state.value == "drifted" and old.flagged
    assert any("body changed in Client.send" in reason for reason in old.why), old.why
    assert not after.hits[0].flagged


def test_a_gone_memory_is_flagged_with_why(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    memory(
        root,
        "retry",
        "src/net/client.py#Client.send_with_retry",
        "Retries",
        "Three attempts.",
    )
    bind_all(root)
    assert not ask(root, "retry attempts").hits[0].flagged  # control: current at first
    code = (root / "src/net/client.py").read_text(encoding="utf-8")
    (root / "src/net/client.py").write_text(code.split("    def send_with_retry")[0], "utf-8")
    hit = ask(root, "retry attempts").hits[0]
    assert hit.state.value == "gone" and hit.flagged
    assert any("no longer exists" in reason for reason in hit.why), hit.why


def test_a_pinned_memory_ranks_up(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    for name in ("a-plain", "b-pinned"):
        memory(root, name, "src/net/client.py#Client.send", "Send", "Sending is idempotent.")
    assert order(ask(root, "idempotent")) == ["a-plain", "b-pinned"]  # control
    memory(
        root,
        "b-pinned",
        "src/net/client.py#Client.send",
        "Send",
        "Sending is idempotent.",
        extra="pinned: true\n",
    )
    assert order(ask(root, "idempotent")) == ["b-pinned", "a-plain"]


def test_a_newer_memory_ranks_up_a_little(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    for name, created in (("a-older", "2026-01-01"), ("b-newer", "2026-06-01")):
        memory(
            root,
            name,
            "src/net/client.py#Client.send",
            "Send",
            "Sending is idempotent.",
            extra=f"created: {created}\n",
        )
    result = ask(root, "idempotent")
    assert order(result) == ["b-newer", "a-older"]
    # Weak: it is a few per cent, never more than the weight.
    assert result.hits[0].score / result.hits[1].score < 1.06


def test_the_explained_signals_multiply_to_the_score(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    memory(
        root,
        "send",
        "src/net/client.py#Client.send",
        "Send",
        "Idempotent.",
        extra="confidence: inferred\npinned: true\n",
    )
    hit = ask(root, "send idempotent").hits[0]
    names = [signal.name for signal in hit.signals]
    assert names == ["bm25", "trust", "confidence", "pinned", "recency"]
    assert math.isclose(math.prod(s.factor for s in hit.signals), hit.score)
    assert math.isclose(sum(s.contribution for s in hit.signals), hit.score)
    assert hit.signals[2].factor < 1 < hit.signals[3].factor  # inferred down, pinned up


def test_the_same_query_twice_gives_the_same_answer(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    for index in range(12):
        memory(
            root,
            f"m{index:02}",
            "src/net/client.py#Client.send",
            "Send" if index % 2 else "Retry",
            "Sending is idempotent; a retry sends again." * (1 + index % 3),
        )
    first, second = ask(root, "send retry"), ask(root, "send retry")
    assert [(h.path, h.score) for h in first.hits] == [(h.path, h.score) for h in second.hits]
    (root / ".moor/recall.sqlite").unlink()
    rebuilt = ask(root, "send retry")
    assert [(h.path, h.score) for h in rebuilt.hits] == [(h.path, h.score) for h in first.hits]
    # Equal scores are ordered by path.
    scores = [(round(-h.score, 9), h.path) for h in first.hits]
    assert scores == sorted(scores)


def test_words_of_a_name_find_the_memory_about_it(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    memory(root, "loop", "src/net/client.py#Client.send_with_retry", "Attempts", "Three at most.")
    memory(root, "other", "src/net/client.py#Client.send", "Posting", "Through the transport.")
    result = ask(root, "with retry")
    assert order(result)[0] == "loop"
    assert "retry" in result.hits[0].matched
    # The whole name is a token of its own: the exact name prefers its own memory.
    assert order(ask(root, "send_with_retry"))[0] == "loop"
    assert order(ask(root, "sendWithRetry"))[0] == "loop"
    # Control: words in neither memory find nothing.
    assert ask(root, "database schema").hits == []


def test_a_weak_match_names_the_vocabulary_nearby(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    memory(root, "send", "src/net/client.py#Client.send", "Send", "Sending is idempotent.")
    weak = ask(root, "idenpotent")
    assert weak.weak and weak.hits == []
    assert weak.feedback[0].term == "idenpotent"
    assert ("idempotent", 1) in weak.feedback[0].nearby
    # Control: spelt as the memory spells it, the match is not weak.
    strong = ask(root, "idempotent")
    assert not strong.weak and order(strong) == ["send"]


def test_a_hit_that_matches_but_scores_far_below_the_top_is_cut(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    memory(
        root,
        "strong",
        "src/net/client.py#Client.send",
        "Idempotency keys",
        "The idempotency key is derived from the payload; keys are idempotency tokens.",
    )
    # It says the word once, in a long note about something else: a match, far below.
    filler = "".join(
        f"The {word} are handled before the payload is posted. "
        for word in ("sockets", "timeouts", "queues", "buffers", "headers", "proxies", "caches")
    )
    memory(
        root,
        "faint",
        "src/net/client.py#Client.send_with_retry",
        "Transport",
        f"{filler * 5} Retries rely on idempotency.",
    )
    for index in range(24):  # short memories without the word: a note's length tells
        memory(root, f"short-{index:02}", "src/net/client.py#Client.send", "Send", "Short.")

    cut = ask(root, "idempotency")

    assert order(cut) == ["strong"]
    assert cut.cut == 1 and cut.threshold == cut.hits[0].score * CUT > 0
    # Control: the faint one matches the word. Without the strong one, the same query
    # finds it, and says the word is what it matched.
    (root / "memories/strong.md").unlink()
    alone = ask(root, "idempotency")
    assert order(alone) == ["faint"] and alone.hits[0].matched == ("idempotency",)
    assert alone.cut == 0


def test_words_that_make_a_name_find_the_memory_about_that_name(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    write(root, "src/suite.py", "def load_tests(loader, tests, pattern):\n    return tests\n")
    memory(root, "named", "src/suite.py#load_tests", "Discovery hook", "Three notches up.")
    for index in range(6):  # memories that use both words often, about something else
        memory(
            root,
            f"wordy-{index}",
            "src/net/client.py#Client.send",
            "Loads and tests",
            "The load is split; tests load it; more tests, more load. " * (index + 1),
        )
    bind_all(root)
    found = order(ask(root, "load tests", limit=3))
    assert found[0] == "named"
    # Control: the words alone, not making that name, rank the wordy ones first.
    assert order(ask(root, "tests load", limit=3))[0] != "named"


def test_a_drifted_memory_that_answers_best_is_not_ranked_below_worse_answers(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    memory(
        root,
        "retry-attempts",
        "src/net/client.py#Client.send_with_retry",
        "Retry attempts",
        "send_with_retry makes three retry attempts; each retry attempt resends the payload.",
    )
    for name in ("other-one", "other-two"):  # about other code, answering the query worse
        memory(
            root,
            name,
            "src/net/client.py#Client.send",
            f"Retry logging {name}",
            "Each retry attempt of a send is logged.",
        )
    bind_all(root)
    code = (root / "src/net/client.py").read_text(encoding="utf-8")
    write(root, "src/net/client.py", code.replace("attempts=3", "attempts=5"))

    alone = ask(root, "retry attempts")

    # Stale knowledge of the code asked about comes first, flagged with why.
    assert order(alone)[0] == "retry-attempts", order(alone)
    top = alone.hits[0]
    assert top.state.value == "drifted" and top.flagged and top.why
    trust = next(signal for signal in top.signals if signal.name == "trust")
    assert trust.factor == 1.0 and "not ranked down" in trust.why
    # Control: once a live memory about the same code answers too, the drifted one is ranked
    # below it by its penalty.
    memory(
        root,
        "retry-attempts-now",
        "src/net/client.py#Client.send_with_retry",
        "Retry attempts now",
        "send_with_retry makes five retry attempts.",
    )
    with Session.open(root) as session:
        done = bind(session, ["memories/retry-attempts-now.md"])
    assert done.done, done.refused
    beside = ask(root, "retry attempts")
    assert order(beside).index("retry-attempts-now") < order(beside).index("retry-attempts")
    penalised = next(hit for hit in beside.hits if hit.path == "memories/retry-attempts.md")
    assert penalised.flagged and penalised.score < top.score
