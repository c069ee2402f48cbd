"""`moor about`: memories about a symbol (and what encloses it or it holds), a line, a file."""

from __future__ import annotations

from tests.conftest import Workspace

CODE = """\
import json


class Client:
    def send(self, payload):
        def encode(value):
            return json.dumps(value)

        return encode(payload)

    def close(self):
        return None


def helper():
    return 2
"""


def setup(ws: Workspace) -> None:
    ws.write("src/client.py", CODE)
    ws.write("src/other.py", "def send():\n    return 1\n")
    ws.memory("m-class", "src/client.py#Client")
    ws.memory("m-send", "src/client.py#Client.send")
    ws.memory("m-encode", "src/client.py#Client.send.encode")
    ws.memory("m-close", "src/client.py#Client.close")
    ws.memory("m-file", "src/client.py")
    ws.memory("m-helper", "src/client.py#helper")
    ws.memory("m-other", "src/other.py#send")


def about(ws: Workspace, target: str) -> dict[str, str]:
    run = ws.moor("about", "--json", target)
    assert run.code in (0, 1), run.err
    memories = run.json()["memories"]
    assert isinstance(memories, list)
    return {
        m["path"].removeprefix("memories/").removesuffix(".md"): m["relation"] for m in memories
    }


def test_a_symbol_lists_its_own_enclosing_and_nested_memories(ws: Workspace) -> None:
    setup(ws)
    assert about(ws, "src/client.py#Client.send") == {
        "m-send": "exact",
        "m-class": "enclosing",
        "m-encode": "nested",
        "m-file": "file",
    }
    # Control: a sibling and a same-named function elsewhere have memories of their own.
    assert about(ws, "src/client.py#Client.close")["m-close"] == "exact"
    assert about(ws, "src/other.py#send") == {"m-other": "exact"}


def test_a_line_lists_the_memories_of_the_innermost_definition_there(ws: Workspace) -> None:
    setup(ws)
    line_in_send = CODE.splitlines().index("        return encode(payload)") + 1
    assert about(ws, f"src/client.py:{line_in_send}") == about(ws, "src/client.py#Client.send")
    line_in_encode = CODE.splitlines().index("            return json.dumps(value)") + 1
    assert about(ws, f"src/client.py:{line_in_encode}") == {
        "m-encode": "exact",
        "m-send": "enclosing",
        "m-class": "enclosing",
        "m-file": "file",
    }
    # A line outside every definition is about the file.
    assert about(ws, "src/client.py:1") == {
        "m-class": "in file",
        "m-send": "in file",
        "m-encode": "in file",
        "m-close": "in file",
        "m-file": "file",
        "m-helper": "in file",
    }


def test_a_file_lists_every_memory_about_code_in_it_and_no_other(ws: Workspace) -> None:
    setup(ws)
    found = about(ws, "src/client.py")
    assert set(found) == {"m-class", "m-send", "m-encode", "m-close", "m-file", "m-helper"}
    assert about(ws, "src/other.py") == {"m-other": "in file"}  # control


def test_trust_states_and_questions_come_with_each_memory(ws: Workspace) -> None:
    setup(ws)
    ws.moor("bind", check=True)
    run = ws.moor("about", "--json", "src/client.py#Client.send")
    assert run.code == 0, run.err  # all current: nothing to look at
    first = run.json()["memories"][0]
    assert first["state"] == "current" and first["questions"] == ["Does it still hold?"]
    ws.write("src/client.py", CODE.replace("return encode(payload)", "return payload"))
    run = ws.moor("about", "--json", "src/client.py#Client.send")
    assert run.code == 1, run.err  # a listed memory needs a look
    states = {m["path"]: m for m in run.json()["memories"]}
    send = states["memories/m-send.md"]
    assert send["state"] == "drifted" and any("body" in why for why in send["why"])
    assert states["memories/m-encode.md"]["state"] == "current"  # the nested one held
    text = ws.moor("about", "src/client.py#Client.send")
    assert "[drifted]" in text.out and "ask: Does it still hold?" in text.out


def test_a_symbol_that_is_not_there_lists_memories_naming_it_and_says_so(ws: Workspace) -> None:
    setup(ws)
    ws.memory("m-gone", "src/client.py#Client.vanished")
    run = ws.moor("about", "--json", "src/client.py#Client.vanished")
    assert run.code == 1, run.err  # the memory about it is gone
    value = run.json()
    assert "not in src/client.py now" in value["target"]["note"]
    relations = {m["path"]: m["relation"] for m in value["memories"]}
    assert relations == {"memories/m-gone.md": "exact", "memories/m-file.md": "file"}


def test_bad_targets_are_refused_with_a_message(ws: Workspace) -> None:
    setup(ws)
    missing = ws.moor("about", "src/nope.py")
    assert missing.code == 2 and "src/nope.py: no such file" in missing.err
    beyond = ws.moor("about", "src/client.py:999")
    assert beyond.code == 2 and "the file has 16 lines" in beyond.err
    empty = ws.moor("about", "src/client.py#")
    assert empty.code == 2 and "name a symbol" in empty.err
    outside = ws.moor("about", "../elsewhere.py")
    assert outside.code == 2 and "outside the workspace" in outside.err
    assert "Traceback" not in missing.err + beyond.err + empty.err + outside.err


def test_a_symbol_that_is_not_there_and_that_no_memory_names_is_refused_with_did_you_mean(
    ws: Workspace,
) -> None:
    setup(ws)
    assert ws.moor("about", "src/client.py#Client.send").code in (0, 1)  # control: it exists
    run = ws.moor("about", "src/client.py#Client.sned")
    assert run.code == 2 and "Traceback" not in run.err
    assert "no such definition in src/client.py now" in run.err
    assert "did you mean" in run.err and "src/client.py#Client.send" in run.err
