"""Turning reports into text, JSON or SARIF. Only this module knows about terminals."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from moor_engine.grounding.trust import QUIET_STATES, MemoryReport, Report, State, needs_look
from moor_engine.grounding.verdicts import next_step
from moor_extractors.resolve import SymbolRef

STATE_STYLE: dict[State, str] = {
    State.INVALID: "bold red",
    State.RETIRED: "dim",
    State.GONE: "bold red",
    State.DRIFTED: "yellow",
    State.MOVED: "cyan",
    State.REWRITTEN: "cyan",
    State.UNVERIFIED: "magenta",
    State.UNBOUND: "blue",
    State.UNGROUNDED: "dim",
    State.CURRENT: "green",
}
SARIF_LEVEL: dict[State, str] = {
    State.INVALID: "error",
    State.GONE: "error",
    State.DRIFTED: "warning",
    State.MOVED: "note",
    State.REWRITTEN: "note",
    State.UNVERIFIED: "note",
    State.UNBOUND: "note",
    State.UNGROUNDED: "none",
    State.RETIRED: "none",
    State.CURRENT: "none",
}
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)


def render_json(report: Report, out: TextIO | None = None) -> None:
    # Indented for a person at a terminal; compact (C encoder, ~10x faster) for a pipe.
    out = sys.stdout if out is None else out  # read per call, never at import
    indent = 2 if out.isatty() else None
    out.write(json.dumps(report.as_json(), indent=indent, ensure_ascii=False) + "\n")


def render_symbols_text(path: str, symbols: list[SymbolRef], out: TextIO | None = None) -> None:
    """One reference a line, ready to paste into `about:`."""
    out = sys.stdout if out is None else out  # read per call, never at import
    for symbol in symbols:
        out.write(f"{path}#{symbol.symbol}\n")


def render_symbols_json(path: str, symbols: list[SymbolRef], out: TextIO | None = None) -> None:
    out = sys.stdout if out is None else out  # read per call, never at import
    rows = [
        {
            "ref": f"{path}#{s.symbol}",
            "kind": s.kind,
            "line": s.line,
            "end_line": s.end_line,
            "variants": s.variants,
        }
        for s in symbols
    ]
    indent = 2 if out.isatty() else None
    out.write(json.dumps({"path": path, "symbols": rows}, indent=indent, ensure_ascii=False))
    out.write("\n")


def render_sarif(report: Report, version: str, out: TextIO | None = None) -> None:
    out = sys.stdout if out is None else out  # read per call, never at import
    results: list[dict[str, object]] = []
    for memory in report.memories:
        if not needs_look(memory):
            continue
        for line, column, state, message in _findings(memory):
            results.append(
                {
                    "ruleId": f"moor/{state.value}",
                    "level": SARIF_LEVEL[state],
                    "message": {"text": message},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": memory.path},
                                "region": {
                                    "startLine": max(line, 1),
                                    "startColumn": max(column, 1),
                                },
                            }
                        }
                    ],
                }
            )
    rules = [
        {
            "id": f"moor/{state.value}",
            "name": state.value,
            "shortDescription": {"text": f"memory is {state.value}"},
            "defaultConfiguration": {"level": SARIF_LEVEL[state]},
        }
        for state in State
    ]
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "moor",
                        "version": version,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    json.dump(document, out, indent=2, ensure_ascii=False)
    out.write("\n")


def _findings(memory: MemoryReport) -> list[tuple[int, int, State, str]]:
    found: list[tuple[int, int, State, str]] = []
    for anchor in memory.anchors:
        if anchor.state in QUIET_STATES:
            continue
        found.append(
            (
                anchor.line,
                anchor.column,
                anchor.state,
                f"{anchor.ref}: {anchor_why(anchor.state, anchor.detail, anchor.code)}",
            )
        )
    if memory.state in (State.INVALID, State.REWRITTEN) and (not found or memory.code):
        found.append(
            (
                memory.line,
                memory.column,
                memory.state,
                "; ".join(memory.notes) or memory.state.value,
            )
        )
    return found


def anchor_why(state: State, detail: str | None, code: str | None) -> str:
    if detail:
        return (
            f"{state.value} ({code}): {detail}"
            if code and state in (State.UNVERIFIED, State.INVALID)
            else f"{state.value}: {detail}"
        )
    return state.value


def render_text(report: Report, *, verbose: bool, out: TextIO | None = None) -> None:
    """Each memory needing a look, then one line per finding under it (`line N: state:
    reference — why`; never hard-wrapped in a pipe, so it stays greppable), then a table
    of how many memories are in each state."""
    out = sys.stdout if out is None else out  # read per call, never at import
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=out, highlight=False, soft_wrap=not out.isatty())
    for memory in report.memories:
        if not needs_look(memory) and not verbose and not memory.link_findings:
            continue
        title = Text(memory.path, style="bold")
        title.append(": ")
        title.append(memory.state.value, style=STATE_STYLE[memory.state])
        if memory.title:
            title.append(f"  {memory.title}", style="dim")
        console.print(title)
        for line, state, reference, why in _text_rows(memory, verbose):
            row = Text(f"  line {line}: ")
            row.append(state.value, style=STATE_STYLE[state])
            row.append(f": {reference} — {why}" if reference else f": {why}")
            console.print(row)
        for finding in memory.link_findings:
            row = Text(f"  line {finding.line}: ")
            row.append("note", style="yellow")
            row.append(f": links.{finding.relation} — {finding.message}")
            console.print(row)
    total = len(report.memories)
    if not total:
        console.print("no memories found")
        return
    table = Table(box=None, pad_edge=False, show_header=False)
    table.add_column("count", justify="right")
    table.add_column("state")
    for name, count in report.summary().items():
        table.add_row(str(count), Text(name, style=STATE_STYLE[State(name)]))
    console.print(Text(f"{total} memor{'y' if total == 1 else 'ies'}:"))
    console.print(table)
    if report.rebaselined:
        console.print(
            f"re-baselined {report.rebaselined} anchor(s) after a normaliser upgrade "
            "(not drift); commit moor.lock"
        )


def _text_rows(memory: MemoryReport, verbose: bool) -> list[tuple[int, State, str, str]]:
    """One row per finding: memory-level notes first, then each anchor worth showing."""
    rows: list[tuple[int, State, str, str]] = []
    memory_level = memory.state in (
        State.INVALID,
        State.REWRITTEN,
        State.UNGROUNDED,
        State.RETIRED,
    )
    if memory.code and (memory_level or memory.code == "rewritten"):
        state = State.REWRITTEN if memory.code == "rewritten" else memory.state
        rows.append((memory.line, state, "", "; ".join(memory.notes)))
    for anchor in memory.anchors:
        if (anchor.state == State.CURRENT or memory.state == State.RETIRED) and not verbose:
            continue
        why = anchor.detail or ""
        if anchor.code and anchor.state in (State.UNVERIFIED, State.INVALID):
            why = f"[{anchor.reason}/{anchor.code}] {why}"
        step = next_step(memory, anchor)
        if step:
            why += f" — next: {step}"
        rows.append((anchor.line, anchor.state, anchor.ref, why))
    if not rows and not (memory.link_findings and memory.state in QUIET_STATES):
        rows.append((memory.line, memory.state, "", "; ".join(memory.notes)))
    return rows
