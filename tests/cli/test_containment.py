"""Memory files and moor's own files are inside the workspace, or refused (issue 9.6). Each
hostile layout has a control: the same layout kept inside the workspace is read as usual."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from tests.conftest import Workspace

SECRET = "TOP-SECRET-VALUE-7f3a"
MEMORY = "---\nabout: app.py#f\n---\n# f\n\n" + SECRET + "\n"


def _secret_anywhere(ws: Workspace) -> bool:
    for path in [ws.root / "moor.lock", *(ws.root / ".moor").glob("*")]:
        if path.is_file() and SECRET.encode() in path.read_bytes():
            return True
    return False


def test_a_memory_linked_to_a_file_outside_is_refused_and_never_copied(
    ws: Workspace, tmp_path: Path
) -> None:
    ws.write("app.py", "def f(x):\n    return x + 1\n")
    outside = tmp_path / "outside.md"
    outside.write_text(MEMORY, encoding="utf-8")
    os.symlink(outside, ws.root / "memories/leak.md")
    (ws.root / "notes").mkdir()
    (ws.root / "notes/inside.md").write_text(MEMORY, encoding="utf-8")
    os.symlink("../notes/inside.md", ws.root / "memories/ok.md")  # control: a link inside
    ws.moor("bind")
    states = ws.states()
    assert states["memories/ok.md"]["state"] == "current"
    assert _secret_anywhere(ws)  # control: a memory that is read does reach the journal
    leak = states["memories/leak.md"]
    assert (leak["state"], leak["code"]) == ("invalid", "outside_workspace")
    os.unlink(ws.root / "memories/ok.md")
    for path in (ws.root / ".moor").glob("journal.sqlite*"):
        path.unlink()
    ws.moor("bind")
    ws.moor("check")
    assert not _secret_anywhere(ws)
    assert "memories/leak.md" not in ws.read("moor.lock")


def test_a_memory_root_linked_outside_is_refused(ws: Workspace, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.md").write_text(MEMORY, encoding="utf-8")
    (ws.root / "memories").rmdir()
    os.symlink(outside, ws.root / "memories")
    ws.write("app.py", "def f(x):\n    return x + 1\n")
    ws.moor("bind")
    state = ws.states()["memories/x.md"]
    assert (state["state"], state["code"]) == ("invalid", "outside_workspace")
    assert not _secret_anywhere(ws)


def test_a_state_folder_linked_outside_is_never_written(ws: Workspace, tmp_path: Path) -> None:
    ws.write("app.py", "def f(x):\n    return x + 1\n")
    ws.write("memories/f.md", MEMORY)
    outside = tmp_path / "their-state"
    outside.mkdir()
    (outside / "journal.sqlite").write_bytes(b"another program's database")
    os.symlink(outside, ws.root / ".moor")
    run = ws.moor("bind")
    assert run.code == 2 or "was not opened" in run.err or "outside" in run.err, run.err
    assert sorted(p.name for p in outside.iterdir()) == ["journal.sqlite"]
    assert (outside / "journal.sqlite").read_bytes() == b"another program's database"
    os.unlink(ws.root / ".moor")
    ws.moor("bind", check=True)  # control: with its own .moor the same bind writes a journal
    assert (ws.root / ".moor/journal.sqlite").stat().st_size > 0


def test_a_lock_file_linked_outside_is_not_read(ws: Workspace, tmp_path: Path) -> None:
    outside = tmp_path / "private.toml"
    outside.write_text('[secret]\napi_key = "' + SECRET + '"\n', encoding="utf-8")
    os.symlink(outside, ws.root / "moor.lock")
    run = ws.moor("check")
    assert run.code == 2
    assert "moor.lock was not read" in run.err and "outside" in run.err
    assert SECRET not in run.err + run.out and "api_key" not in run.err + run.out


def test_a_memory_that_is_a_fifo_is_refused_at_once(ws: Workspace) -> None:
    ws.write("app.py", "def f(x):\n    return x + 1\n")
    ws.write("memories/f.md", MEMORY)  # control: a regular memory beside it is checked
    os.mkfifo(ws.root / "memories/pipe.md")
    started = time.monotonic()
    ws.moor("bind")
    states = ws.states()
    assert time.monotonic() - started < 60
    assert (states["memories/pipe.md"]["state"], states["memories/pipe.md"]["code"]) == (
        "invalid",
        "not_a_file",
    )
    assert states["memories/f.md"]["state"] == "current"


def test_code_that_is_a_fifo_is_unverified_without_hanging(ws: Workspace) -> None:
    ws.write("app.py", "def f(x):\n    return x + 1\n")
    ws.write("memories/f.md", MEMORY)
    ws.moor("bind", check=True)
    os.unlink(ws.root / "app.py")
    os.mkfifo(ws.root / "app.py")
    anchor = ws.anchor("memories/f.md")
    assert (anchor["state"], anchor["code"]) == ("unverified", "not_a_file")


SWAP = textwrap.dedent(
    """
    import os, sys
    root, target = sys.argv[1], sys.argv[2]
    link, real, tmp = root + "/app.py", root + "/real.py", root + "/.swap"
    for _ in range(int(sys.argv[3])):
        os.symlink(target, tmp); os.replace(tmp, link)
        os.symlink("real.py", tmp); os.replace(tmp, link)
    """
)


def test_a_link_swapped_while_checking_never_seals_an_outside_file(
    ws: Workspace, tmp_path: Path
) -> None:
    body = "def f(x):\n    return x + 1\n"
    ws.write("real.py", body)
    outside = tmp_path / "outside.py"
    outside.write_text(f"def f(x):\n    return '{SECRET}'\n", encoding="utf-8")
    os.symlink("real.py", ws.root / "app.py")
    ws.write("memories/f.md", MEMORY.replace(SECRET, "no secret here"))
    ws.moor("bind", check=True)
    swapper = subprocess.Popen([sys.executable, "-c", SWAP, str(ws.root), str(outside), "30000"])
    seen: list[str] = []

    def check_repeatedly() -> None:
        while swapper.poll() is None:
            ws.write("real.py", body + f"# {time.monotonic()}\n")  # always something to read
            ws.moor("reaffirm", "memories/f.md", "--why", "racing")  # seals what it read
            seen.extend(str(a["code"]) for a in ws.states()["memories/f.md"]["anchors"])

    worker = threading.Thread(target=check_repeatedly)
    worker.start()
    swapper.wait(timeout=300)
    worker.join(timeout=300)
    assert not _secret_anywhere(ws)
    assert len(seen) >= 3, seen  # control: writers really ran while the link was swapped


def test_a_config_linked_outside_is_refused_before_it_is_read(
    ws: Workspace, tmp_path: Path
) -> None:
    outside = tmp_path / "their.toml"
    outside.write_text(f'[{SECRET}]\nmemory_roots = ["memories"]\n', encoding="utf-8")
    (ws.root / "moor.toml").unlink()
    (ws.root / "inside.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    os.symlink("inside.toml", ws.root / "moor.toml")  # control: a link inside is read
    assert ws.moor("check").code == 0
    (ws.root / "moor.toml").unlink()
    os.symlink(outside, ws.root / "moor.toml")
    run = ws.moor("check")
    assert run.code == 2
    assert "moor.toml: not read" in run.err and "outside" in run.err
    assert SECRET not in run.out + run.err
