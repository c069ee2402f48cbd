"""Every request gets an answer, errors are clean, and the exit status follows `shutdown`:
raw JSON-RPC (what a broken client sends) against the real server process."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.conftest import Workspace
from tests.lsp.conftest import drifted_retry
from tests.lsp.raw import FAILED, OMIT, UNKNOWN_METHOD, RawServer

pytestmark = pytest.mark.asyncio

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
INVALID_REQUEST = -32600
# What Python says about itself, which a client must never be shown.
PYTHON_WORDS = ("Traceback", "positional argument", "unhashable", "NoneType", "object has no")
CAPABILITIES: dict[str, Any] = {
    "window": {"showDocument": {"support": True}, "showMessage": {}},
    "workspace": {"configuration": True},
    "textDocument": {
        "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}
    },
}


@pytest_asyncio.fixture
async def server(ws: Workspace) -> AsyncIterator[RawServer]:
    drifted_retry(ws)
    raw = RawServer(ws.root)
    try:
        yield raw
    finally:
        await raw.kill()


def clean(message: str) -> bool:
    return not any(word in message for word in PYTHON_WORDS)


def document(ws: Workspace, rel: str) -> dict[str, str]:
    return {"uri": (ws.root / rel).as_uri()}


def hover_at(ws: Workspace, line: int, character: int) -> dict[str, Any]:
    return {
        "textDocument": document(ws, "memories/retry.md"),
        "position": {"line": line, "character": character},
    }


async def test_each_malformed_request_is_answered_with_invalid_params_naming_what_is_wrong(
    server: RawServer, ws: Workspace
) -> None:
    await server.start(CAPABILITIES)
    # The well-formed request is answered with a hover: the server could answer these.
    assert (await server.result("textDocument/hover", hover_at(ws, 2, 8)))["contents"]
    everywhere = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    cases: list[tuple[str, object, str]] = [
        ("textDocument/hover", hover_at(ws, -1, 0), "position"),
        ("textDocument/hover", hover_at(ws, 0, -5), "position"),
        ("textDocument/hover", {"position": {"line": 0, "character": 0}}, "textDocument"),
        ("textDocument/hover", None, "params"),
        ("textDocument/hover", OMIT, "params"),
        ("textDocument/definition", None, "params"),
        (
            "textDocument/completion",
            {"textDocument": document(ws, "memories/retry.md")},
            "position",
        ),
        (
            "textDocument/codeAction",
            {"textDocument": document(ws, "memories/retry.md"), "range": everywhere},
            "context",
        ),
        ("textDocument/codeLens", {}, "textDocument"),
        ("textDocument/diagnostic", {"textDocument": "memories/retry.md"}, "textDocument"),
        ("workspace/executeCommand", None, "params"),
    ]
    for method, params, field in cases:
        error = await server.error(method, params)
        assert error["code"] == INVALID_PARAMS, (method, params, error)
        assert method in error["message"] and field in error["message"], error
        assert clean(error["message"]), error
    # Still serving, and nothing was shown to the user as an "Error in server".
    assert (await server.result("textDocument/hover", hover_at(ws, 2, 8)))["contents"]
    assert not [m for m in server.shown() if "Error in server" in m]
    assert await server.exit(shutdown=True) == 0
    log = await server.log()
    assert log.count("answered a malformed") == len(cases)
    assert "Traceback" not in log and " ERROR " not in log, log


async def test_a_malformed_notification_is_logged_and_the_server_keeps_answering(
    server: RawServer, ws: Workspace
) -> None:
    await server.start(CAPABILITIES)
    server.notify("textDocument/didChange", None)
    server.notify("textDocument/didOpen", {"textDocument": {"uri": 3}})
    assert (await server.result("textDocument/hover", hover_at(ws, 2, 8)))["contents"]
    assert await server.exit(shutdown=True) == 0
    log = await server.log()
    assert log.count("ignored a malformed") == 2, log
    assert "Traceback" not in log


async def test_command_arguments_that_do_not_fit_are_invalid_params_in_the_commands_words(
    server: RawServer, ws: Workspace
) -> None:
    await server.start(CAPABILITIES)
    memory = "memories/retry.md"
    # The control: the command runs with the arguments it takes.
    done = await server.result(
        "workspace/executeCommand", {"command": "moor.showDiff", "arguments": [memory]}
    )
    assert "src/a.py#g" in done["diff"]
    cases: list[tuple[str, list[Any], str]] = [
        ("moor.follow", [memory, "a", "b", "c", "d", "e", "f"], "[memory, to, source]"),
        ("moor.bind", [memory, {"a": 1}], "takes arguments [memory]; it was given 2"),
        ("moor.reaffirm", [{"memory": memory}], "expected a memory path"),
        ("moor.reaffirm", [memory, {"why": "x"}], "needs a reason"),
        ("moor.reaffirm", [memory, "   "], "needs a reason"),
        ("moor.follow", [memory, "src/b.py#g"], "needs [memory] or [memory, to, from]"),
        ("moor.showDiff", [memory, {"ref": 1}], "ref is a reference"),
        ("moor.showCode", [{"uri": 1}], "needs [uri, range]"),
    ]
    for command, arguments, words in cases:
        error = await server.error(
            "workspace/executeCommand", {"command": command, "arguments": arguments}
        )
        assert error["code"] == INVALID_PARAMS, (command, error)
        assert command in error["message"] or words in error["message"], error
        assert words in error["message"], error
        assert clean(error["message"]), error
    assert await server.exit(shutdown=True) == 0


async def test_a_diagnostic_sent_back_with_foreign_data_gets_no_actions_and_no_error(
    server: RawServer, ws: Workspace
) -> None:
    await server.start(CAPABILITIES)
    memory = document(ws, "memories/retry.md")
    everywhere = {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}

    def asked(state: object) -> dict[str, Any]:
        data = {"memory": "memories/retry.md", "state": state, "reaffirmable": True}
        diagnostic = {"range": everywhere, "message": "x", "source": "moor", "data": data}
        return {
            "textDocument": memory,
            "range": everywhere,
            "context": {"diagnostics": [diagnostic]},
        }

    # The control: with moor's own shape of data, the reaffirm action is offered.
    offered = await server.result("textDocument/codeAction", asked("drifted"))
    assert any("Reaffirm" in action["title"] for action in offered), offered
    # A state that is an object (it used to raise "unhashable type: 'dict'") offers nothing
    # of its own; the memory's real diagnostics still give their actions.
    answer = await server.request("textDocument/codeAction", asked({"a": 1}))
    assert "error" not in answer, answer
    assert all(clean(m) for m in server.shown()), server.shown()
    assert await server.exit(shutdown=True) == 0
    assert "Traceback" not in await server.log()


async def test_show_code_answers_when_the_client_answers_show_document_with_null(
    server: RawServer, ws: Workspace
) -> None:
    await server.start(CAPABILITIES)
    arguments = [(ws.root / "src/a.py").as_uri(), None]
    server.answers["window/showDocument"] = lambda _m: {"success": True}
    shown = await server.result(
        "workspace/executeCommand", {"command": "moor.showCode", "arguments": arguments}
    )
    assert shown == {"success": True}  # the control: a client that says it showed it
    server.answers["window/showDocument"] = lambda _m: None
    shown = await server.result(
        "workspace/executeCommand", {"command": "moor.showCode", "arguments": arguments}
    )
    assert shown == {"success": False}
    assert [m["method"] for m in server.asked].count("window/showDocument") == 2
    # Shutdown then succeeds, and the process ends cleanly.
    assert await server.exit(shutdown=True) == 0
    assert "Traceback" not in await server.log()


async def test_a_refusal_is_logged_at_info_without_a_traceback(
    server: RawServer, ws: Workspace
) -> None:
    await server.start(CAPABILITIES)
    error = await server.error(
        "workspace/executeCommand",
        {"command": "moor.reaffirm", "arguments": ["memories/retry.md", " "]},
    )
    assert error["code"] == INVALID_PARAMS and "needs a reason" in error["message"]
    # The control: with a reason, the same command is done.
    done = await server.result(
        "workspace/executeCommand",
        {"command": "moor.reaffirm", "arguments": ["memories/retry.md", "still holds"]},
    )
    assert done["done"] and not done["refused"], done
    assert await server.exit(shutdown=True) == 0
    log = await server.log()
    refusals = [line for line in log.splitlines() if "needs a reason" in line]
    assert len(refusals) == 1 and " INFO " in refusals[0], log
    assert "Traceback" not in log and " ERROR " not in log, log


async def test_reaffirm_without_a_reason_is_answered_whatever_the_client_replies_to_the_question(
    server: RawServer, ws: Workspace
) -> None:
    server.answers["workspace/applyEdit"] = lambda _m: {"applied": True}
    await server.start({**CAPABILITIES, "workspace": {"applyEdit": True}})
    reaffirm = {"command": "moor.reaffirm", "arguments": ["memories/retry.md"]}
    lock = (ws.root / "moor.lock").read_bytes()
    # Dismissed (`null`), an answer that is no offered choice, an error reply: each is an
    # answer to the command, and nothing is written.
    server.answers["window/showMessageRequest"] = lambda _m: None
    assert await server.result("workspace/executeCommand", reaffirm) == {
        "done": [],
        "refused": [],
        "cancelled": True,
    }
    server.answers["window/showMessageRequest"] = lambda _m: {"title": "something else"}
    assert (await server.result("workspace/executeCommand", reaffirm))["cancelled"] is True
    server.answers["window/showMessageRequest"] = lambda _m: 17
    answer = await server.request("workspace/executeCommand", reaffirm)
    assert ("result" in answer) != ("error" in answer), answer
    assert clean(str(answer)), answer
    # An error answer that is not "no such method" is a person quitting the question.
    server.answers["window/showMessageRequest"] = lambda _m: FAILED
    assert (await server.result("workspace/executeCommand", reaffirm))["cancelled"] is True
    assert not [m for m in server.asked if m["method"] == "workspace/applyEdit"]
    assert (ws.root / "moor.lock").read_bytes() == lock
    # The control: a prepared reason picked is done.
    server.answers["window/showMessageRequest"] = lambda m: m["params"]["actions"][0]
    done = await server.result("workspace/executeCommand", reaffirm)
    assert done["done"] and not done["refused"], done
    assert (ws.root / "moor.lock").read_bytes() != lock
    assert await server.exit(shutdown=True) == 0
    log = await server.log()
    assert "Traceback" not in log and " ERROR " not in log, log


async def test_a_client_that_cannot_ask_is_given_the_reason_line_or_told_to_pass_a_reason(
    server: RawServer, ws: Workspace
) -> None:
    reaffirm = {"command": "moor.reaffirm", "arguments": ["memories/retry.md"]}
    memory = ws.read("memories/retry.md")
    server.answers["window/showMessageRequest"] = lambda _m: UNKNOWN_METHOD
    server.answers["workspace/applyEdit"] = lambda _m: {"applied": True}
    await server.start({**CAPABILITIES, "workspace": {"applyEdit": True}})
    # It can apply edits: the reason line is put in the memory for the person to complete.
    answer = await server.result("workspace/executeCommand", reaffirm)
    assert answer["done"] == [] and "because:" in answer["next"], answer
    [edit] = [m for m in server.asked if m["method"] == "workspace/applyEdit"]
    assert "<!-- moor reaffirm because:" in json.dumps(edit["params"])
    assert ws.read("memories/retry.md") == memory  # the buffer's, never the file's
    assert await server.exit(shutdown=True) == 0
    assert "Traceback" not in await server.log()


async def test_a_client_that_can_neither_ask_nor_edit_is_told_to_pass_a_reason(
    server: RawServer, ws: Workspace
) -> None:
    server.answers["window/showMessageRequest"] = lambda _m: UNKNOWN_METHOD
    await server.start(CAPABILITIES)
    error = await server.error(
        "workspace/executeCommand",
        {"command": "moor.reaffirm", "arguments": ["memories/retry.md"]},
    )
    assert error["code"] == INVALID_PARAMS and "needs a reason" in error["message"], error
    assert clean(error["message"]), error
    assert [m["method"] for m in server.asked].count("window/showMessageRequest") == 1
    assert await server.exit(shutdown=True) == 0
    log = await server.log()
    assert "Traceback" not in log and " ERROR " not in log, log


# A server with one feature that has a bug: the error paths of the real dispatcher, in the
# real process, with a real exception (nothing in moor is replaced).
BROKEN = """
import sys
from lsprotocol import types
import moor_lsp.features.registry as registry
from moor_lsp.features import Feature
from moor_lsp.server import main

