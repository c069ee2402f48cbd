"""`[anchors.NAME]` in `moor.toml`: each custom anchor's declaration, checked whole.

A declaration is refused with the key at fault (`DeclarationError`, turned into the
configuration's own refusal with its line by `workspace/config.py`), never half-used: a
command given as one string would be a shell line, a timeout without a unit is ambiguous,
and a cap of zero refuses everything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal

from moor_extractors.digest import digest_json

FactsKind = Literal["lines", "json"]

DEFAULT_TIMEOUT_S: Final = 30.0
DEFAULT_OUTPUT_CAP: Final = 1024 * 1024
MAX_TIMEOUT_S: Final = 3600.0
MAX_OUTPUT_CAP: Final = 64 * 1024 * 1024
MAX_STREAK: Final = 100
DEFAULT_EVERY_S: Final = 300.0
MIN_EVERY_S: Final = 10.0
MAX_EVERY_S: Final = 24 * 3600.0
_KEYS: Final = frozenset(
    {
        "command",
        "timeout",
        "every",
        "output_cap",
        "facts",
        "env",
        "streak",
        "inputs",
        "rule",
        "terminal",
    }
)
_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]+")
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DURATION: Final = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_SIZE: Final = re.compile(r"(\d+)(B|KiB|MiB|GiB|KB|MB|GB)?")
_SECONDS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_BYTES: Final = {
    None: 1,
    "B": 1,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "KB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
}


class DeclarationError(ValueError):
    """A declaration cannot be used as written; `key` is the key at fault, for its line."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(problem)
        self.key = key


@dataclass(frozen=True)
class Rule:
    when: str
    to: str


@dataclass(frozen=True)
class Declaration:
    name: str
    command: tuple[str, ...]
    timeout_s: float = DEFAULT_TIMEOUT_S
    output_cap: int = DEFAULT_OUTPUT_CAP
    facts: FactsKind = "lines"
    env: tuple[str, ...] = ()  # host variables passed through: they make it `open`
    streak: int = 1
    inputs: tuple[str, ...] = ()  # workspace files whose contents the output depends on
    rules: tuple[Rule, ...] = ()
    terminal: tuple[str, ...] = field(default=())
    # How often the language server observes it (`anchors.cadence`); not in `digest`: when
    # it is looked at does not change what it is.
    every_s: float = DEFAULT_EVERY_S

    @property
    def reproducibility(self) -> str:
        """`closed` when everything that can change the output is hashed (argv, the
        declared inputs); `open` when it reads the host's environment."""
        return "open" if self.env else "closed"

    def digest(self) -> str:
        """What the declaration is, hashed: a change of it is not a change of the facts."""
        return digest_json({**self._probe(), **self._rules(), **self._terminal()})

    def parts(self) -> dict[str, str]:
        """The declaration hashed per kind `moor revise` names (probe, rules, terminal), so
        a revise can be checked against what changed (memory:
        revising-an-anchor-says-what-and-why)."""
        return {
            "probe": digest_json(self._probe()),
            "rules": digest_json(self._rules()),
            "terminal": digest_json(self._terminal()),
        }

    def _probe(self) -> dict[str, object]:
        return {
            "command": list(self.command),
            "facts": self.facts,
            "env": list(self.env),
            "inputs": list(self.inputs),
        }

    def _rules(self) -> dict[str, object]:
        return {"rules": [[r.when, r.to] for r in self.rules]}

    def _terminal(self) -> dict[str, object]:
        return {"terminal": list(self.terminal)}


