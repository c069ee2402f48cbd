"""The server's settings (section `moor`): plain data, validated by hand.

```json
{"severity": {"drifted": "error", "unbound": "off"}, "trusted": false}
```

* `severity` maps a trust state (docs/memories.md, *Trust states*) to `error`, `warning`,
  `information`, `hint` or `off` (no diagnostic at all); `default` — what the VS Code client
  sends for a setting left alone — keeps the built-in severity.
* `trusted` (default true): false makes the server read-only (no reaffirm, follow, bind;
  checks are not recorded). Taken only from `initializationOptions`: workspace settings
  could be written by the untrusted workspace itself. A value that is not a boolean reads
  as false. Said explicitly, it is also the editor's word on running the workspace's
  declared anchor commands (`said_trusted`): true runs them, false never; left out, moor
  decides as the CLI does (`MOOR_TRUST=1`, `moor trust`), never from the workspace.

Settings come in layers, later wins: the defaults < `workspace/configuration` <
`initializationOptions`. A layer is read leniently: a bad value is reported (by its key
and value) and only that key is ignored (it falls back to the layers below, in the end
the default); other keys in the section (`python`, `server`,
`trace`, … of the VS Code client) are not the server's business and are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from moor_engine.grounding.severity import LEVELS as SEVERITY_LEVELS
from moor_engine.grounding.severity import SETTABLE, SEVERITY

# The states a person may set, and what each keeps when left alone: the engine's one table.
STATES = tuple(state.value for state in SETTABLE)
LEVELS = (*SEVERITY_LEVELS, "off")
KEEP = "default"
DEFAULT_SEVERITY: Mapping[str, str] = MappingProxyType(
    {state.value: SEVERITY[state] for state in SETTABLE}
)


@dataclass(frozen=True)
class Layer:
    """What one source says; absent keys say nothing."""

    severity: Mapping[str, str] = field(default_factory=dict)
    trusted: bool | None = None


@dataclass(frozen=True)
class Settings:
    """The settings in effect."""

    severity: Mapping[str, str] = field(default_factory=lambda: DEFAULT_SEVERITY)
    trusted: bool = True
    # `trusted` as the client said it (None: not said): the word on declared commands.
    said_trusted: bool | None = None

    def level(self, state: str) -> str | None:
        """`error` … `off` for a configurable state, None for any other (e.g. `retired`)."""
        return self.severity.get(state)

    @classmethod
    def merge(cls, *layers: Layer) -> Settings:
        severity = dict(DEFAULT_SEVERITY)
        said: bool | None = None
        for layer in layers:
            severity.update(layer.severity)
            if layer.trusted is not None:
                said = layer.trusted
        return cls(MappingProxyType(severity), True if said is None else said, said)


TRUST_SOURCE = "initializationOptions"


def read_layer(raw: object, source: str) -> tuple[Layer, list[str]]:
    """One source's settings and a message for each value that was ignored."""
    if raw is None:
        return Layer(), []
    if not isinstance(raw, Mapping):
        return Layer(), [f"moor settings ({source}): expected an object, got {raw!r}; ignored"]
    problems: list[str] = []
    severity: dict[str, str] = {}
    raw_severity = raw.get("severity")
    if isinstance(raw_severity, Mapping):
        for state, level in raw_severity.items():
            key = f"severity.{state}"
            if state not in STATES:
                problems.append(
                    f"moor settings ({source}): `{key}` = {level!r}: unknown state "
                    f"{state!r} (expected one of {', '.join(STATES)}); ignored"
                )
            elif level == KEEP:
                continue
            elif not isinstance(level, str) or level not in LEVELS:
                problems.append(
                    f"moor settings ({source}): `{key}` = {level!r} is not one of "
                    f"{', '.join(LEVELS)}; ignored (the default is {DEFAULT_SEVERITY[state]})"
                )
            else:
                severity[state] = level
    elif raw_severity is not None:
        problems.append(
            f"moor settings ({source}): `severity` = {raw_severity!r} is not an object "
            "mapping trust states to severities; ignored"
        )
    trusted = raw.get("trusted")
    if trusted is not None and source != TRUST_SOURCE:
        # Workspace settings can be written by the workspace itself: trust comes only from
        # the client's own word at start-up (VS Code's workspace trust).
        problems.append(
            f"moor settings ({source}): `trusted` is taken only from the client's "
            f"{TRUST_SOURCE}; ignored"
        )
        trusted = None
    elif trusted is not None and not isinstance(trusted, bool):
        problems.append(
            f"moor settings ({source}): `trusted` = {trusted!r} is not true or false; "
            "treated as false (read-only), the safe reading"
        )
        trusted = False
    return Layer(severity, trusted), problems
