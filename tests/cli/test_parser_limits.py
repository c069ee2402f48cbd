"""Code the parser cannot read reaches only what it can reshape (issue 23, item 1): valid
TypeScript that tree-sitter-typescript 0.23 fails on (call signatures in an object type)
blocks only its own definition, and what follows binds, drifts and goes as usual."""

from __future__ import annotations

import json

import pytest
from moor.main import main

from tests.conftest import Workspace

# Valid TypeScript (tsc compiles it); the grammar reads `number\n  <U>(…)` as an error.
CALLABLE = "type C = {\n  (): number\n  <U>(x: U): U\n}\n\n"
AFTER = "export function after(a: number): number {\n  return a + 1\n}\n\n"
REMOVED = 'export function removed(): string {\n  return "x"\n}\n'


def check(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    """Each memory's first anchor, from an in-process `moor check --format json`."""
    capsys.readouterr()
    code = main(["-C", str(ws.root), "check", "--format", "json", "--no-progress"])
    assert code in (0, 1), capsys.readouterr().err
    report = json.loads(capsys.readouterr().out)
    return {m["path"]: m["anchors"][0] for m in report["memories"]}


def test_code_after_an_object_type_the_parser_cannot_read_binds_drifts_and_goes(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    ws.write("src/store.ts", CALLABLE + AFTER + REMOVED)
    ws.memory("after", "src/store.ts#after")
    ws.memory("removed", "src/store.ts#removed")
    assert main(["-C", str(ws.root), "bind", "memories/after.md", "memories/removed.md"]) == 0
    assert check(ws, capsys)["memories/after.md"]["state"] == "current"
    # A real change after the unreadable type is drift, and a deletion is gone.
    ws.write("src/store.ts", CALLABLE + AFTER.replace("a + 1", "a + 2"))
    anchors = check(ws, capsys)
    assert anchors["memories/after.md"]["state"] == "drifted"
    assert anchors["memories/removed.md"]["state"] == "gone"
    # Control: the same code inside the type the parser could not read stays unverified,
    # and the message blames the parser, never the user's code.
    ws.memory("callable", "src/store.ts#C")
    assert main(["-C", str(ws.root), "bind", "memories/callable.md"]) == 1
    anchor = check(ws, capsys)["memories/callable.md"]
    assert anchor["state"] == "unverified"
    assert "the parser could not read C" in str(anchor["detail"])
    assert "fix it" not in str(anchor["detail"])


def test_an_unclosed_brace_still_protects_what_it_can_reshape(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    ws.write("src/store.ts", AFTER + REMOVED)
    ws.memory("removed", "src/store.ts#removed")
    assert main(["-C", str(ws.root), "bind"]) == 0
    # `{` never closed in `after`: recovery makes `removed` a function inside it.
    broken = AFTER.replace("return a + 1", "if (a) {\n  return a + 1")
    ws.write("src/store.ts", broken + REMOVED)
    anchor = check(ws, capsys)["memories/removed.md"]
    assert anchor["state"] == "unverified"
    assert anchor["code"] == "parse_error_near_symbol"
    assert "the parser could not read src/store.ts at line" in str(anchor["detail"])
    # Control: the brace closed, `removed` is current again; deleted, it is gone.
    ws.write("src/store.ts", AFTER + REMOVED)
    assert check(ws, capsys)["memories/removed.md"]["state"] == "current"
    ws.write("src/store.ts", AFTER)
    assert check(ws, capsys)["memories/removed.md"]["state"] == "gone"


def test_moor_symbols_and_check_agree_on_what_follows_code_the_parser_cannot_read(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    ws.write("src/store.ts", CALLABLE + AFTER)
    capsys.readouterr()
    assert main(["-C", str(ws.root), "symbols", "src/store.ts"]) == 0
    assert "src/store.ts#after" in capsys.readouterr().out
    ws.memory("after", "src/store.ts#after")
    assert main(["-C", str(ws.root), "bind", "memories/after.md"]) == 0
    assert check(ws, capsys)["memories/after.md"]["state"] == "current"
