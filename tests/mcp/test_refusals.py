"""Every kind of refusal, through the SDK's client over stdio against the real `moor mcp`
process on a real workspace: an error result (`isError`) whose last content block a
program reads as `{"refused": [...]}` — a stable code, the message, the path and line where
known — with no traceback or repr in it; a write tool's also as its `WriteResult`. Each
refusal is followed by its control: the same call succeeds once the cause is gone."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import traceback
from typing import Any

import anyio
import anyio.to_thread
import pydantic
from mcp.client.session import ClientSession
from mcp.types import CallToolResult

from tests.cli.lock_holder import LockHolder, waiting_for_the_lock
from tests.conftest import Workspace
from tests.mcp.conftest import call, error_text, leaks, refusal, refusals, run, structured

CODE = "class Client:\n    def send(self, payload):\n        return payload\n"
SEND = "net/client.py#Client.send"
TEXT = "Retries are safe: send attaches an idempotency key."


def code(ws: Workspace) -> None:
    ws.write("net/client.py", CODE)


def calls(ws: Workspace, *asked: tuple[str, dict[str, Any]], **env: str) -> list[CallToolResult]:
    """The calls, in order, in one server."""

    async def use(session: ClientSession) -> list[CallToolResult]:
        return [await session.call_tool(tool, arguments) for tool, arguments in asked]

    answered: list[CallToolResult] = run(ws.root, use, env=env)
    return answered


def test_usage_is_refused_with_its_code_and_the_same_call_with_good_input_succeeds(
    ws: Workspace,
) -> None:
    code(ws)
    none, many, blank, good = calls(
        ws,
        ("memory_search_many", {"queries": []}),
        ("memory_search_many", {"queries": [f"q{n}" for n in range(21)]}),
        ("checkpoint_save", {"agent": "a", "summary": "  "}),
        ("memory_search_many", {"queries": ["retries"]}),
    )
    assert refusal(none, "usage")["message"] == "queries: 1 to 20 questions, got 0"
    assert "got 21" in refusal(many, "usage")["message"]
    assert none.structured_content is None  # no WriteResult: its schema has no refusal
    assert "needs a summary" in refusal(blank, "usage")["message"]
    assert not (ws.root / ".moor" / "checkpoints").exists()
    assert structured(good)["results"][0]["query"] == "retries"  # the control
    saved = call(ws.root, "checkpoint_save", {"agent": "a", "summary": "mapped it"})
    assert structured(saved)["summary"] == "mapped it"  # the control


def test_a_write_refused_for_its_input_answers_its_write_result(ws: Workspace) -> None:
    code(ws)
    blank, no_about, good = calls(
        ws,
        ("memory_write", {"text": " ", "about": [SEND]}),
        ("memory_write", {"text": TEXT}),
        ("memory_write", {"text": TEXT, "about": [SEND]}),
    )
    assert "a memory needs some text" in refusal(blank, "usage")["message"]
    assert blank.structured_content is not None
    assert blank.structured_content["action"] == "add" and blank.structured_content["path"] is None
    assert refusal(no_about, "invalid_argument")["message"] == "about: Field required"
    assert no_about.structured_content is not None
    assert no_about.structured_content["refused"][0]["code"] == "invalid_argument"
    assert "moor refused memory_write: nothing was written" in error_text(no_about)
    written = structured(good)  # the control
    assert written["ok"] and written["refused"] == [] and (ws.root / written["path"]).exists()


def test_arguments_that_fail_the_schema_are_named_never_quoted_as_a_repr(ws: Workspace) -> None:
    code(ws)
    wrong, missing, good = calls(
        ws,
        ("memory_search", {"query": "retries", "limit": "several"}),
        ("checkpoint_resume", {}),
        ("memory_search", {"query": "retries", "limit": 3}),
    )
    entry = refusal(wrong, "invalid_argument")
    assert entry["message"].startswith("limit: ") and "several" not in entry["message"]
    assert refusal(missing, "invalid_argument")["message"] == "agent: Field required"
    assert structured(good)["query"] == "retries"  # the control
    # The control of `leaks`: pydantic's own text of the same mistake is caught.
    model = pydantic.create_model("memory_searchArguments", limit=(int, ...))
    try:
        model.model_validate({"limit": "several"})
    except pydantic.ValidationError as error:
        assert "input_value=" in leaks(str(error))


def test_a_tool_that_does_not_exist_is_refused_by_name(ws: Workspace) -> None:
    unknown, known = calls(ws, ("memory_delete", {"path": "x"}), ("drift_report", {}))
    entry = refusal(unknown, "unknown_tool")
    assert "no tool named memory_delete" in entry["message"] and "memory_forget" in entry["message"]
    assert structured(known)["needing_a_look"] == []  # the control


def test_a_path_outside_the_workspace_is_refused_as_outside_workspace(
    ws: Workspace, tmp_path: Any
) -> None:
    code(ws)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (ws.root / ".moor").mkdir()
    (ws.root / ".moor" / "checkpoints").symlink_to(outside)
    about, history, saved = calls(
        ws,
        ("memories_about", {"target": "../outside.py"}),
        ("memory_history", {"path": "../memories/x.md"}),
        ("checkpoint_save", {"agent": "a", "summary": "here"}),
    )
    entry = refusal(about, "outside_workspace")
    assert entry["path"] == "../outside.py" and "outside the workspace" in entry["message"]
    assert refusal(history, "outside_workspace")["path"] == "../memories/x.md"
    # A link on the way out: the store's own refusal (NotInside), with the path it walked.
    link = refusal(saved, "outside_workspace")
    assert link["path"].startswith(".moor/checkpoints/a/") and "leads outside" in link["message"]
    assert list(outside.iterdir()) == []

    (ws.root / ".moor" / "checkpoints").unlink()
    about, saved = calls(
        ws,
        ("memories_about", {"target": "net/client.py"}),
        ("checkpoint_save", {"agent": "a", "summary": "here"}),
    )
    assert structured(about)["target"] == "net/client.py"  # the controls
    assert (ws.root / structured(saved)["path"]).is_file()


def test_an_unknown_memory_or_a_bad_agent_name_is_refused_with_its_code(ws: Workspace) -> None:
    code(ws)
    ws.memory("retries", SEND)
    ws.moor("bind", check=True)
    history, search, resume, about, history_ok, search_ok, resume_ok = calls(
        ws,
        ("memory_history", {"path": "memories/never.md"}),
        ("memory_search", {"query": "retries", "agent": "Claude Code"}),
        ("checkpoint_resume", {"agent": "../up"}),
        ("memories_about", {"target": "net/client.py:9"}),
        ("memory_history", {"path": "memories/retries.md"}),
        ("memory_search", {"query": "retries", "agent": "claude-code"}),
        ("checkpoint_resume", {"agent": "up"}),
    )
    entry = refusal(history, "not_found")
    assert entry["path"] == "memories/never.md"
    assert "agent 'Claude Code' is not an agent name" in refusal(search, "agent_invalid")["message"]
    refusal(resume, "agent_invalid")
    beyond = refusal(about, "usage")
    assert (beyond["path"], beyond["line"]) == ("net/client.py", 9)
    assert structured(history_ok)["path"] == "memories/retries.md"  # the controls
    assert structured(search_ok)["hits"][0]["path"] == "memories/retries.md"
    assert structured(resume_ok)["checkpoints"] == []
    good_line = call(ws.root, "memories_about", {"target": "net/client.py:3"})
    assert structured(good_line)["memories"][0]["path"] == "memories/retries.md"


def test_a_write_while_the_write_lock_is_held_is_refused_as_write_busy(ws: Workspace) -> None:
    code(ws)
    (ws.root / ".moor").mkdir()
    held = os.open(ws.root / ".moor" / "write.lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # this test process holds it, as a writer would
        [busy] = calls(ws, ("memory_write", {"text": TEXT, "about": [SEND]}), MOOR_WRITE_WAIT="0.3")
    finally:
        os.close(held)  # releases the lock
    entry = refusal(busy, "write_busy")
    assert entry["path"] == ".moor/write.lock" and "nothing was changed" in entry["message"]
    assert busy.structured_content is not None and busy.structured_content["action"] == "add"
    assert list((ws.root / "memories").iterdir()) == []
    [written] = calls(ws, ("memory_write", {"text": TEXT, "about": [SEND]}), MOOR_WRITE_WAIT="0.3")
    assert structured(written)["ok"]  # the control: the lock released, the same call lands


def test_a_broken_moor_lock_is_refused_as_lock_invalid_by_readers_and_writers(
    ws: Workspace,
) -> None:
    code(ws)
    ws.memory("retries", SEND)
    ws.moor("bind", check=True)
    good = ws.read("moor.lock")
    lines = good.splitlines(keepends=True)
    ws.write("moor.lock", "".join([*lines[:2], "<<<<<<< HEAD\n", *lines[2:]]))
    search, write = calls(
        ws,
        ("memory_search", {"query": "retries"}),
        ("memory_write", {"text": TEXT, "about": [SEND]}),
    )
    for result in (search, write):
        entry = refusal(result, "lock_invalid")
        assert (entry["path"], entry["line"]) == ("moor.lock", 3), entry
        assert "unresolved merge conflict markers" in entry["message"]
    assert write.structured_content is not None and search.structured_content is None
    assert [p.name for p in (ws.root / "memories").iterdir()] == ["retries.md"]

    (ws.root / "moor.lock").write_text(good, encoding="utf-8")
    search, write = calls(
        ws,
        ("memory_search", {"query": "retries"}),
        ("memory_write", {"text": TEXT, "about": [SEND]}),
    )
    assert structured(search)["hits"][0]["path"] == "memories/retries.md"  # the controls
    assert structured(write)["ok"]


def test_a_broken_moor_toml_is_refused_as_config_invalid_with_its_line(ws: Workspace) -> None:
    code(ws)
    ws.write("moor.toml", 'memory_roots = ["memories"]\nmemory_root = "docs"\n')
    [report] = calls(ws, ("drift_report", {}))
    entry = refusal(report, "config_invalid")
    assert (entry["path"], entry["line"]) == ("moor.toml", 2)
    assert "unknown key(s) memory_root" in entry["message"]
    ws.write("moor.toml", 'memory_roots = ["memories"\n')
    [report] = calls(ws, ("drift_report", {}))
    assert refusal(report, "config_invalid")["message"].startswith("moor.toml:2:")

    ws.write("moor.toml", 'memory_roots = ["memories"]\n')
    [report] = calls(ws, ("drift_report", {}))
    assert structured(report)["memories"] == 0  # the control


def test_a_journal_of_a_newer_moor_is_refused_as_journal_unusable_and_kept(
    ws: Workspace,
) -> None:
    code(ws)
    assert structured(call(ws.root, "changes_since", {}))["head"] == 0  # makes the journal
    journal = ws.root / ".moor" / "journal.sqlite"

    def schema(version: str) -> None:
        with sqlite3.connect(journal) as db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
        db.close()

    schema("99")
    [changes] = calls(ws, ("changes_since", {}))
    entry = refusal(changes, "journal_unusable")
    assert entry["path"] == ".moor/journal.sqlite" and "newer moor" in entry["message"]
    assert journal.exists() and not list(journal.parent.glob("journal.sqlite.broken-*"))

    schema("2")
    [changes] = calls(ws, ("changes_since", {}))
    assert structured(changes)["changes"] == []  # the control


def test_no_refusal_text_leaks_a_traceback_and_the_check_would_see_one() -> None:
    """The control of `leaks` itself: a real traceback is caught by it."""
    try:
        int("not a number")  # a real exception, formatted as Python prints it
    except ValueError:
        printed = traceback.format_exc()
    assert "Traceback (most recent call last)" in leaks(printed)
    assert leaks("moor refused memory_search\n- limit: Input should be a valid integer") == []


def test_a_write_the_engine_refused_has_the_same_shape_as_every_other_refusal(
    ws: Workspace,
) -> None:
    code(ws)
    refused, written = calls(
        ws,
        ("memory_write", {"text": TEXT, "about": [SEND, "net/client.py#Client.sned"]}),
        ("memory_write", {"text": TEXT, "about": [SEND]}),
    )
    [entry] = refusals(refused)
    assert entry["code"] == "not_found" and entry["ref"] == "net/client.py#Client.sned"
    assert SEND in entry["suggestions"] and entry["line"] is None
    assert structured(written)["ok"]  # the control


LONG_NAME = "a" * 300  # over every file system's 255-byte name
LONG_PATH = "/".join(["abcdefgh"] * 600)  # over PATH_MAX, each name short


def test_a_path_too_long_for_any_file_is_refused_by_every_tool_that_takes_a_path(
    ws: Workspace,
) -> None:
    code(ws)
    ws.memory("send", SEND)
    ws.moor("bind", check=True)
    lock = ws.read("moor.lock")
    memory = "memories/send.md"
    tools: list[tuple[str, dict[str, Any]]] = []
    for long in (LONG_NAME, f"memories/{LONG_NAME}.md", LONG_PATH):
        tools += [
            ("memory_reaffirm", {"path": long, "why": "it holds"}),
            ("memory_edit", {"path": long, "section": "s", "text": "t", "based_on": "h"}),
            ("memory_forget", {"path": long, "why": "wrong"}),
            ("memory_restore", {"path": long, "why": "right"}),
            ("memory_supersede", {"old": long, "by": memory, "why": "newer"}),
            ("memory_supersede", {"old": memory, "by": long, "why": "newer"}),
            ("memory_history", {"path": long}),
            ("memories_about", {"target": long}),
            ("memories_about", {"target": f"{long}#Client.send"}),
        ]
    answered = calls(
        ws,
        *tools,
        ("memory_reaffirm", {"path": memory, "why": "it holds"}),
        ("memory_history", {"path": memory}),
        ("memories_about", {"target": SEND}),
    )
    for (tool, _), result in zip(tools, answered[: len(tools)], strict=True):
        entry = refusal(result, "path_too_long")
        assert "longer than the file system allows" in entry["message"] or (
            "over the system's limit" in entry["message"]
        ), (tool, entry)
        assert len(entry["message"]) < 400, (tool, entry)  # named shortened, not echoed
    assert ws.read("moor.lock") == lock and sorted(os.listdir(ws.root / "memories")) == ["send.md"]
    reaffirmed, history, about = answered[len(tools) :]  # the controls
    assert structured(reaffirmed)["ok"]
    assert structured(history)["path"] == memory
    assert structured(about)["target"] == SEND


def test_a_cursor_that_is_no_journal_seq_is_an_invalid_argument(ws: Workspace) -> None:
    code(ws)
    ws.memory("send", SEND)
    ws.moor("bind", check=True)
    wrong = [2**63, 2**64 + 5, -1, "7x", 1.5]
    answered = calls(
        ws,
        *[("changes_since", {"cursor": cursor}) for cursor in wrong],
        ("changes_since", {"limit": 2**63}),
        ("changes_since", {"cursor": 0}),
        ("changes_since", {"cursor": 2**63 - 1}),
    )
    for cursor, result in zip(wrong, answered, strict=False):
        entry = refusal(result, "invalid_argument")
        assert "cursor" in entry["message"], (cursor, entry)
    assert "limit" in refusal(answered[len(wrong)], "invalid_argument")["message"]
    start, end = (structured(result) for result in answered[-2:])  # the controls
    assert start["changes"] and start["next_cursor"] == start["head"]
    assert end["changes"] == [] and end["head"] == start["head"]


def test_an_edit_whose_memory_is_forgotten_while_it_waits_is_refused_as_not_found(
    ws: Workspace,
) -> None:
    code(ws)
    ws.memory("send", SEND)
    ws.memory("client", "net/client.py#Client", body="Clients are made per request.")
    ws.moor("bind", check=True)

    async def edit_while_held(session: ClientSession, memory: str, forget: bool) -> Any:
        shown = ws.moor("edit", memory, "--format", "json", check=True).json()
        arguments = {
            "path": memory,
            "section": "When this changes, ask",
            "text": "- Still?",
            "based_on": shown["content_hash"],
        }
        answer: list[CallToolResult] = []

        async def edit() -> None:
            answer.append(await session.call_tool("memory_edit", arguments))

        with LockHolder(ws.root) as holder:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(edit)
                # The server validated the edit and waits for the lock: then it is removed.
                await anyio.to_thread.run_sync(waiting_for_the_lock, ws.root, holder.process.pid)
                if forget:
                    forgot = await anyio.to_thread.run_sync(
                        holder.run, "forget", memory, "--why", "wrong all along"
                    )
                    assert forgot == 0
                await anyio.to_thread.run_sync(holder.release)
        return answer[0]

    async def use(session: ClientSession) -> list[Any]:
        refused = await edit_while_held(session, "memories/send.md", forget=True)
        edited = await edit_while_held(session, "memories/client.md", forget=False)
        return [refused, edited]

    # A real server process: the test waits until that process holds the write lock open.
    refused, edited = run(ws.root, use, process=True)
    entry = refusal(refused, "not_found")
    assert entry["path"] == "memories/send.md"
    assert "was removed while this edit waited" in entry["message"]
    assert "nothing was written" in error_text(refused)
    assert sorted(os.listdir(ws.root / "memories")) == ["client.md"]  # no temporary file
    assert structured(edited)["ok"]  # the control: waited, then written
    assert "- Still?" in ws.read("memories/client.md")
