"""The output schemas a client validates each search result against, published in a shape
that validates faster and accepts exactly the same results.

A client of the SDK validates a tool's structured result against its output schema with
`jsonschema`: at 10,000 memories a 10-hit `memory_search` result took ~1.5 ms of the
client's CPU, a third of the call. Two things pydantic's schema spells costly are spelt
otherwise here: each `$ref` to a model of `$defs` (a registry lookup per hit, per link, per
retired memory) is replaced by the model's schema itself, and an `anyOf` whose branches are
bare types (`str | None`) by one `type` list. Neither changes what validates (the models
are not recursive); both are taken once, when the tools are listed."""

from __future__ import annotations

from typing import Any

_DEFS = "#/$defs/"


def inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every `$ref` into its `$defs` replaced by that definition, and every
    `anyOf` of bare types made one `type` list."""
    defs: dict[str, Any] = schema.get("$defs", {})
    shaped = _shape({k: v for k, v in schema.items() if k != "$defs"}, defs, ())
    assert isinstance(shaped, dict)
    return shaped


def _shape(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_shape(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS) and len(node) == 1:
        name = ref[len(_DEFS) :]
        if name in seen or name not in defs:  # recursive or unknown: left as it was
            return node
        return _shape(defs[name], defs, (*seen, name))
    shaped = {key: _shape(value, defs, seen) for key, value in node.items()}
    branches = shaped.get("anyOf")
    if isinstance(branches, list) and all(_bare_type(b) for b in branches):
        del shaped["anyOf"]
        shaped["type"] = [b["type"] for b in branches]
    return shaped


def _bare_type(branch: object) -> bool:
    return isinstance(branch, dict) and set(branch) == {"type"} and isinstance(branch["type"], str)
