"""Recall judges trust lazily (issue 22.5): candidates in order of the best score they could
have (trust's factor is at most 1), and no more of them than the limit's hits need. The
answer is the one judging every candidate gives; a real index, real checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from moor_engine.grounding.trust import MemoryReport
from moor_engine.memory.recall import TRUST_FACTOR, RecallResult, recall
from moor_engine.memory.recall_index import ready_index, session_verdicts
from moor_engine.session import Session

from tests.engine.test_recall_ranking import bind_all, memory, workspace, write

MEMORIES = 30


def judged_recall(root: Path, query: str, limit: int) -> tuple[RecallResult, list[str]]:
    """`recall` as `moor recall` runs it, and every memory path whose trust was judged."""
    judged: list[str] = []
    with Session.open(root) as session:
        index, status = ready_index(session)
        try:
            verdicts = session_verdicts(session, status.declaring)

            def counted(paths: Sequence[str]) -> Mapping[str, MemoryReport]:
                judged.extend(paths)
                return verdicts(paths)

            return recall(index, query, counted, limit=limit), judged
        finally:
            index.close()


def test_trust_is_judged_for_the_candidates_the_limit_needs_and_the_answer_is_unchanged(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    for n in range(MEMORIES):  # each says the word; more often, more relevant
        memory(
            root,
            f"m{n:02}",
            "src/net/client.py#Client.send",
            f"Sending {n}",
            "The payload is posted. " * (MEMORIES - n) + "Widgets matter.",
        )
    memory(  # the most relevant by text, but its code drifts: ranked down by trust
        root, "drifting", "src/net/client.py#Client.send_with_retry", "Widget", "Widget widget."
    )
    bind_all(root)
    write(root, "src/net/client.py", (root / "src/net/client.py").read_text() + "\nX = 1\n")
    code = (root / "src/net/client.py").read_text().replace("attempts=3", "attempts=4")
    write(root, "src/net/client.py", code)

    top, judged = judged_recall(root, "widget", limit=3)
    every, all_judged = judged_recall(root, "widget", limit=MEMORIES + 1)

    # The control: judging everything sees every candidate and the drifted one among them.
    assert len(all_judged) == MEMORIES + 1
    assert "memories/drifting.md" in [hit.path for hit in every.hits]
    drifted = next(hit for hit in every.hits if hit.path == "memories/drifting.md")
    assert drifted.state.value == "drifted"
    # Lazily: the same best three, in the same order, with their states; far fewer judged.
    assert [(h.path, h.state, h.score) for h in top.hits] == [
        (h.path, h.state, h.score) for h in every.hits[:3]
    ]
    assert top.judged == len(judged) <= 3 + 4 < MEMORIES
    assert judged[0] == "memories/drifting.md"  # the best bound is judged first


def test_no_state_scores_a_memory_above_its_bound() -> None:
    # The bound a candidate is ordered by takes trust's factor as 1.
    assert max(TRUST_FACTOR.values()) <= 1.0
