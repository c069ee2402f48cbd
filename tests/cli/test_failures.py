"""Probe failures are attempts, never drift; references leaving the workspace are refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import Workspace

CODE = "def handler(event):\n    return event['id']\n"
CHANGED = "def handler(event):\n    return event['key']\n"


def bound_handler(ws: Workspace) -> None:
    ws.write("app/handler.py", CODE)
    ws.memory("handler", "app/handler.py#handler")
    ws.moor("bind", check=True)


def assert_drift_detectable(ws: Workspace) -> None:
    """Positive control: the same setup reports drift when the code really changes."""
    ws.write("app/handler.py", CHANGED)
    assert ws.state("memories/handler.md") == "drifted"


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        ("invalid_utf8", "invalid_utf8"),
        ("directory", "not_a_file"),
        ("too_large", "too_large"),
        ("binary", "binary"),
    ],
)
def test_an_unobservable_file_is_unverified_with_its_code_never_drifted(
    ws: Workspace, damage: str, code: str
) -> None:
    bound_handler(ws)
    target = ws.root / "app/handler.py"
    if damage == "invalid_utf8":
        target.write_bytes(b"def handler(event):\n    return '\xff\xfe'\n")
    elif damage == "directory":
        target.unlink()
        target.mkdir()
    elif damage == "too_large":
        # The cap applies to memory files too: room for the memory, not for the code.
        ws.write("moor.toml", 'memory_roots = ["memories"]\nmax_file_size = 1000\n')
        target.write_text(CHANGED + "# padding\n" * 200, encoding="utf-8")
    elif damage == "binary":
        target.write_bytes(b"\x00\x01\x02" + CHANGED.encode())
    anchor = ws.anchor("memories/handler.md")
    assert anchor["state"] == "unverified"
    assert anchor["code"] == code
    assert ws.state("memories/handler.md") == "unverified"
    if damage == "directory":
        target.rmdir()
    if damage == "too_large":
        ws.write("moor.toml", 'memory_roots = ["memories"]\n')
    assert_drift_detectable(ws)


def test_a_symbol_in_a_file_without_a_grammar_is_unverified_no_grammar(ws: Workspace) -> None:
    ws.write("app/handler.py", CODE)
    ws.write("app/query.sql", "select 1;\n")
    ws.memory("sql", "app/query.sql#select_one")
    ws.memory("handler", "app/handler.py#handler")
    ws.moor("bind")
    anchor = ws.anchor("memories/sql.md")
    assert anchor["state"] == "unverified"
    assert anchor["code"] == "no_grammar"
    assert_drift_detectable(ws)


def test_an_unreadable_file_is_unverified_file_missing_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process, because this machine runs tests as root and root reads any file: the
    operating system's refusal is simulated at the one call that reads bytes."""
    from moor_engine.grounding.actions import bind
    from moor_engine.session import Session

    root = tmp_path / "ws"
    (root / "app").mkdir(parents=True)
    (root / "memories").mkdir()
    (root / "app/handler.py").write_text(CODE, encoding="utf-8")
    (root / "memories/handler.md").write_text(
        "---\nabout: app/handler.py#handler\n---\n# Handler\n", encoding="utf-8"
    )
    with Session.open(root) as session:
        assert not bind(session, []).refused
    (root / "app/handler.py").write_text(CHANGED, encoding="utf-8")
    with Session.open(root) as session:  # control: a readable change is drift
        assert session.check(session.select([])).memories[0].state.value == "drifted"
    real_open = os.open

    def refuse(path: str, flags: int, *args: object, **kwargs: object) -> int:
        # As a permission bit would, for a user that is not root (tests may run as root).
        if os.path.basename(path) == "handler.py":
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refuse)
    os.utime(root / "app/handler.py", ns=(1, 1))  # the stat moved: the file must be read
    with Session.open(root) as session:
        anchor = session.check(session.select([])).memories[0].anchors[0]
    assert anchor.state.value == "unverified"
    assert anchor.code == "file_missing_unreadable"


@pytest.mark.parametrize(
    "reference",
    ["../outside.py", "/etc/passwd", "link/secret.py#f"],
)
def test_a_reference_leaving_the_workspace_is_invalid_and_nothing_is_read(
    ws: Workspace, reference: str
) -> None:
    outside = ws.root.parent / "outside.py"
    outside.write_text("def f():\n    return 1\n", encoding="utf-8")
    secret = ws.root.parent / "secret"
    secret.mkdir()
    (secret / "secret.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    os.symlink(secret, ws.root / "link")
    bound_handler(ws)
    ws.memory("escape", reference)
    states = ws.states()
    escape = states["memories/escape.md"]
    assert escape["state"] == "invalid"
    anchors = escape["anchors"]
    assert isinstance(anchors, list)
    codes = {escape["code"], *(a["code"] for a in anchors)}
    assert "outside_workspace" in codes
    assert ws.moor("bind", "memories/escape.md").code == 1
    assert "memories/escape.md" not in (ws.root / "moor.lock").read_text(encoding="utf-8")
    # Control: the valid memory next to it is observed and can drift.
    assert_drift_detectable(ws)


def test_malformed_frontmatter_is_invalid_with_a_positioned_message(ws: Workspace) -> None:
    bound_handler(ws)
    ws.write("memories/broken.md", "---\nabout: [a.py\n---\n# Broken\n")
    run = ws.moor("check", "--format", "json")
    assert run.code == 1
    memories = {m["path"]: m for m in run.json()["memories"]}
    broken = memories["memories/broken.md"]
    assert broken["state"] == "invalid"
    assert broken["code"] == "yaml_syntax"
    assert memories["memories/handler.md"]["state"] == "current"
