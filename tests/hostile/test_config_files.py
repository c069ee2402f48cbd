"""A `moor.toml` / `pyproject.toml` that is not UTF-8, not TOML or of the wrong types is a
message naming the file, the line and the problem, with exit 2 — never a traceback."""

from __future__ import annotations

import pytest

from tests.conftest import Workspace
from tests.hostile.common import bound_handler

CASES = [
    ("moor.toml", b'memory_roots = ["memories"]\nignore = ["\xff"]\n', "moor.toml:2: not UTF-8"),
    ("moor.toml", b'x = 1\nmemory_roots = ["a" "b"]\n', "moor.toml:2:21: not valid TOML"),
    ("moor.toml", b'\nmax_file_size = "big"\n', "moor.toml:2: max_file_size must be"),
    ("moor.toml", b'memory_roots = ["memories"]\nignore = [3]\n', "moor.toml:2: ignore must be"),
    ("moor.toml", b"memory_roots = []\n", "moor.toml:1: memory_roots must name"),
    ("moor.toml", b'memory_roots = ["mem\\u0000"]\n', "moor.toml:1: memory_roots entry"),
    ("moor.toml", b"max_file_size = 99999999999999999999\n", "moor.toml:1: max_file_size"),
    ("pyproject.toml", b"[tool]\nmoor = 3\n", "pyproject.toml:2: tool.moor must be a table"),
    ("pyproject.toml", b"[tool.moor]\n\xfe = 1\n", "pyproject.toml:2: not UTF-8"),
    (
        "pyproject.toml",
        b"[tool.moor]\nmemory_roots = 7\n",
        "pyproject.toml [tool.moor]:2: memory_roots must be",
    ),
]


@pytest.mark.parametrize(("name", "data", "says"), CASES, ids=[c[2] for c in CASES])
def test_a_bad_config_file_is_a_message_with_file_line_and_problem_and_exit_2(
    ws: Workspace, name: str, data: bytes, says: str
) -> None:
    bound_handler(ws)
    if name == "pyproject.toml":
        (ws.root / "moor.toml").unlink()
    ws.write_bytes(name, data)
    for command in ("check", "bind"):
        run = ws.moor(command)
        assert run.code == 2, (command, run.out, run.err)
        assert says in run.err, run.err
        assert "internal error" not in run.err and "Traceback" not in run.err
    # Control: the same workspace with a good configuration checks cleanly.
    good = b'memory_roots = ["memories"]\n' if name == "moor.toml" else b"[tool.moor]\n"
    ws.write_bytes(name, good)
    assert ws.moor("check").code == 0
