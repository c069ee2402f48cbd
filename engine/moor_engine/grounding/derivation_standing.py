"""How a lock entry's derivation stands to this moor's (derivations.py says what follows
from each standing): the same, an older one moor can translate, a newer one, or unknown."""

from __future__ import annotations

import re
from enum import Enum

from moor_extractors.symbols import NORMALISER_VERSION

from moor_engine.grounding.observe import PROBE_VERSION

_SHAPE = re.compile(r"(?P<probe>symbol|file)/(?P<p>\d+) norm/(?P<n>\d+) (?P<language>\S+)")


class Standing(Enum):
    SAME = "same"  # compare as usual
    OLDER = "older"  # translate through the bound code
    NEWER = "newer"  # written by a newer moor
    UNKNOWN = "unknown"  # a shape this moor does not know


def standing(locked: str, current: str) -> Standing:
    if locked == current:
        return Standing.SAME
    old, new = _SHAPE.fullmatch(locked), _SHAPE.fullmatch(current)
    if old is None or new is None:
        return Standing.UNKNOWN
    if (old["probe"], old["language"]) != (new["probe"], new["language"]):
        return Standing.UNKNOWN
    probe, norm = int(old["p"]), int(old["n"])
    if probe > PROBE_VERSION or norm > NORMALISER_VERSION:
        return Standing.NEWER
    return Standing.OLDER  # no newer part, and not equal: an upgrade
