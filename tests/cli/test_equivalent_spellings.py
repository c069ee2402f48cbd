"""Equivalent spellings are not drift, and drift says what changed (issue 23, item 3)."""

from __future__ import annotations

import json
import re

import pytest
from moor.main import main

from tests.conftest import Workspace

SPLIT = (
    "from typing import Optional\n\n\n"
    "def scope_of(\n    name: str,\n    default: list[int]\n    | None = None,\n"
    ") -> Optional[int]:\n    return len(name)\n"
)
JOINED = SPLIT.replace("default: list[int]\n    | None = None", "default: list[int] | None = None")


def check(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """The one memory's first anchor, from an in-process `moor check --format json`."""
    capsys.readouterr()
    code = main(["-C", str(ws.root), "check", "--format", "json", "--no-progress"])
    assert code in (0, 1), capsys.readouterr().err
    anchor: dict[str, object] = json.loads(capsys.readouterr().out)["memories"][0]["anchors"][0]
    return anchor


def bound(ws: Workspace, source: str) -> None:
    ws.write("src/scope.py", source)
    ws.memory("scope", "src/scope.py#scope_of")
    assert main(["-C", str(ws.root), "bind"]) == 0


def test_a_parameter_annotation_rejoined_onto_one_line_is_not_drift(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    bound(ws, SPLIT)
    ws.write("src/scope.py", JOINED)
    assert check(ws, capsys)["state"] == "current"
    # Control: a real change to the same annotation drifts the signature.
    ws.write("src/scope.py", JOINED.replace("list[int]", "list[str]"))
    anchor = check(ws, capsys)
    assert (anchor["state"], anchor["axes"]) == ("drifted", ["signature"])


def test_a_drift_says_what_changed_in_one_line_in_text_and_json(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    bound(ws, JOINED)
    ws.write("src/scope.py", JOINED.replace("-> Optional[int]", "-> int | None"))
    anchor = check(ws, capsys)
    assert anchor["state"] == "drifted"
    assert str(anchor["detail"]).endswith(
        "signature changed in scope_of since it was bound: `Optional[int]` → `int | None`"
    )
    assert anchor["change"] == "`Optional[int]` → `int | None`"
    capsys.readouterr()
    assert main(["-C", str(ws.root), "check", "--no-progress"]) == 1
    assert "`Optional[int]` → `int | None`" in capsys.readouterr().out
    # Control: without the bound code (no journal snapshot, no git) the drift is still
    # reported, only without the line.
    (ws.root / ".moor" / "journal.sqlite").unlink()
    anchor = check(ws, capsys)
    assert anchor["state"] == "drifted"
    assert "→" not in str(anchor["detail"]) and anchor["change"] is None


def test_a_lock_of_the_previous_normaliser_stays_current_across_the_rejoin(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    bound(ws, SPLIT)
    # moor.lock as normaliser 3 wrote it: its own derivation and digests.
    lock = re.sub(r"norm/\d+", "norm/3", ws.read("moor.lock"))
    ws.write(
        "moor.lock", re.sub(r'signature = "[0-9a-f]+"', 'signature = "' + "3" * 32 + '"', lock)
    )
    ws.write("src/scope.py", JOINED)
    assert check(ws, capsys)["state"] == "current"
    assert "norm/3" not in ws.read("moor.lock")  # re-baselined through the bound code
    assert check(ws, capsys)["state"] == "current"
    # Control: the same old lock over a real change since binding is drift.
    ws.write(
        "moor.lock", re.sub(r'signature = "[0-9a-f]+"', 'signature = "' + "3" * 32 + '"', lock)
    )
    ws.write("src/scope.py", JOINED.replace("name: str", "name: bytes"))
    anchor = check(ws, capsys)
    assert (anchor["state"], anchor["axes"]) == ("drifted", ["signature"])
