"""`--format json` on every command (docs/cli.md, "JSON output"): each answers one JSON
object on stdout — a write its write result (`moor_engine.written.Written`), a listing its
rows — and `--json` is the same as `--format json`. A new command without it fails here."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

import pytest
from moor.main import build_parser

from tests.conftest import Workspace

# Commands that speak a protocol of their own instead of answering: the language server
# and the MCP server (JSON-RPC), Claude Code's hook run (its hook JSON, always) and the
# hook server.
SERVERS = {("lsp",), ("mcp",), ("hooks", "run"), ("hooks", "serve")}

CODE = "def send(payload):\n    return payload\n\n\ndef receive():\n    return None\n"


def leaves(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> dict[tuple[str, ...], Any]:
    """Every command and sub-command that runs something, by its words."""
    found: dict[tuple[str, ...], Any] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(leaves(sub, (*path, name)))
            return found
    return {path: parser}


def formats(parser: argparse.ArgumentParser) -> tuple[str, ...] | None:
    for action in parser._actions:
        if "--format" in action.option_strings:
            return tuple(action.choices or ())
    return None


def test_every_command_but_the_servers_takes_format_json_and_the_json_alias() -> None:
    every = leaves(build_parser())
    assert ("check",) in every and ("checkpoint", "save") in every  # the walk finds them
    assert set(every) >= SERVERS
    missing = [
        " ".join(words)
        for words, parser in every.items()
        if words not in SERVERS and "json" not in (formats(parser) or ())
    ]
    assert missing == []
    aliased = [
        words
        for words, parser in every.items()
        if words not in SERVERS and "--json" not in parser._option_string_actions
    ]
    assert aliased == []
    # The control: a server really has none, so the walk would see a command without it.
    assert formats(every[("lsp",)]) is None


def run_json(ws: Workspace, *args: str, codes: tuple[int, ...] = (0,)) -> Any:
    """One JSON value, the whole of stdout: an object, or a listing's rows."""
    run = ws.moor(*args, "--format", "json")
    assert run.code in codes, (args, run.code, run.out, run.err)
    value = json.loads(run.out)
    assert isinstance(value, dict | list), (args, run.out)
    return value


@pytest.fixture
def bound(ws: Workspace) -> Workspace:
    ws.git("init", "-q")
    ws.write("src/net.py", CODE)
    ws.memory("send", "src/net.py#send", body="Send returns its payload unchanged.")
    ws.moor("bind", check=True)
    return ws


def test_every_command_in_moors_help_answers_one_json_object(bound: Workspace) -> None:
    ws = bound
    memory = "memories/send.md"
    answers: dict[str, Any] = {}
    answers["init"] = run_json(ws, "init")
    answers["check"] = run_json(ws, "check")
    answers["status"] = run_json(ws, "status")
    answers["bind"] = run_json(ws, "bind")
    answers["reaffirm"] = run_json(ws, "reaffirm", memory, "--why", "it holds")
    answers["follow"] = run_json(ws, "follow", memory)
    answers["diff"] = run_json(ws, "diff", memory)
    answers["log"] = run_json(ws, "log", memory)
    answers["symbols"] = run_json(ws, "symbols", "src/net.py")
    answers["context"] = run_json(ws, "context")
    answers["rules"] = run_json(ws, "rules", codes=(0, 1))
    answers["recall"] = run_json(ws, "recall", "payload")
    answers["about"] = run_json(ws, "about", "src/net.py#send")
    answers["atlas"] = run_json(ws, "atlas")
    answers["checkpoint"] = run_json(ws, "checkpoint", "list")
    answers["hooks"] = run_json(ws, "hooks", "status")
    answers["doctor"] = run_json(ws, "doctor", codes=(0, 1))
    answers["export"] = run_json(ws, "export", "--output", "history.jsonl")
    for journal_file in (ws.root / ".moor").glob("journal.sqlite*"):
        journal_file.unlink()  # an import goes only into an empty journal
    answers["import"] = run_json(ws, "import", "history.jsonl")
    answers["source"] = run_json(ws, "source", "list")
    answers["anchors"] = run_json(ws, "anchors")
    answers["close"] = run_json(ws, "close", "anchor:none", "--why", "gone", codes=(1,))
    answers["revise"] = run_json(ws, "revise", "anchor:none", "--rules", "--why", "x", codes=(1,))
    outside = {"XDG_STATE_HOME": str(ws.root.parent / "state")}  # never the user's own list
    for command in ("trust", "untrust"):
        run = ws.moor(command, "--format", "json", env=outside)
        assert run.code == 0, run.err
        answers[command] = json.loads(run.out)
    answers["add"] = run_json(
        ws, "add", "Receive returns nothing yet.", "--about", "src/net.py#receive"
    )
    added = answers["add"]["path"]
    answers["edit"] = run_json(ws, "edit", added)
    answers["supersede"] = run_json(
        ws, "supersede", added, "--by", memory, "--why", "one is enough"
    )
    answers["restore"] = run_json(ws, "restore", added, "--why", "both hold")
    answers["pin"] = run_json(ws, "pin", added, "--why", "always read it")
    answers["unpin"] = run_json(ws, "unpin", added, "--why", "not any more")
    answers["forget"] = run_json(ws, "forget", added, "--why", "it never held")

    help_run = ws.moor("--help")
    listed = re.findall(r"^    (\S+)  ", help_run.out.split("  COMMAND\n", 1)[1], re.M)
    assert {"init", "lsp", "forget"} <= set(listed)  # the listing is read
    assert set(listed) - {words[0] for words in SERVERS if len(words) == 1} == set(answers)

    # Writes answer their write result; listings their rows.
    writes = ("init", "bind", "reaffirm", "follow", "add", "supersede", "restore", "forget")
    for write in (*writes, "pin", "unpin"):
        assert {"action", "ok", "done", "refused"} <= set(answers[write]), write
        assert answers[write]["ok"] is True, answers[write]
    assert answers["reaffirm"]["path"] == memory
    [nothing] = answers["follow"]["done"]
    assert nothing.startswith(f"{memory}: nothing moved, nothing to follow")
    assert [m["path"] for m in answers["check"]["memories"]] == [memory]
    assert answers["status"]["memories"] == answers["check"]["memories"]
    assert answers["diff"]["memory"] == memory and answers["diff"]["changed"] is False
    assert [e["code"] for e in answers["log"]["entries"]][:1] == ["bind"]
    assert answers["context"]["included"] == [memory]
    assert answers["hooks"]["running"] is False
    assert answers["atlas"]["path"] == ".moor/atlas.html" and answers["atlas"]["memories"] == 1
    assert answers["edit"]["path"] == added and answers["edit"]["sections"]


