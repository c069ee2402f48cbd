"""The one write path (issue 11.1): `moor add` and `moor edit` on real workspaces, through
the real command, with real concurrent processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from moor_extractors.memory import parse_memory
from moor_store.lockfile import parse_lock

from tests.conftest import Workspace

CLIENT = (
    "class Client:\n"
    "    def send(self, body):\n"
    "        return self.post(body, key=new_key())\n"
    "\n"
    "    def post(self, body, key):\n"
    "        return (body, key)\n"
)


def _added(ws: Workspace, *args: str) -> dict[str, object]:
    run = ws.moor("add", *args, "--format", "json")
    assert run.code == 0, run.out + run.err
    value = run.json()
    assert value["ok"] is True
    return value


def test_add_writes_a_bound_memory_with_frontmatter_provenance_and_questions(
    ws: Workspace,
) -> None:
    ws.write("src/client.py", CLIENT)
    result = _added(
        ws,
        "Retries are safe: send() attaches an idempotency key",
        "--about",
        "src/client.py#Client.send",
        "--confidence",
        "verified",
        "--author",
        "Ada",
        "--agent",
        "claude-code",
    )

    path = str(result["path"])
    assert path == "memories/retries-are-safe-send-attaches-an-idempotency-key.md"
    parsed = parse_memory(path, (ws.root / path).read_bytes())
    assert parsed.memory is not None, parsed.problems
    memory = parsed.memory
    assert [e.raw for e in memory.about] == ["src/client.py#Client.send"]
    assert memory.confidence == "verified"
    assert memory.title == "Retries are safe: send() attaches an idempotency key"
    assert memory.questions  # a "When this changes, ask" section
    text = ws.read(path)
    assert "author: Ada\n" in text and "agent: claude-code\n" in text and "created: " in text
    assert result["content_hash"] == memory.content_hash
    # Bound in the same unit: current at once, and moor.lock holds its anchor.
    lock = parse_lock(ws.read("moor.lock"))
    assert set(lock.memories[path].anchors) == {"src/client.py#Client.send"}
    assert ws.state(path) == "current"
    assert "add" in ws.moor("log", path).out


def test_add_refuses_a_reference_that_names_nothing_with_the_nearest_names(
    ws: Workspace,
) -> None:
    ws.write("src/client.py", CLIENT)

    run = ws.moor("add", "Sends once", "--about", "src/client.py#Client.sned", "--format", "json")

    assert run.code == 1
    refusal = run.json()["refused"][0]
    assert refusal["code"] == "not_found"
    assert "src/client.py#Client.send" in refusal["suggestions"]
    assert list((ws.root / "memories").iterdir()) == []  # nothing written
    assert not (ws.root / "moor.lock").exists()
    # Positive control: the reference spelt right is accepted.
    assert ws.moor("add", "Sends once", "--about", "src/client.py#Client.send").code == 0


def test_add_refuses_a_reference_outside_the_workspace_with_a_code(ws: Workspace) -> None:
    run = ws.moor("add", "Escapes", "--about", "../outside.py", "--format", "json")

    assert run.code == 1
    assert run.json()["refused"][0]["code"] in ("outside_workspace", "bad_reference")
    assert list((ws.root / "memories").iterdir()) == []


def test_adding_at_an_existing_path_is_a_refusal_naming_edit_and_never_overwrites(
    ws: Workspace,
) -> None:
    ws.write("src/client.py", CLIENT)
    first = _added(ws, "Send is idempotent", "--about", "src/client.py#Client.send")
    path = str(first["path"])
    before = ws.read(path)

    run = ws.moor("add", "Something else", "--title", "Send is idempotent", "--format", "json")

    assert run.code == 1
    refusal = run.json()["refused"][0]
    assert refusal["code"] == "exists"
    assert refusal["path"] == path
    assert refusal["instead"].startswith(f"moor edit {path}")
    assert first["content_hash"] in refusal["instead"]
    assert ws.read(path) == before


def test_every_write_lists_the_memories_already_bound_to_the_same_code(
    ws: Workspace,
) -> None:
    ws.write("src/client.py", CLIENT)
    ws.memory("about-post", "src/client.py#Client.post")
    ws.memory("about-send", "src/client.py#Client.send")
    ws.memory("retired-send", "src/client.py#Client.send")
    ws.moor("bind", check=True)
    ws.moor(
        "supersede",
        "memories/retired-send.md",
        "--by",
        "memories/about-send.md",
        "--why",
        "x",
        check=True,
    )

    result = _added(ws, "Send retries once", "--about", "src/client.py#Client.send")

    known = result["known_here"]
    assert isinstance(known, list)
    # By anchor only: the memory about post is not listed; the retired one is, last, with why.
    assert [k["path"] for k in known] == ["memories/about-send.md", "memories/retired-send.md"]
    assert known[0]["state"] == "current" and "retired_because" not in known[0]
    assert known[0]["anchors"] == ["src/client.py#Client.send"]
    assert (
        known[1]["state"] == "retired" and "memories/about-send.md" in known[1]["retired_because"]
    )
    # Never merged: both files exist side by side.
    assert (ws.root / "memories/about-send.md").exists()


def test_an_edit_lists_the_live_memories_already_bound_to_the_same_code(ws: Workspace) -> None:
    ws.write("src/client.py", CLIENT)
    ws.memory("about-send", "src/client.py#Client.send")
    ws.memory("about-post", "src/client.py#Client.post")
    ws.memory("edited-send", "src/client.py#Client.send")
    ws.memory("edited-post", "src/client.py#Client.post")
    ws.moor("bind", check=True)

    def edit(name: str, *output: str) -> str:
        path = f"memories/{name}.md"
        base = ws.moor("edit", path, "--format", "json").json()["content_hash"]
        run = ws.moor(
            "edit",
            path,
            "--section",
            name,
            "--text",
            f"Edited {name}.",
            "--base-hash",
            base,
            *output,
        )
        assert run.code == 0, run.err
        return run.out

    send = json.loads(edit("edited-send", "--format", "json"))
    # By anchor only: the memory about post is not listed, nor the edited memory itself.
    assert [(k["path"], k["state"], k["anchors"]) for k in send["known_here"]] == [
        ("memories/about-send.md", "current", ["src/client.py#Client.send"])
    ]
    # Control: an edit of a memory about post lists the memory about post (and only it).
    text = edit("edited-post")
    assert "already known here (live memories bound to the same code):" in text
    assert "  memories/about-post.md: current  about-post  (src/client.py#Client.post)" in text
    assert "about-send" not in text and "edited-send" not in text


def test_edit_replaces_one_section_and_carries_the_hash_it_was_based_on(ws: Workspace) -> None:
    ws.write("src/client.py", CLIENT)
    result = _added(
        ws, "Send attaches a key", "--about", "src/client.py#Client.send", "--ask", "Keys?"
    )
    path, base = str(result["path"]), str(result["content_hash"])

    edited = ws.moor(
        "edit",
        path,
        "--section",
        "Send attaches a key",
        "--text",
        "Every call gets a new key.",
        "--base-hash",
        base,
        "--why",
        "more precise",
        "--format",
        "json",
    )

    assert edited.code == 0, edited.err
    text = ws.read(path)
    assert "Every call gets a new key." in text
    assert "- Keys?" in text  # the other section is untouched
    assert edited.json()["content_hash"] != base
    assert ws.state(path) == "current"  # an edit through moor is the reviewed text
    log = ws.moor("log", path).out
    assert "edit" in log and "more precise" in log


def test_an_edit_based_on_an_older_text_is_a_conflict_never_an_overwrite(ws: Workspace) -> None:
    ws.write("src/client.py", CLIENT)
    result = _added(ws, "Send attaches a key", "--about", "src/client.py#Client.send")
    path, base = str(result["path"]), str(result["content_hash"])
    by_hand = ws.read(path).replace("# Send attaches a key", "# Send attaches a key\n\nBy hand.")
    ws.write(path, by_hand)

    run = ws.moor(
        "edit",
        path,
        "--section",
        "Send attaches a key",
        "--text",
        "Overwritten?",
        "--base-hash",
        base,
        "--format",
        "json",
    )

    assert run.code == 1
    refusal = run.json()["refused"][0]
    assert refusal["code"] == "conflict"
    assert refusal["current_hash"] != base
    assert ws.read(path) == by_hand
    # Positive control: based on the text as it is now, the same edit lands.
    again = ws.moor(
        "edit",
        path,
        "--section",
        "Send attaches a key",
        "--text",
        "Overwritten?",
        "--base-hash",
        str(refusal["current_hash"]),
    )
    assert again.code == 0, again.err
    assert "Overwritten?" in ws.read(path) and "By hand." not in ws.read(path)


def test_edit_of_a_section_that_does_not_exist_lists_the_sections(ws: Workspace) -> None:
    ws.write("src/client.py", CLIENT)
    result = _added(ws, "Send attaches a key", "--about", "src/client.py#Client.send")
    path = str(result["path"])

    run = ws.moor(
        "edit",
        path,
        "--section",
        "Nope",
        "--text",
        "x",
        "--base-hash",
        str(result["content_hash"]),
    )

    assert run.code == 1
    assert "has no section 'Nope'" in run.err and "'When this changes, ask'" in run.err


def _start_add(ws: Workspace, text: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "moor",
            "add",
            text,
            "--about",
            "src/client.py#Client.send",
            "--format",
            "json",
        ],
        cwd=ws.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_two_adds_at_once_both_land_in_the_files_and_in_moor_lock(ws: Workspace) -> None:
    ws.write("src/client.py", CLIENT)
    procs = [_start_add(ws, f"Concurrent memory number {i}") for i in range(2)]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]

    assert all(code == 0 for code, _out, _err in results), results
    paths = {json.loads(out)["path"] for _code, out, _err in results}
    assert len(paths) == 2
    lock = parse_lock(ws.read("moor.lock"))
    assert paths <= set(lock.memories)  # neither writer lost the other's lock update
    assert all(ws.state(p) == "current" for p in paths)


def test_two_adds_of_one_title_at_once_write_one_file_and_refuse_the_other(
    ws: Workspace,
) -> None:
    ws.write("src/client.py", CLIENT)
    procs = [_start_add(ws, "One title for both") for _ in range(2)]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]

    codes = sorted(code for code, _out, _err in results)
    assert codes == [0, 1], results
    refused = next(json.loads(out) for code, out, _err in results if code == 1)
    assert refused["refused"][0]["code"] == "exists"
    assert len(list((ws.root / "memories").iterdir())) == 1
