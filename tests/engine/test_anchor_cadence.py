"""The scheduler of command anchors in the editor (moor_engine.anchors.cadence), on a
fake clock: the period, the backoff, the stall and the round's budget."""

from __future__ import annotations

from moor_engine.anchors.cadence import Cadence, Stalled


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_anchor_is_due_once_its_period_has_passed_and_not_before() -> None:
    clock = FakeClock()
    cadence = Cadence(clock)
    cadence.track({"roster": 300.0})
    clock.now = 299.0
    assert cadence.due() == []
    assert cadence.wait() == 1.0
    clock.now = 300.0
    assert cadence.due() == ["roster"]
    cadence.record("roster", None)
    assert cadence.due() == []
    assert cadence.wait() == 300.0


def test_failures_back_off_from_30_seconds_doubling_to_an_hour() -> None:
    clock = FakeClock()
    cadence = Cadence(clock)
    cadence.track({"roster": 300.0})
    waits = []
    for _ in range(10):
        cadence.record("roster", "process_failed")
        waits.append(cadence.wait())
    assert waits == [30.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 3600.0, 3600.0, 3600.0]
    cadence.record("roster", None)  # a success resets it to the period
    assert cadence.wait() == 300.0
    assert cadence.slots["roster"].failures == 0


def test_the_third_failed_attempt_in_a_row_stalls_it_once() -> None:
    clock = FakeClock()
    cadence = Cadence(clock)
    cadence.track({"roster": 300.0})
    events = [cadence.record("roster", "timed_out") for _ in range(5)]
    assert events == [None, None, Stalled("roster", 3, "timed_out"), None, None]
    cadence.record("roster", None)
    assert not cadence.slots["roster"].stalled


def test_an_unevaluable_failure_stalls_at_the_first_attempt() -> None:
    clock = FakeClock()
    cadence = Cadence(clock)
    cadence.track({"broken": 300.0, "flaky": 300.0})
    assert cadence.record("broken", "unparseable", unevaluable=True) == Stalled(
        "broken", 1, "unparseable"
    )
    assert cadence.record("flaky", "process_failed") is None  # the control: not unevaluable


def test_a_round_stops_at_its_budget_and_leaves_the_rest_due_unblamed() -> None:
    clock = FakeClock()
    cadence = Cadence(clock, budget_s=10.0)
    cadence.track({"a": 60.0, "b": 60.0, "c": 60.0})
    clock.now = 60.0
    observed = []
    for name in cadence.round():
        observed.append(name)
        clock.now += 6.0  # each command takes 6 s: the budget is spent after two
        cadence.record(name, None)
    assert observed == ["a", "b"]
    left = cadence.slots["c"]
    assert left.not_reached and left.failures == 0 and left.last_code is None
    assert cadence.due() == ["c"]  # still due: the next round reaches it first
    assert [name for name in cadence.round()] == ["c"]


def test_re_observing_now_makes_an_anchor_due_at_once() -> None:
    clock = FakeClock()
    cadence = Cadence(clock)
    cadence.track({"roster": 300.0})
    assert cadence.due() == []
    assert cadence.now_due("roster")
    assert cadence.due() == ["roster"]
    assert not cadence.now_due("undeclared")
