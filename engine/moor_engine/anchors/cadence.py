"""When the language server observes each command anchor (issue 25, scheduling): a pure
scheduler over an injectable clock — the server only asks it what is due and when to wake
(memory: the-editor-observes-command-anchors-on-a-cadence).

Each anchor is observed every `every` seconds (its declaration; 5 minutes unless said),
never because a file changed. A failed attempt backs off instead: 30 s, doubling, at most
an hour. After `STALL_AFTER` failed attempts in a row (after the first when the failure is
`unevaluable`: a broken rule does not heal by retrying) the anchor is `stalled`, said once.
A round observes the due anchors, most overdue first, until its budget is spent; those it
did not reach keep their last state and stay due — they are never blamed for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

BACKOFF_FIRST_S: Final = 30.0
BACKOFF_MAX_S: Final = 3600.0
STALL_AFTER: Final = 3
ROUND_BUDGET_S: Final = 10.0

Clock = Callable[[], float]


@dataclass
class Slot:
    """One anchor's place in the schedule."""

    name: str
    every_s: float
    next_due: float
    failures: int = 0  # failed attempts in a row
    last_at: float | None = None  # when it was last observed (or attempted)
    last_code: str | None = None  # the code of the last failed attempt, None after a success
    stalled: bool = False
    not_reached: bool = False  # due in the last round, which spent its budget first


@dataclass(frozen=True)
class Stalled:
    name: str
    failures: int
    code: str


class Cadence:
    def __init__(self, clock: Clock, budget_s: float = ROUND_BUDGET_S) -> None:
        self.clock = clock
        self.budget_s = budget_s
        self.slots: dict[str, Slot] = {}

    def track(self, everies: Mapping[str, float]) -> None:
        """The anchors to schedule, with their period: new ones are due one period from
        now (the check that opened the session observed them), gone ones are dropped, the
        others keep their state (a changed period applies from their next observation)."""
        now = self.clock()
        for name in set(self.slots) - set(everies):
            del self.slots[name]
        for name, every in everies.items():
            slot = self.slots.get(name)
            if slot is None:
                self.slots[name] = Slot(name, every, now + every)
            else:
                slot.every_s = every

    def record(
        self, name: str, failed_code: str | None, unevaluable: bool = False
    ) -> Stalled | None:
        """An observation of `name` now: None for `failed_code` when it succeeded. Returns
        the `stalled` event when this attempt is the one that makes it stalled."""
        slot = self.slots.get(name)
        if slot is None:
            return None
        now = self.clock()
        slot.last_at, slot.not_reached = now, False
        if failed_code is None:
            slot.failures, slot.last_code, slot.stalled = 0, None, False
            slot.next_due = now + slot.every_s
            return None
        slot.failures += 1
        slot.last_code = failed_code
        slot.next_due = now + min(BACKOFF_FIRST_S * 2 ** (slot.failures - 1), BACKOFF_MAX_S)
        if slot.stalled or slot.failures < (1 if unevaluable else STALL_AFTER):
            return None
        slot.stalled = True
        return Stalled(name, slot.failures, failed_code)

    def due(self) -> list[str]:
        now = self.clock()
        ready = [slot for slot in self.slots.values() if slot.next_due <= now]
        return [slot.name for slot in sorted(ready, key=lambda s: (s.next_due, s.name))]

    def wait(self) -> float | None:
        """Seconds until the next anchor is due (0 when one is), None when none is tracked."""
        if not self.slots:
            return None
        return max(0.0, min(slot.next_due for slot in self.slots.values()) - self.clock())

    def round(self) -> Iterator[str]:
        """The due anchors to observe now, one at a time, while the budget lasts (the
        caller observes and `record`s each before asking for the next). The ones left when
        it is spent are marked `not_reached` and stay due."""
        started = self.clock()
        names = self.due()
        for index, name in enumerate(names):
            if index and self.clock() - started >= self.budget_s:
                for left in names[index:]:
                    self.slots[left].not_reached = True
                return
            yield name

    def now_due(self, name: str) -> bool:
        """Make `name` due now (a person asked to re-observe it); False when not tracked."""
        slot = self.slots.get(name)
        if slot is None:
            return False
        slot.next_due = min(slot.next_due, self.clock())
        return True
