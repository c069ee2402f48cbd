"""The severity each trust state gets is one table (`moor_engine.grounding.severity`): the
language server's built-in severities and default settings come from it, and the VS Code
client's settings (`vscode-client/package.json`: one `moor.severity.STATE` per settable
state, its levels, the default each names) are checked against it here, so they cannot
disagree."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from lsprotocol import types
from moor_engine.grounding.severity import LEVELS, SETTABLE, SEVERITY
from moor_engine.grounding.trust import State
from moor_lsp.features.diagnostics import severity
from moor_lsp.settings import DEFAULT_SEVERITY, Settings

MANIFEST = Path(__file__).resolve().parents[2] / "vscode-client/package.json"
PREFIX = "moor.severity."


def disagreements(manifest: dict[str, Any]) -> list[str]:
    """Every way the client's severity settings differ from the engine's table."""
    properties = manifest["contributes"]["configuration"]["properties"]
    found: list[str] = []
    named = {key.removeprefix(PREFIX) for key in properties if key.startswith(PREFIX)}
    settable = {state.value for state in SETTABLE}
    if named != settable:
        found.append(f"settings for {sorted(named)}, settable states {sorted(settable)}")
    for state in SETTABLE:
        setting = properties.get(PREFIX + state.value)
        if setting is None:
            continue
        where = PREFIX + state.value
        if setting["enum"] != ["default", *LEVELS, "off"]:
            found.append(f"{where}: levels {setting['enum']}")
        if setting["default"] != "default":
            found.append(f"{where}: its default is {setting['default']!r}, not the server's")
        level = SEVERITY[state]
        said = re.findall(r"server default \((\w+)\)", setting["markdownDescription"])
        if said != [level]:
            found.append(f"{where}: describes the server default as {said}, it is {level}")
        if setting["enumDescriptions"][0] != f"server default ({level})":
            found.append(f"{where}: names the default {setting['enumDescriptions'][0]!r}")
    return found


def test_the_vscode_clients_severity_settings_are_the_engines_table() -> None:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    assert disagreements(manifest) == []
    # The control: a client that says another default, or forgets a state, is caught.
    planted = copy.deepcopy(manifest)
    properties = planted["contributes"]["configuration"]["properties"]
    drifted = properties[PREFIX + "drifted"]
    drifted["markdownDescription"] = drifted["markdownDescription"].replace(
        "server default (warning)", "server default (error)"
    )
    del properties[PREFIX + "ungrounded"]
    assert len(disagreements(planted)) == 2


def test_the_servers_defaults_and_built_in_severities_are_the_engines_table() -> None:
    defaults = Settings()
    for state in State:
        level = SEVERITY.get(state)
        built_in = severity(defaults, state) if level is not None else None
        assert built_in == (None if level is None else types.DiagnosticSeverity[level.title()])
    assert {state.value: SEVERITY[state] for state in SETTABLE} == DEFAULT_SEVERITY
    # Not every state is settable: `retired` keeps its own, `current` has none.
    assert State.RETIRED in SEVERITY and State.RETIRED not in SETTABLE
    assert State.CURRENT not in SEVERITY
