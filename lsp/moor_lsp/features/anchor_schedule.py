"""What a hover on `anchor:NAME` says of the command anchor's place in the editor's cadence
(`moor_engine.anchors.cadence`): whether its observations are closed or open, when it was
last looked at, its failed attempts in a row, whether it stalled, and when it is due."""

from __future__ import annotations

from moor_engine.anchors.cadence import Slot
from moor_engine.grounding.trust import AnchorReport
from moor_extractors.reference import ANCHOR_PREFIX

from moor_lsp.engine import Snapshot


def span(seconds: float) -> str:
    """`45 s`, `4 min 30 s`, `2 h 5 min`."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes} min" + (f" {rest} s" if rest else "")
    hours, rest = divmod(whole, 3600)
    return f"{hours} h" + (f" {rest // 60} min" if rest // 60 else "")


def schedule_text(canonical: str | None, anchor: AnchorReport | None, snapshot: Snapshot) -> str:
    """The hover's lines on a command anchor; empty for any other reference."""
    if canonical is None or not canonical.startswith(ANCHOR_PREFIX):
        return ""
    lines: list[str] = []
    probe = anchor.probe if anchor is not None and anchor.probe else {}
    reproducibility = probe.get("reproducibility")
    if reproducibility == "closed":
        lines.append("Observations **closed**: reproducible from its argv and declared inputs")
    elif reproducibility == "open":
        lines.append("Observations **open**: it reads the host's environment")
    slot = snapshot.schedule.get(canonical.removeprefix(ANCHOR_PREFIX))
    if slot is None:
        lines.append(
            "Not observed on a cadence here: the workspace's commands may not run "
            "(not trusted), or the anchor is closed"
        )
    else:
        lines.extend(_slot_lines(slot, snapshot.clock_at))
    return "**Editor's cadence**\n\n" + "\n".join(f"- {line}" for line in lines)


def _slot_lines(slot: Slot, now: float) -> list[str]:
    lines = [f"Observed every {span(slot.every_s)}"]
    if slot.last_at is not None:
        lines.append(f"Last looked at {span(now - slot.last_at)} ago")
    if slot.failures:
        lines.append(
            f"{slot.failures} failed attempt{'s' if slot.failures > 1 else ''} in a row "
            f"(last: `{slot.last_code}`)" + (": **stalled**" if slot.stalled else "")
        )
    else:
        lines.append("Last attempt succeeded")
    if slot.not_reached:
        lines.append("Not reached in the last round (its budget was spent): still as last seen")
    due = slot.next_due - now
    lines.append("Due now" if due <= 0 else f"Next in {span(due)}")
    return lines
