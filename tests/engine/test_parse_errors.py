"""A syntax error elsewhere in a file is not a move: what error recovery made of the code
is believed only when it is exactly the bound code (issue 9, item 8)."""

from __future__ import annotations

import sqlite3

from tests.conftest import Workspace


def journal_kinds(ws: Workspace) -> list[str]:
    with sqlite3.connect(ws.root / ".moor/journal.sqlite") as db:
        return [row[0] for row in db.execute("SELECT kind FROM journal ORDER BY seq")]


A = (
    "def a(items):\n    total = 0\n    for item in items:\n        total += item\n"
    "    return total\n"
)
B = "\n\ndef b(value):\n    return value * 2\n"
# `{1:` never closed: tree-sitter's error recovery swallows `b` whole.
BROKEN_A = A.replace("total = 0", "total = {1:")


def bound_b(ws: Workspace, *, copy_elsewhere: bool = True) -> None:
    ws.write("app/calc.py", A + B)
    if copy_elsewhere:
        ws.write("app/other.py", "def b(value):\n    return value * 3\n")
    ws.memory("b", "app/calc.py#b")
    ws.moor("bind", check=True)


def test_an_unclosed_bracket_in_another_function_leaves_the_bound_one_unverified_never_moved(
    ws: Workspace,
) -> None:
    bound_b(ws)
    ws.write("app/calc.py", BROKEN_A + B)
    anchor = ws.anchor("memories/b.md")
    assert anchor["state"] == "unverified"
    assert anchor["code"] == "parse_error_near_symbol"
    assert "line 2" in str(anchor["detail"])
    assert "moved_to" not in anchor or not anchor["moved_to"]
    # `follow` has nowhere to go: the memory keeps naming app/calc.py#b.
    ws.moor("follow", "memories/b.md")
    assert "app/calc.py#b" in ws.read("memories/b.md")
    assert "app/other.py" not in ws.read("memories/b.md")
    # Nothing moved in the journal either: fixing the typo brings back `current`.
    ws.write("app/calc.py", A + B)
    assert ws.state("memories/b.md") == "current"
    assert "transition" not in journal_kinds(ws) and "attempt" in journal_kinds(ws)
    # Control: the same file really losing `b` (no syntax error) is a move to the copy.
    ws.write("app/calc.py", A)
    anchor = ws.anchor("memories/b.md")
    assert anchor["state"] == "moved"
    assert anchor["moved_to"] == "app/other.py#b"
    assert "transition" in journal_kinds(ws)


def test_a_symbol_missing_from_a_file_that_does_not_parse_is_unverified_not_gone(
    ws: Workspace,
) -> None:
    bound_b(ws, copy_elsewhere=False)
    ws.write("app/calc.py", BROKEN_A + B)
    assert ws.anchor("memories/b.md")["code"] == "parse_error_near_symbol"
    # Control: without the syntax error, a vanished `b` is gone.
    ws.write("app/calc.py", A)
    assert ws.anchor("memories/b.md")["state"] == "gone"


def test_changed_code_after_a_syntax_error_is_unverified_and_before_one_is_drifted(
    ws: Workspace,
) -> None:
    bound_b(ws)
    changed_b = B.replace("value * 2", "value * 4")
    # `foo(1,` leaves `b` listed, but what recovery made of it cannot be trusted.
    ws.write("app/calc.py", A.replace("total = 0", "total = foo(1,") + changed_b)
    assert ws.anchor("memories/b.md")["code"] == "parse_error_near_symbol"
    # Control: the same change with the error after `b` is drift, as without any error.
    ws.write("app/calc.py", A + changed_b + "\n\ndef c():\n    return {1:\n")
    anchor = ws.anchor("memories/b.md")
    assert anchor["state"] == "drifted"
    assert anchor["axes"] == ["body"]


def test_unchanged_code_after_a_syntax_error_is_still_current(ws: Workspace) -> None:
    bound_b(ws)
    ws.write("app/calc.py", A.replace("total = 0", "total = foo(1,") + B)
    assert ws.anchor("memories/b.md")["state"] == "current"
    # Control: a real change to `b` after the same error is not believed current.
    ws.write("app/calc.py", A.replace("total = 0", "total = foo(1,") + B.replace("2", "5"))
    assert ws.anchor("memories/b.md")["state"] == "unverified"


def test_code_is_not_followed_into_a_file_whose_syntax_error_may_reach_it(ws: Workspace) -> None:
    bound_b(ws, copy_elsewhere=False)
    # `b` leaves calc.py for other.py, where a syntax error comes before it.
    # (`foo(1,` leaves `b` listed there: only what recovery made of it is in doubt.)
    ws.write("app/other.py", A.replace("total = 0", "total = foo(1,") + B)
    ws.write("app/calc.py", A)
    anchor = ws.anchor("memories/b.md")
    assert anchor["state"] == "gone"
    assert "moved_to" not in anchor or not anchor["moved_to"]
    assert "the parser could not read app/other.py at line" in str(anchor["detail"])
    # Control: once other.py parses, the move is followed.
    ws.write("app/other.py", A + B)
    assert ws.anchor("memories/b.md")["moved_to"] == "app/other.py#b"


def test_a_python_file_with_cr_only_line_endings_parses_with_its_lines_counted(
    ws: Workspace,
) -> None:
    ws.write_bytes("app/mac.py", (A + B).replace("\n", "\r").encode())
    ws.memory("b", "app/mac.py#b")
    ws.moor("bind", check=True)
    anchor = ws.anchor("memories/b.md")
    assert anchor["state"] == "current"
    symbols = ws.moor("symbols", "app/mac.py", check=True).out
    assert "app/mac.py#b" in symbols and "app/mac.py#a" in symbols
    # Control: a real edit in the CR-only file is drift, on the body axis only.
    ws.write_bytes("app/mac.py", (A + B.replace("2", "7")).replace("\n", "\r").encode())
    anchor = ws.anchor("memories/b.md")
    assert anchor["state"] == "drifted"
    assert anchor["axes"] == ["body"]
