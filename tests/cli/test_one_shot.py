"""A check walks every memory once and exits: its garbage collector runs far less often
than the default one would, and whoever called it (a test, a long-lived process) gets its
own settings back. Collections are counted by the collector's own callbacks."""

from __future__ import annotations

import contextlib
import gc
import io
from collections.abc import Iterator

import pytest
from moor.main import main
from moor.one_shot import collecting_less
from moor_engine.session import Session

from tests.conftest import Workspace


@contextlib.contextmanager
def counting_collections() -> Iterator[list[int]]:
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(count)
    try:
        yield started
    finally:
        gc.callbacks.remove(count)


@pytest.fixture
def many(ws: Workspace) -> Workspace:
    functions = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(150))
    for file in range(8):  # 1,200 memories: enough for the default collector to run often
        ws.write(f"src/many{file}.py", functions)
        for i in range(150):
            ws.memory(f"m{file}-{i}", f"src/many{file}.py#f{i}")
    ws.moor("bind", check=True)
    ws.moor("check", check=True)
    return ws


def test_a_check_collects_garbage_far_less_often_and_gives_the_settings_back(
    many: Workspace,
) -> None:
    before = (gc.get_threshold(), gc.get_freeze_count())
    with Session.open(many.root) as session, counting_collections() as default:
        session.check(session.select([]))  # control: the same check, default collector
    with counting_collections() as one_shot, contextlib.redirect_stdout(io.StringIO()):
        assert main(["-C", str(many.root), "check"]) == 0
    assert len(default) >= 20, default  # the control collects often
    assert len(one_shot) * 5 <= len(default), (len(one_shot), len(default))
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_settings_are_given_back_even_when_the_command_fails_and_a_callers_freeze_stays() -> None:
    thresholds = gc.get_threshold()
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        with pytest.raises(RuntimeError), collecting_less():
            assert gc.get_threshold()[0] > thresholds[0]  # control: changed inside
            raise RuntimeError("the command failed")
        assert gc.get_threshold() == thresholds
        assert gc.get_freeze_count() == frozen  # the caller's frozen objects stay frozen
    finally:
        gc.unfreeze()


def test_a_one_shot_recall_collects_far_less_often_and_gives_the_settings_back(
    many: Workspace,
) -> None:
    from moor_engine.memory.recall_index import index_path, session_recall

    before = (gc.get_threshold(), gc.get_freeze_count())
    with Session.open(many.root) as session, counting_collections() as default:
        index = index_path(session)
        session_recall(session, "f1 x")  # control: the default collector (builds the index)
    for built in index.parent.glob(index.name + "*"):
        built.unlink()
    with counting_collections() as one_shot:
        run = many.moor("recall", "--explain", "f1", "x")  # launch's path, in this process
    assert run.code == 0, run.err
    assert "1200 re-indexed" in run.out  # the same work: the index built from nothing
    assert len(default) >= 20, default  # the control collects often
    assert len(one_shot) * 5 <= len(default), (len(one_shot), len(default))
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_leaving_it_starts_no_collection_of_what_the_command_still_holds() -> None:
    held: list[list[int]] = []
    with counting_collections() as control:  # the settings restored by hand: collected
        thresholds = gc.get_threshold()
        gc.set_threshold(100_000)
        held.extend([i] for i in range(20_000))
        gc.set_threshold(*thresholds)
        held.extend([i] for i in range(100))
    held.clear()
    with counting_collections() as left:
        with collecting_less():
            held.extend([i] for i in range(20_000))
        held.extend([i] for i in range(100))
    assert control, control
    assert left == [], left
    assert gc.get_freeze_count() == 0  # nothing stays frozen