class Broken(Feature):
    name = "broken"

    def register(self):
        self.handle(types.TEXT_DOCUMENT_SIGNATURE_HELP, self.signature_help, None)
        self.command("moor.broken", self.broken)

    async def signature_help(self, params):
        return hash({})

    async def broken(self, memory=None):
        return hash({"memory": memory})

registry.FEATURES = (*registry.FEATURES, Broken)
sys.exit(main(sys.argv[1:]))
"""


async def test_an_internal_error_answers_a_generic_message_and_logs_its_traceback(
    ws: Workspace,
) -> None:
    drifted_retry(ws)
    server = RawServer(ws.root, command=[sys.executable, "-c", BROKEN])
    try:
        await server.start(CAPABILITIES)
        error = await server.error(
            "workspace/executeCommand", {"command": "moor.broken", "arguments": ["x"]}
        )
        assert error["code"] == INTERNAL_ERROR, error
        assert error["message"].startswith("moor could not run moor.broken"), error
        assert clean(error["message"]) and "data" not in error, error
        # A request's handler answers its harmless default.
        help_at = {
            "textDocument": document(ws, "src/a.py"),
            "position": {"line": 0, "character": 0},
        }
        assert await server.result("textDocument/signatureHelp", help_at) is None
        assert all(clean(m) for m in server.shown()), server.shown()
        assert any("moor [broken]" in m for m in server.shown())
        assert await server.exit(shutdown=True) == 0
        log = await server.log()
        assert log.count("unhashable type: 'dict'") >= 2  # the log has what the client has not
        assert "Traceback" in log and " ERROR " in log
    finally:
        await server.kill()


async def test_requests_after_shutdown_are_refused_rather_than_left_waiting(
    server: RawServer, ws: Workspace
) -> None:
    await server.start(CAPABILITIES)
    assert await server.result("shutdown") is None
    error = await server.error("textDocument/hover", hover_at(ws, 2, 8))
    assert error["code"] == INVALID_REQUEST and "shutting down" in error["message"]
    server.notify("exit")
    assert await server.wait() == 0


async def test_exit_without_shutdown_exits_1(server: RawServer) -> None:
    await server.start(CAPABILITIES)
    assert await server.exit(shutdown=False) == 1


async def test_exit_after_shutdown_exits_0(server: RawServer) -> None:
    await server.start(CAPABILITIES)
    assert await server.exit(shutdown=True) == 0