def test_json_is_the_same_as_format_json(bound: Workspace) -> None:
    alias = bound.moor("check", "--json")
    spelled = bound.moor("check", "--format", "json")
    assert alias.code == spelled.code == 0
    assert json.loads(alias.out) == json.loads(spelled.out)
    # The control: text is not JSON.
    with pytest.raises(json.JSONDecodeError):
        json.loads(bound.moor("check").out)


def test_a_refused_write_answers_its_write_result_with_each_refusals_code(ws: Workspace) -> None:
    ws.write("src/net.py", CODE)
    ws.memory("send", "src/net.py#send")
    ws.moor("bind", check=True)
    ws.write("src/net.py", "def receive():\n    return None\n")  # send is gone
    refused = run_json(ws, "reaffirm", "memories/send.md", "--why", "it holds", codes=(1,))
    assert refused["ok"] is False and [r["code"] for r in refused["refused"]] == ["gone"]
    text = ws.moor("reaffirm", "memories/send.md", "--why", "it holds")
    assert text.code == 1 and text.out == ""  # the same refusal as text: stderr, exit 1
    assert refused["refused"][0]["message"] in text.err
    follow = run_json(ws, "follow", "memories/send.md", "--to", "src/net.py#receive", codes=(0,))
    assert follow["ok"] is True  # the control: a write that is not refused


def test_a_refused_follow_says_which_refusal_by_its_code(ws: Workspace) -> None:
    ws.write("src/net.py", CODE)
    ws.memory("both", ["src/net.py#send", "src/net.py#receive"])
    ws.moor("bind", check=True)
    ws.write("src/net.py", "def deliver(payload):\n    return payload\n")  # both gone
    memory = "memories/both.md"
    ambiguous = run_json(ws, "follow", memory, "--to", "src/net.py#deliver", codes=(1,))
    assert [r["code"] for r in ambiguous["refused"]] == ["ambiguous"]
    assert set(ambiguous["refused"][0]["suggestions"]) == {"src/net.py#send", "src/net.py#receive"}
    custom = run_json(
        ws, "follow", memory, "--from", "src/net.py#send", "--to", "anchor:ticket", codes=(1,)
    )
    assert [r["code"] for r in custom["refused"]] == ["not_code"]
    # The control: the same follow, told which reference, is done.
    named = ("--from", "src/net.py#send", "--to", "src/net.py#deliver")
    done = run_json(ws, "follow", memory, *named)
    assert done["ok"] is True and done["path"] == memory
    again = run_json(ws, "follow", memory, *named, codes=(1,))
    assert [r["code"] for r in again["refused"]] == ["not_found"]  # send is not in it now
    current = ("--from", "src/net.py#deliver", "--to", "src/net.py#deliver")
    not_moved = run_json(ws, "follow", memory, *current, codes=(1,))
    assert [r["code"] for r in not_moved["refused"]] == ["not_moved"]
