"""`moor check --format sarif` is a SARIF 2.1.0 log code scanning accepts: every object moor
writes has the properties the SARIF 2.1.0 schema requires, only properties it defines, and
values of its types and enumerations (the parts of the schema moor uses, transcribed)."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.cli.test_lifecycle import CLIENT_CHANGED, setup_retry
from tests.conftest import Workspace

Schema = dict[str, Any]

MESSAGE: Schema = {
    "type": "object",
    "required": ["text"],  # the schema: text or id; code scanning shows text
    "properties": {"text": {"type": "string", "minLength": 1}},
}
REGION: Schema = {
    "type": "object",
    "properties": {
        "startLine": {"type": "integer", "minimum": 1},
        "startColumn": {"type": "integer", "minimum": 1},
        "endLine": {"type": "integer", "minimum": 1},
        "endColumn": {"type": "integer", "minimum": 1},
    },
}
LOCATION: Schema = {
    "type": "object",
    "properties": {
        "physicalLocation": {
            "type": "object",
            "required": ["artifactLocation"],
            "properties": {
                "artifactLocation": {
                    "type": "object",
                    "required": ["uri"],
                    # relative to the repository: code scanning resolves it there
                    "properties": {"uri": {"type": "string", "pattern": r"^[^/\\][^:]*$"}},
                },
                "region": REGION,
            },
        }
    },
}
LEVEL: Schema = {"type": "string", "enum": ["none", "note", "warning", "error"]}
RESULT: Schema = {
    "type": "object",
    "required": ["message"],
    "properties": {
        "ruleId": {"type": "string", "minLength": 1},
        "level": LEVEL,
        "message": MESSAGE,
        "locations": {"type": "array", "minItems": 1, "items": LOCATION},
    },
}
RULE: Schema = {
    "type": "object",
    "required": ["id"],
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "name": {"type": "string"},
        "shortDescription": MESSAGE,
        "defaultConfiguration": {"type": "object", "properties": {"level": LEVEL}},
    },
}
SARIF_2_1_0: Schema = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "pattern": r"^https://.*sarif.*2\.1\.0.*\.json$"},
        "version": {"type": "string", "enum": ["2.1.0"]},
        "runs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["tool"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string", "minLength": 1},
                                    "version": {"type": "string"},
                                    "rules": {"type": "array", "items": RULE},
                                },
                            }
                        },
                    },
                    "results": {"type": "array", "items": RESULT},
                },
            },
        },
    },
}
TYPES = {"object": dict, "array": list, "string": str, "integer": int}


def violations(value: object, schema: Schema, where: str = "$") -> list[str]:
    """Where `value` breaks `schema` (objects take no property the schema does not name,
    as SARIF's own schema says of the objects moor writes)."""
    kind = TYPES[schema["type"]]
    if not isinstance(value, kind) or isinstance(value, bool):
        return [f"{where}: not {schema['type']}"]
    found: list[str] = []
    if isinstance(value, dict):
        properties: Schema = schema.get("properties", {})
        found += [
            f"{where}: {key} is required" for key in schema.get("required", ()) if key not in value
        ]
        found += [
            f"{where}.{key}: not a SARIF property here" for key in value if key not in properties
        ]
        for key, inner in properties.items():
            if key in value:
                found += violations(value[key], inner, f"{where}.{key}")
    elif isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            found.append(f"{where}: fewer than {schema['minItems']} items")
        for index, item in enumerate(value):
            found += violations(item, schema["items"], f"{where}[{index}]")
    elif isinstance(value, str):
        if "enum" in schema and value not in schema["enum"]:
            found.append(f"{where}: {value!r} is not one of {schema['enum']}")
        if len(value) < schema.get("minLength", 0):
            found.append(f"{where}: empty")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            found.append(f"{where}: {value!r} does not match {schema['pattern']}")
    elif isinstance(value, int) and value < schema.get("minimum", value):
        found.append(f"{where}: {value} is below {schema['minimum']}")
    return found


def test_check_sarif_is_a_valid_sarif_2_1_0_log_with_every_rule_it_cites(ws: Workspace) -> None:
    setup_retry(ws)
    ws.write("src/net/client.py", CLIENT_CHANGED)
    ws.memory("nowhere", "src/net/gone.py#nothing")

    run = ws.moor("check", "--format", "sarif")

    assert run.code == 1
    log = json.loads(run.out)
    assert violations(log, SARIF_2_1_0) == []
    driver = log["runs"][0]["tool"]["driver"]
    results = log["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"moor/drifted", "moor/gone"}
    assert {r["ruleId"] for r in results} <= {rule["id"] for rule in driver["rules"]}


def test_the_sarif_check_rejects_what_sarif_does_not_allow() -> None:
    good = {
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "moor"}}, "results": []}],
    }
    assert violations(good, SARIF_2_1_0) == []
    bad = {
        "version": "2.0.0",
        "runs": [
            {
                "tool": {"driver": {}},
                "results": [
                    {
                        "level": "fatal",
                        "message": {"text": "x"},
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": "/abs/path.md"},
                                    "region": {"startLine": 0},
                                }
                            }
                        ],
                        "severity": "high",
                    }
                ],
            }
        ],
    }
    assert violations(bad, SARIF_2_1_0) == [
        "$.version: '2.0.0' is not one of ['2.1.0']",
        "$.runs[0].tool.driver: name is required",
        "$.runs[0].results[0].severity: not a SARIF property here",
        "$.runs[0].results[0].level: 'fatal' is not one of ['none', 'note', 'warning', 'error']",
        "$.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri: "
        "'/abs/path.md' does not match ^[^/\\\\][^:]*$",
        "$.runs[0].results[0].locations[0].physicalLocation.region.startLine: 0 is below 1",
    ]
