"""A long-lived process's kept session and verdicts (`moor_engine.kept_session`): while
nothing they rest on moved, a recall opens no session and evaluates no memory; a memory
edited is evaluated again alone, moor.lock written opens a new session — and the answers
are those of a fresh session's check."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from moor_engine.kept_session import KeptSession
from moor_engine.memory.recall_index import KeptIndex, session_recall
from moor_engine.session import Session

from tests.cli.test_hook_answers import backdate
from tests.conftest import Workspace

MEMORIES = 12


@pytest.fixture
def served(ws: Workspace) -> Iterator[tuple[Workspace, KeptSession, KeptIndex]]:
    ws.write("src/code.py", "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(4)))
    for i in range(MEMORIES):
        ws.memory(f"m{i:02}", f"src/code.py#f{i % 4}", body=f"Pelican rule {i} about f{i % 4}.")
    ws.moor("bind", check=True)
    backdate(ws.root)
    answers = KeptSession(ws.root)
    index = KeptIndex(answers)
    yield ws, answers, index
    index.close()
    answers.close()


def search(answers: KeptSession, index: KeptIndex, query: str) -> dict[str, str]:
    with answers.session() as session:
        result, _status = index.recall(session, query, limit=MEMORIES)
    return {hit.path: hit.state.value for hit in result.hits}


def fresh(ws: Workspace, query: str) -> dict[str, str]:
    with Session.open(ws.root) as session:
        result, _status = session_recall(session, query, limit=MEMORIES)
    return {hit.path: hit.state.value for hit in result.hits}


def test_a_warm_recall_opens_no_session_and_evaluates_nothing_while_nothing_moved(
    served: tuple[Workspace, KeptSession, KeptIndex],
) -> None:
    ws, answers, index = served
    first = search(answers, index, "pelican rule")
    # The control: the first search opened a session and evaluated every memory.
    assert (answers.opened, answers.evaluated) == (1, MEMORIES)
    assert len(first) == MEMORIES and set(first.values()) == {"current"}
    for _ in range(3):
        assert search(answers, index, "pelican rule") == first
    assert (answers.opened, answers.evaluated) == (1, MEMORIES)
    assert first == fresh(ws, "pelican rule")


def test_an_edited_memory_alone_is_evaluated_again(
    served: tuple[Workspace, KeptSession, KeptIndex],
) -> None:
    ws, answers, index = served
    search(answers, index, "pelican rule")
    path = ws.root / "memories/m03.md"
    path.write_text(path.read_text().replace("Pelican rule 3", "Pelican rule 3, edited"))
    after = search(answers, index, "pelican rule")
    assert after["memories/m03.md"] == "rewritten"
    assert (answers.opened, answers.evaluated) == (1, MEMORIES + 1)
    assert after == fresh(ws, "pelican rule")


def test_moor_lock_written_opens_a_new_session(
    served: tuple[Workspace, KeptSession, KeptIndex],
) -> None:
    ws, answers, index = served
    search(answers, index, "pelican rule")
    ws.write("src/code.py", "def f0(x):\n    return x - 7\n")
    drifted = search(answers, index, "pelican rule")
    assert drifted["memories/m00.md"] == "drifted"
    assert answers.opened == 1  # control: code is not what the session rests on
    ws.moor("reaffirm", "memories/m00.md", "--why", "checked", check=True)
    after = search(answers, index, "pelican rule")
    assert answers.opened == 2
    assert after["memories/m00.md"] == "current"
    assert after == fresh(ws, "pelican rule")


def test_a_memory_saying_a_superseded_text_follows_an_edit_of_that_text(ws: Workspace) -> None:
    ws.write("src/code.py", "def send(x):\n    return x\n")
    ws.memory("old", "src/code.py#send", body="Send retries three times on a timeout.")
    ws.memory("new", "src/code.py#send", body="Send retries five times on a timeout.")
    ws.moor("bind", check=True)
    ws.moor("supersede", "memories/old.md", "--by", "memories/new.md", "--why", "five", check=True)
    ws.memory("copy", "src/code.py#send", body="Send retries three times on a timeout.")
    backdate(ws.root)
    answers = KeptSession(ws.root)
    index = KeptIndex(answers)
    try:
        first = search(answers, index, "send retries timeout")
        assert "memories/copy.md" not in first  # what old.md said: retired with it
        assert search(answers, index, "send retries timeout") == first
        evaluated = answers.evaluated
        old = ws.root / "memories/old.md"
        old.write_text(old.read_text().replace("three times", "seven times"))
        after = search(answers, index, "send retries timeout")
        assert answers.evaluated > evaluated  # control: the change was seen, not a kept verdict
        assert "memories/copy.md" in after
        assert after == fresh(ws, "send retries timeout")
    finally:
        index.close()
        answers.close()


def test_a_settings_change_judges_every_kept_verdict_again(
    served: tuple[Workspace, KeptSession, KeptIndex],
) -> None:
    ws, answers, index = served
    first = search(answers, index, "pelican rule")
    assert set(first.values()) == {"current"}  # the control: kept as current
    assert search(answers, index, "pelican rule") == first
    evaluated = answers.evaluated
    toml = ws.root / "moor.toml"
    # The bound code is now larger than moor reads: no memory about it can be current.
    toml.write_text(toml.read_text() + "max_file_size = 16\n")
    after = search(answers, index, "pelican rule")
    assert answers.evaluated > evaluated
    assert "current" not in set(after.values())
    assert after == fresh(ws, "pelican rule")