def parse_declarations(raw: object) -> dict[str, Declaration]:
    """Every `[anchors.NAME]` table; raises `DeclarationError` for the first bad one."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise DeclarationError("anchors", "anchors must be tables: [anchors.NAME]")
    return {str(name): _declaration(name, table) for name, table in sorted(raw.items())}


def _declaration(name: object, table: object) -> Declaration:
    where = f"[anchors.{name}]"
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise DeclarationError(
            "anchors", f"{where}: an anchor's name is letters, digits, `_`, `-` and `.`"
        )
    if not isinstance(table, dict):
        raise DeclarationError(name, f"{where} must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise DeclarationError(
            unknown[0],
            f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}",
        )
    command = table.get("command")
    if isinstance(command, str):
        raise DeclarationError(
            "command",
            f"{where}: command must be a list of arguments (argv), never a shell line: "
            f"write {command.split()!r}",
        )
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(arg, str) for arg in command)
        or not command[0]
        or any("\0" in arg for arg in command)
    ):
        raise DeclarationError(
            "command", f"{where}: command must be a non-empty list of strings (argv)"
        )
    facts = table.get("facts", "lines")
    if facts not in ("lines", "json"):
        raise DeclarationError("facts", f'{where}: facts must be "lines" or "json"')
    streak = table.get("streak", 1)
    if isinstance(streak, bool) or not isinstance(streak, int) or not 1 <= streak <= MAX_STREAK:
        raise DeclarationError("streak", f"{where}: streak must be a whole number 1..{MAX_STREAK}")
    env = _strings(table.get("env", []), where, "env")
    for variable in env:
        if not _ENV_NAME.fullmatch(variable) or variable in ("PATH", "LC_ALL"):
            raise DeclarationError(
                "env",
                f"{where}: env entry {variable!r} must be a variable's name (PATH and LC_ALL "
                "are fixed by moor)",
            )
    inputs = _strings(table.get("inputs", []), where, "inputs")
    for path in inputs:
        if not path or path.startswith("/") or ".." in path.split("/") or "\0" in path:
            raise DeclarationError(
                "inputs", f"{where}: inputs entry {path!r} must be a workspace file"
            )
    return Declaration(
        name=name,
        command=tuple(command),
        timeout_s=_duration(table.get("timeout"), where),
        every_s=_every(table.get("every"), where),
        output_cap=_size(table.get("output_cap"), where),
        facts="json" if facts == "json" else "lines",
        env=tuple(env),
        streak=streak,
        inputs=tuple(inputs),
        rules=_rules(table.get("rule", []), where),
        terminal=tuple(_strings(table.get("terminal", []), where, "terminal")),
    )


def _strings(value: object, where: str, key: str) -> list[str]:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise DeclarationError(key, f"{where}: {key} must be a list of strings")


def _duration(value: object, where: str) -> float:
    if value is None:
        return DEFAULT_TIMEOUT_S
    found = _DURATION.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        raise DeclarationError(
            "timeout", f'{where}: timeout must be a duration with its unit, such as "30s"'
        )
    seconds = float(found.group(1)) * _SECONDS[found.group(2)]
    if not 0 < seconds <= MAX_TIMEOUT_S:
        raise DeclarationError(
            "timeout", f"{where}: timeout must be more than 0 and at most {MAX_TIMEOUT_S:.0f}s"
        )
    return seconds


def _every(value: object, where: str) -> float:
    if value is None:
        return DEFAULT_EVERY_S
    found = _DURATION.fullmatch(value) if isinstance(value, str) else None
    seconds = float(found.group(1)) * _SECONDS[found.group(2)] if found else 0.0
    if not MIN_EVERY_S <= seconds <= MAX_EVERY_S:
        raise DeclarationError(
            "every",
            f'{where}: every must be a duration with its unit from "{MIN_EVERY_S:.0f}s" to '
            f'"{MAX_EVERY_S / 3600:.0f}h", such as "5m"',
        )
    return seconds


def _size(value: object, where: str) -> int:
    if value is None:
        return DEFAULT_OUTPUT_CAP
    found = _SIZE.fullmatch(value) if isinstance(value, str) else None
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif found is not None:
        size = int(found.group(1)) * _BYTES[found.group(2)]
    else:
        raise DeclarationError(
            "output_cap", f'{where}: output_cap must be a size such as "1MiB" or a byte count'
        )
    if not 0 < size <= MAX_OUTPUT_CAP:
        raise DeclarationError(
            "output_cap", f"{where}: output_cap must be more than 0 and at most 64MiB"
        )
    return size


def _rules(value: object, where: str) -> tuple[Rule, ...]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise DeclarationError("rule", f"{where}: rules must be [[anchors.NAME.rule]] tables")
    rules = []
    for item in value:
        if set(item) != {"when", "to"} or not all(isinstance(v, str) for v in item.values()):
            raise DeclarationError(
                "rule", f"{where}: each rule has exactly `when` and `to` strings"
            )
        rules.append(Rule(item["when"], item["to"]))
    return tuple(rules)
