"""A command anchor's transition rules: `when → to` in CEL, over `obs`, `state`, `taken_at`
and `entered_at` (memory: anchor-rules-move-the-state).

Rules are evaluated in order; the first whose guard is true fires, and its `to` (an
object) is the anchor's next state. None firing is no transition, whatever the
observation did. Each thing that can go wrong is a `Failure` with its own code, never a
transition: a rule that cannot be read (`unparseable`), a field that is not there
(`no_such_field`), values that cannot be compared (`not_comparable`), a division by zero
(`divided_by_zero`), a guard that is not a boolean (`guard_not_boolean`), a `to` that is
not a JSON object (`new_state_not_an_object`) or one over the cap (`state_too_large`),
and one past the library's iteration budget (`too_costly`: a rule never hangs a check).

The CEL library (cel-expr-python) is imported on the first evaluation: a workspace
without rules never loads it.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any, Final

from moor_extractors.digest import canonical_json
from moor_extractors.model import Failure, Reason

from moor_engine.anchors.declarations import Declaration, Rule

STATE_CAP: Final = 64 * 1024  # bytes of a state as canonical JSON: kept in moor.lock
_STATUS: Final = re.compile(r"^(?:[A-Z_]+: )+")
_STATUS_TAIL: Final = re.compile(r" \[[A-Z_]+\]$")
_WHERE: Final = re.compile(r"^<input>:1:(\d+): ")
_CONTEXT = threading.local()  # the obs and state `changed()` compares, per evaluation


@dataclass(frozen=True)
class Fired:
    """The rule that fired (1-based, in declaration order) and the state it moves to."""

    index: int
    rule: Rule
    state: dict[str, object]

    def terminal(self, declaration: Declaration) -> str | None:
        """The terminal state reached (its `status`), if it is one of `terminal`."""
        status = self.state.get("status")
        return status if isinstance(status, str) and status in declaration.terminal else None


def as_object(value: object) -> dict[str, object]:
    """The facts as the object rules see as `obs` (and a first state): lines are
    `{"lines": [...]}`, a JSON object is itself, any other JSON value `{"value": v}`."""
    if isinstance(value, dict):
        return {str(key): item for key, item in value.items()}
    return {"value": value}


def state_text(state: Mapping[str, object], name: str) -> str | Failure:
    """The state as moor.lock keeps it (canonical JSON), or `state_too_large`."""
    text = canonical_json(state)
    if len(text.encode("utf-8")) > STATE_CAP:
        return Failure(
            Reason.UNUSABLE,
            "state_too_large",
            f"anchor:{name}: its state is {len(text.encode('utf-8'))} bytes as JSON, over the "
            f"cap of {STATE_CAP // 1024} KiB that moor.lock keeps; make a rule's `to` smaller "
            "or the command print less",
        )
    return text


def evaluate(
    declaration: Declaration,
    obs: Mapping[str, object],
    state: Mapping[str, object],
    taken_at: datetime,
    entered_at: datetime,
) -> Fired | Failure | None:
    """The first rule that fires on `obs` in `state`, a `Failure`, or None: none fires."""
    data = {"obs": obs, "state": state, "taken_at": taken_at, "entered_at": entered_at}
    _CONTEXT.pair = (obs, state)
    try:
        for index, rule in enumerate(declaration.rules, start=1):
            where = f"anchor:{declaration.name} rule {index}"
            guard = _value(rule.when, data, f"{where} `when`")
            if isinstance(guard, Failure):
                return guard
            if not isinstance(guard, bool):
                return Failure(
                    Reason.UNEVALUABLE,
                    "guard_not_boolean",
                    f"{where} `when` gave {_shown(guard)}, not true or false",
                )
            if not guard:
                continue
            new = _value(rule.to, data, f"{where} `to`")
            if isinstance(new, Failure):
                return new
            state_now = _object(new, f"{where} `to`")
            if isinstance(state_now, Failure):
                return state_now
            too_large = state_text(state_now, declaration.name)
            if isinstance(too_large, Failure):
                return too_large
            return Fired(index, rule, state_now)
        return None
    finally:
        _CONTEXT.pair = None


def _changed(field: str) -> bool:
    obs, state = _CONTEXT.pair
    return bool(obs.get(field) != state.get(field))


@cache
def _environment() -> Any:
    # Imported here, once: a check without rules never pays for the native library.
    from cel_expr_python import cel

    types = cel.Type
    return cel, cel.NewEnv(
        variables={
            "obs": types.DYN,
            "state": types.DYN,
            "taken_at": types.TIMESTAMP,
            "entered_at": types.TIMESTAMP,
        },
        functions=[
            cel.FunctionDecl(
                "changed",
                [cel.Overload("changed_string", types.BOOL, [types.STRING], impl=_changed)],
            )
        ],
    )


@cache
def _compiled(text: str) -> Any:
    """The compiled expression, or the compiler's message (a str)."""
    _, env = _environment()
    try:
        return env.compile(text)
    except RuntimeError as error:
        return str(error)


def _value(text: str, data: Mapping[str, object], where: str) -> object | Failure:
    cel, _ = _environment()
    program = _compiled(text)
    if isinstance(program, str):
        return _failure(program, where, compiling=True)
    try:
        result = program.eval(data=dict(data))
    except RuntimeError as error:
        return _failure(str(error), where, compiling=False)
    if result.type() == cel.Type.ERROR:
        return _failure(repr(result), where, compiling=False)
    plain: object = result.plain_value()
    return plain


def _failure(message: str, where: str, *, compiling: bool) -> Failure:
    # cel-cpp's status codes (`INVALID_ARGUMENT: `, `UNKNOWN: `) say nothing to a person.
    lines = _STATUS.sub("", message.strip()).splitlines()
    said = _STATUS_TAIL.sub("", lines[0]) if lines else message
    said = _WHERE.sub(r"column \1: ", said)
    lowered = message.lower()
    if "divide by zero" in lowered or "modulus by zero" in lowered:
        code = "divided_by_zero"
    elif "no matching overload" in lowered:
        code = "not_comparable"
    elif (
        "key not found" in lowered
        or "no such key" in lowered
        or "index error" in lowered
        or "undeclared reference" in lowered
    ):
        code = "no_such_field"
    elif "budget exceeded" in lowered:  # cel-cpp bounds the iterations of comprehensions
        code = "too_costly"
    elif compiling:
        code = "unparseable"
    else:
        code = "evaluation_failed"
    return Failure(Reason.UNEVALUABLE, code, f"{where}: {said}")


def _object(value: object, where: str) -> dict[str, object] | Failure:
    """`value` as a JSON object with string keys, or `new_state_not_an_object`."""
    problem = None
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        problem = f"gave {_shown(value)}, not an object with string keys"
    else:
        try:
            return dict(json.loads(json.dumps(value, allow_nan=False)))
        except (TypeError, ValueError):
            problem = "gave an object that is not JSON (a timestamp, bytes or NaN in it)"
    return Failure(Reason.UNEVALUABLE, "new_state_not_an_object", f"{where} {problem}")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def parse_time(text: str | None) -> datetime:
    """A time moor wrote (ISO-8601 UTC); now when there is none."""
    if text:
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            pass
    return datetime.now(UTC)
