"""One transition path (issue 25, item 3; memory: one-transition-path): every anchor's
rules — a code anchor's generated ones, a command anchor's declared or generated ones —
are evaluated in `anchors/transition.py` alone, and both the code check and the command
anchor's machine go through it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine" / "moor_engine"
TRANSITION = "anchors/transition.py"


def rule_evaluations(path: Path) -> list[str]:
    """The calls in `path` that evaluate a rule: `rules.evaluate(...)` (declared, CEL) or
    `….fires(...)` (generated)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        func = node.func
        declared = func.attr == "evaluate" and ast.unparse(func.value) == "rules"
        if declared or func.attr == "fires":
            found.append(f"{ast.unparse(func)} (line {node.lineno})")
    return found


def calls(path: Path, name: str) -> bool:
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
    )


def test_rules_are_evaluated_in_the_one_transition_and_nowhere_else() -> None:
    by_module = {
        path.relative_to(ENGINE).as_posix(): rule_evaluations(path) for path in ENGINE.rglob("*.py")
    }
    # The scan can see an evaluation: the transition itself makes both kinds.
    assert len(by_module[TRANSITION]) == 2, by_module[TRANSITION]
    elsewhere = {module: found for module, found in by_module.items() if found}
    assert set(elsewhere) == {TRANSITION}, elsewhere


def test_the_code_check_and_the_command_machine_both_take_the_transition() -> None:
    assert calls(ENGINE / "grounding" / "check.py", "transition")
    assert calls(ENGINE / "anchors" / "machine.py", "transition")
    assert not calls(ENGINE / "anchors" / "listing.py", "transition")  # the control
