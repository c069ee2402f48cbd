"""A path no file can have, or a loop of links, named to any command is refused with its code
and exit 2 — never an internal error (issue 20, item 8) — through the real `moor` process:
each refusal beside the same command given a normal path, which works."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cli.lock_holder import LockHolder
from tests.conftest import Run, Workspace

CODE = "class Client:\n    def send(self, payload):\n        return payload\n"
MEMORY = "memories/send.md"

LONG_NAME = "a" * 300  # over every file system's 255-byte name
LONG_PATH = "/".join(["abcdefgh"] * 600)  # 5,399 characters: over PATH_MAX, each name short

# Each command that takes a path, with the normal path it is given as the control.
COMMANDS = [
    (("reaffirm", "--why", "it holds"), MEMORY),
    (("diff",), MEMORY),
    (("about",), "net/client.py"),
    (("follow",), MEMORY),
    (("log",), MEMORY),
    (("status",), MEMORY),
    (("check",), MEMORY),
    (("bind",), MEMORY),
    (("symbols",), "net/client.py"),
]


def bound(ws: Workspace) -> None:
    ws.write("net/client.py", CODE)
    ws.memory("send", "net/client.py#Client.send")
    ws.moor("bind", check=True)


def moor(ws: Workspace, *args: str) -> tuple[int, str]:
    """The exit status and stderr of `moor ARGS`."""
    run = ws.moor(*args)
    return run.code, run.err


@pytest.mark.parametrize(("command", "normal"), COMMANDS, ids=[c[0][0] for c in COMMANDS])
def test_a_name_or_path_too_long_for_any_file_is_refused_and_a_normal_one_works(
    ws: Workspace, command: tuple[str, ...], normal: str
) -> None:
    bound(ws)
    lock = ws.read("moor.lock")
    for too_long, why in (
        (LONG_NAME, "a name of 300 bytes, longer than the file system allows"),
        (f"memories/{LONG_NAME}.md", "a name of 303 bytes"),
        (LONG_PATH, "bytes as a whole path, over the system's limit"),
    ):
        code, err = moor(ws, *command, too_long)
        assert code == 2, err
        assert why in err and "internal error" not in err, err
        assert len(err) < 400, err  # the path is named shortened, not echoed whole
    assert ws.read("moor.lock") == lock
    code, err = moor(ws, *command, normal)
    assert code == 0 and "internal error" not in err, err  # the control


@pytest.mark.parametrize(("command", "normal"), COMMANDS, ids=[c[0][0] for c in COMMANDS])
def test_a_loop_of_links_is_refused_and_a_link_to_a_file_works(
    ws: Workspace, command: tuple[str, ...], normal: str
) -> None:
    bound(ws)
    os.symlink("loop-b", ws.root / "loop-a")
    os.symlink("loop-a", ws.root / "loop-b")
    for looped in ("loop-a", "loop-a/x.md"):
        code, err = moor(ws, *command, looped)
        assert code == 2, err
        assert f"{looped}: a loop of symbolic links" in err and "internal error" not in err, err
    os.symlink(normal, ws.root / "link.md" if normal.endswith(".md") else ws.root / "link.py")
    code, err = moor(ws, *command, "link.md" if normal.endswith(".md") else "link.py")
    assert code == 0 and "internal error" not in err, err  # the control: a link that leads


def test_a_memory_about_a_name_too_long_is_unverified_with_its_reason_and_check_goes_on(
    ws: Workspace,
) -> None:
    bound(ws)
    ws.memory("long", [f"{LONG_NAME}.py#f", f"{LONG_PATH}.py#f"])
    states = ws.states()
    too_long, whole = states["memories/long.md"]["anchors"]
    assert (too_long["state"], too_long["code"]) == ("unverified", "path_too_long"), too_long
    assert "longer than the file system allows" in too_long["detail"]
    # A path over PATH_MAX of short names is walked name by name, as any path: not there.
    assert whole["state"] == "gone", whole
    assert states[MEMORY]["state"] == "current"  # the control: the check went on


def test_an_edit_whose_memory_is_forgotten_while_it_waits_is_refused_and_writes_nothing(
    ws: Workspace,
) -> None:
    bound(ws)
    ws.memory("other", "net/client.py#Client", body="Clients are made per request.")
    ws.moor("bind", check=True)

    def edit_while_held(memory: str, *, forget: bool) -> Run:
        shown = ws.moor("edit", memory, "--format", "json", check=True).json()
        args = ["edit", memory, "--section", "When this changes, ask", "--text", "- Still?"]
        with LockHolder(ws.root) as holder:
            editing = subprocess.Popen(
                [sys.executable, "-m", "moor", *args, "--base-hash", shown["content_hash"]],
                cwd=ws.root,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "NO_COLOR": "1"},
            )
            assert editing.stderr is not None
            assert "waiting for" in editing.stderr.readline()  # it validated, and waits
            if forget:  # a real `moor forget`, while the edit waits
                assert holder.run("forget", memory, "--why", "wrong all along") == 0
        out, err = editing.communicate(timeout=120)
        return Run(editing.returncode, out, err)

    lock = ws.read("moor.lock")
    refused = edit_while_held(MEMORY, forget=True)
    assert refused.code == 1, refused  # a refused write, as a conflict is
    assert f"{MEMORY} was removed while this edit waited" in refused.err + refused.out
    assert "nothing was written" in refused.err + refused.out
    assert "internal error" not in refused.err
    assert not (ws.root / MEMORY).exists()  # the forget stands, the edit wrote nothing
    assert ws.read("moor.lock") != lock  # the forget's own write
    assert sorted(os.listdir(ws.root / "memories")) == ["other.md"]  # no temporary file
    # The control: the same edit of a memory nobody removes waits, then is written.
    edited = edit_while_held("memories/other.md", forget=False)
    assert edited.code == 0, edited
    assert "- Still?" in ws.read("memories/other.md")


def test_a_file_where_a_folder_should_be_is_refused_as_not_a_file_and_a_folder_works(
    ws: Workspace,
) -> None:
    bound(ws)
    run = ws.moor("context", "--write", "net/client.py/CONTEXT.md")
    assert run.code == 2, run
    assert (
        "net/client.py/CONTEXT.md: net/client.py is not a folder (a file is in the way)" in run.err
    )
    assert "internal error" not in run.err
    assert ws.read("net/client.py") == CODE
    ws.memory("through", "net/client.py/inner.py#f")
    anchor = ws.states()["memories/through.md"]["anchors"][0]
    assert (anchor["state"], anchor["code"]) == ("unverified", "not_a_file"), anchor
    assert ws.moor("context", "--write", "net/CONTEXT.md").code == 0  # the control
    assert "A decision about this code." in ws.read("net/CONTEXT.md")


@pytest.mark.parametrize("action", [("reaffirm", "--why", "it holds"), ("follow",)])
def test_a_reaffirm_or_follow_whose_memory_is_forgotten_while_it_waits_names_why(
    ws: Workspace, action: tuple[str, ...]
) -> None:
    bound(ws)
    ws.memory("other", "net/client.py#Client", body="Clients are made per request.")
    ws.moor("bind", check=True)
    ws.write("net/client.py", CODE.replace("return payload", "return payload or None"))

    def while_held(memory: str, *, forget: bool) -> Run:
        with LockHolder(ws.root) as holder:
            waiting = subprocess.Popen(
                [sys.executable, "-m", "moor", action[0], memory, *action[1:]],
                cwd=ws.root,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "NO_COLOR": "1"},
            )
            assert waiting.stderr is not None
            assert "waiting for" in waiting.stderr.readline()  # it selected, and waits
            if forget:
                assert holder.run("forget", memory, "--why", "wrong all along") == 0
        out, err = waiting.communicate(timeout=120)
        return Run(waiting.returncode, out, err)

    refused = while_held(MEMORY, forget=True)
    assert refused.code == 1, refused
    assert f"{MEMORY} was removed while this {action[0]} waited" in refused.err, refused
    assert "nothing was written" in refused.err and "invalid" not in refused.err
    done = while_held("memories/other.md", forget=False)  # the control: waited, then done
    assert done.code == 0, done


def test_a_folder_name_too_long_for_minus_c_is_refused_and_the_workspace_folder_works(
    ws: Workspace,
) -> None:
    bound(ws)
    run = ws.moor("-C", LONG_NAME, "status")
    assert run.code == 2, run
    assert "-C of 300 characters: File name too long" in run.err
    assert "internal error" not in run.err
    assert ws.moor("-C", str(ws.root), "status").code == 0  # the control
