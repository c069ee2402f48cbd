"""Since when an anchor that is not current has been as it is now, as this clone's journal
saw it: the date beside a stale memory handed to a model (docs/agents.md, "drifted since …").

"Since" is the time this clone's journal first recorded the anchor as it is now. For a
drifted, moved or gone anchor: the first entry with the address observed now, after the
last entry with another address (`Journal.first_seen`) — so a later change of code already
drifted dates from that change: the date says how long the code has been what the warning
describes, never longer. For an unverified anchor: the attempt that recorded today's
failure, when it is the anchor's latest entry. Nothing else is dated, and no date is ever
guessed: not an address the journal has not recorded (the code changed after the last
journalling check), not an unbound or invalid anchor, not a memory-level state, and nothing
without a journal. A fresh clone's journal dates what it first saw from its first check.

Files other clones compute too (`moor context`, `moor rules`) take no date: this is
the local journal's knowledge, and those must be the same bytes on every clone.
"""

from __future__ import annotations

from collections.abc import Iterable

from moor_store.journal import Journal

from moor_engine.grounding.trust import MemoryReport, State

_DATED_BY_ADDRESS = frozenset({State.DRIFTED, State.MOVED, State.GONE})


def since(journal: Journal | None, reports: Iterable[MemoryReport]) -> dict[str, str]:
    """Per canonical reference of an anchor of `reports` that is not current, the journal's
    time (ISO-8601 UTC) since which it has been as it is now; anchors the journal cannot
    date are left out."""
    if journal is None:
        return {}
    addresses: dict[str, str] = {}
    failures: dict[str, str] = {}
    for report in reports:
        for anchor in report.anchors:
            if anchor.canonical is None:
                continue
            if anchor.state in _DATED_BY_ADDRESS and anchor.address is not None:
                addresses[anchor.canonical] = anchor.address
            elif anchor.state is State.UNVERIFIED and anchor.code is not None:
                failures[anchor.canonical] = anchor.code
    dates = journal.first_seen(addresses) if addresses else {}
    for canonical, entry in (journal.latest(failures) if failures else {}).items():
        if entry.kind == "attempt" and entry.code == failures[canonical]:
            dates[canonical] = entry.at
    return dates
