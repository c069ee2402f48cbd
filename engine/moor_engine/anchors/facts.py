"""A command's output as an observation: its facts, their digest and its address.

`lines`: stdout's lines (UTF-8, line ends dropped). `json`: stdout parsed as one JSON
value; `null` is `NotFound`, content-addressed like any other observation. The facts and
the declaration are separate axes, so a changed declaration is told apart from changed
facts (the address holds both).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from moor_extractors.digest import digest_bytes, digest_json
from moor_extractors.model import Facts, Failure, Reason
from moor_store.inside import NotInside, read_inside

from moor_engine.anchors.declarations import Declaration
from moor_engine.grounding.observe import Found, NotFound, found_address

PROBE_VERSION: Final = 1
KIND: Final = "command"
FACTS_AXIS: Final = "facts"
DECLARATION_AXIS: Final = "declaration"
# The declared inputs' contents when observed: recorded (in moor.lock when bound), never
# part of the address — the facts are what the memory is about, the inputs say whether a
# change came from them.
INPUTS_AXIS: Final = "inputs"
# With rules: the facts as an object (`rules.as_object`, canonical JSON) and when they were
# observed — recorded, never part of the address. Bound, they are the anchor's state and
# when it entered it (memory: anchor-rules-move-the-state).
STATE_AXIS: Final = "state"
ENTERED_AXIS: Final = "entered_at"
# The declaration's digest per kind (`Declaration.parts`): recorded, never part of the
# address (the whole `declaration` is); a lock written before them has none.
PART_AXES: Final = {
    "probe": "declared_probe",
    "rules": "declared_rules",
    "terminal": "declared_terminal",
}


def changed_parts(bound: Mapping[str, str], now: Mapping[str, str]) -> set[str] | None:
    """The kinds of the declaration that differ between `bound` and `now` axes; None when
    `bound` has no per-kind digests (moor.lock from before they were kept)."""
    if not all(axis in bound for axis in PART_AXES.values()):
        return None
    return {kind for kind, axis in PART_AXES.items() if bound[axis] != now.get(axis)}


def derivation(declaration: Declaration) -> str:
    return f"command/{PROBE_VERSION} facts/{declaration.facts}"


def parse(declaration: Declaration, stdout: bytes) -> object | Failure:
    """The facts the output states (None: the JSON `null`, nothing found)."""
    name = f"anchor:{declaration.name}"
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError as error:
        return Failure(
            Reason.UNUSABLE, "invalid_utf8", f"{name}: output is not UTF-8 (byte {error.start})"
        )
    if declaration.facts == "lines":
        return {"lines": text.splitlines()}
    try:
        value: object = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:
        where = (
            f" at line {error.lineno}, column {error.colno}"
            if isinstance(error, json.JSONDecodeError)
            else ""
        )
        return Failure(
            Reason.UNUSABLE, "invalid_json", f"{name}: output is not one JSON value{where}"
        )
    return value


def text(declaration: Declaration, value: object) -> str:
    """The facts as a person reads them, and as a diff shows them: the lines, or the JSON
    value indented with sorted keys (sealed at bind, `moor diff` compares two of them)."""
    if declaration.facts == "lines" and isinstance(value, dict):
        lines = value.get("lines", [])
        return "".join(f"{line}\n" for line in lines) if isinstance(lines, list) else ""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def observation(
    declaration: Declaration,
    value: object,
    inputs: str | None = None,
    state: tuple[str, str] | None = None,
) -> Found | NotFound:
    """The observation of `value`: `Found` with its address, or `NotFound` for `null`;
    `inputs`: the digest of the declared inputs' contents (`inputs_digest`); `state`: with
    rules, the facts as a state (canonical JSON) and the time they were observed."""
    path = f"anchor:{declaration.name}"
    derived = derivation(declaration)
    axes = {FACTS_AXIS: digest_json({"value": value}), DECLARATION_AXIS: declaration.digest()}
    if value is None:
        gone = Facts(KIND, {**axes, FACTS_AXIS: "null"})
        return NotFound(path, derived, found_address(derived, gone))
    address = found_address(derived, Facts(KIND, axes))
    recorded = {**axes, INPUTS_AXIS: inputs} if inputs is not None else dict(axes)
    recorded.update((PART_AXES[kind], part) for kind, part in declaration.parts().items())
    if state is not None:
        recorded[STATE_AXIS], recorded[ENTERED_AXIS] = state
    return Found(path, derived, Facts(KIND, recorded), address, None)


def inputs_digest(root: Path, declaration: Declaration, limit: int) -> str | Failure | None:
    """The digest of every declared input's contents (a missing one recorded as missing);
    None without inputs. An input leading outside the workspace, or unreadable, is a
    `Failure`: what the command read cannot be told."""
    if not declaration.inputs:
        return None
    contents: dict[str, str | None] = {}
    for rel in declaration.inputs:
        try:
            contents[rel] = digest_bytes(read_inside(root, rel, limit=limit))
        except FileNotFoundError:
            contents[rel] = None
        except NotInside as error:
            return Failure(
                Reason.UNEVALUABLE,
                error.code,
                f"anchor:{declaration.name}: input {rel}: {error}",
            )
        except OSError as error:
            return Failure(
                Reason.UNREACHABLE,
                "io_error",
                f"anchor:{declaration.name}: input {rel}: {error.strerror or error}",
            )
    return digest_json(contents)
