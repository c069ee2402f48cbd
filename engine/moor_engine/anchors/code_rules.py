"""The built-in code axes as generated transition rules (DESIGN §4b; memory:
code-axes-are-generated-rules); and the one rule a command anchor without declared rules
moves by, `changed("facts")` (`UNRULED`): "any change is a transition", for both kinds.

A code anchor (a symbol, a file, a section) moves when an axis it watches differs from what
moor.lock binds. That is one rule per watched axis, in the shape of a declared rule (`when`,
`to`): `changed("body")` → `{"status": "drifted"}`, generated from the memory's `watch:`.
Unlike a declared rule, every rule that fires is kept (each names an axis a reader is
shown), and they are evaluated here in Python: a check of code anchors never imports the
CEL library. What they compare is the facts' axes, so moor.lock and every verdict are the
same as the comparison they replace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Final

from moor_engine.anchors.facts import FACTS_AXIS

DRIFTED: Final = '{"status": "drifted"}'
UNRULED: Final = (FACTS_AXIS,)  # what a command anchor without declared rules watches


@dataclass(frozen=True)
class AxisRule:
    """`changed("AXIS")` → drifted, over the facts observed and the facts bound."""

    axis: str

    @property
    def when(self) -> str:
        return f'changed("{self.axis}")'

    @property
    def to(self) -> str:
        return DRIFTED

    def fires(self, observed: Mapping[str, str], bound: Mapping[str, str]) -> bool:
        return observed.get(self.axis) != bound.get(self.axis)


@cache
def generated(watch: tuple[str, ...]) -> tuple[AxisRule, ...]:
    """The rules a `watch:` generates, in its order."""
    return tuple(AxisRule(axis) for axis in watch)
