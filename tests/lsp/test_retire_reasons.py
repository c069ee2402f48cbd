"""Forget, supersede and restore in a client that does not ask for reasons itself (Neovim,
Emacs): offered all the same, the server asks for the reason as it does for reaffirm —
`window/showMessageRequest`, and a reason line written in the open memory — and Cancel
changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types
from moor_store.lockfile import parse_lock

from tests.conftest import Workspace
from tests.lsp.client_buffers import ClientBuffers
from tests.lsp.conftest import G2, Editor, bind_all
from tests.lsp.raw import UNKNOWN_METHOD, RawServer

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

OLD = "memories/old.md"
NEW = "memories/new.md"
WRITE_OWN = "Write my own reason…"
FORGET = f"Forget {OLD}: it never held…"
SUPERSEDE = f"Supersede {OLD} by {NEW}…"
RESTORE = f"Restore {OLD}: it holds after all…"
HEAD = types.Range(
    start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
)


def two_about_g(ws: Workspace) -> None:
    ws.write("src/a.py", G2)
    ws.memory("old", "src/a.py#g", body="G returns two.")
    ws.memory("new", "src/a.py#g", body="G returns two, and only two.")
    bind_all(ws)


async def offered(editor: Editor, rel: str, line: int = 0) -> list[types.CodeAction]:
    at = types.Range(
        start=types.Position(line=line, character=0), end=types.Position(line=line, character=0)
    )
    result = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=editor.document(rel),
            range=at,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


async def the_action(editor: Editor, title: str, line: int = 0) -> types.CodeAction:
    """The action titled `title` on `line` of the old memory, once the server offers it."""
    found: list[types.CodeAction] = await editor.until(
        lambda: offered(editor, OLD, line), lambda actions: any(a.title == title for a in actions)
    )
    [action] = [a for a in found if a.title == title]
    return action


async def run(editor: Editor, action: types.CodeAction) -> Any:
    assert action.command is not None
    return await editor.execute(action.command.command, *(action.command.arguments or []))


def log_of(ws: Workspace, rel: str) -> str:
    return ws.moor("log", rel, check=True).out


async def write_reason(editor: Editor, buffers: ClientBuffers, reason: str) -> int:
    """The person writes `reason` on the reason line the server put in the buffer."""
    lines = buffers.text(OLD).split("\n")
    [line] = [n for n, text in enumerate(lines) if text.startswith("<!-- moor ")]
    lines[line] = lines[line].replace("because:  -->", f"because: {reason} -->")
    buffers.type(OLD, "\n".join(lines))
    return line


async def test_forget_asks_for_ones_own_reason_cancel_keeps_it_and_the_written_reason_forgets_it(
    editor: Editor,
) -> None:
    ws = editor.ws
    two_about_g(ws)
    buffers = ClientBuffers(editor)
    buffers.pick = lambda _params: "Cancel"
    await editor.start()
    buffers.open(OLD)
    saved = ws.read(OLD)
    lock = ws.read("moor.lock")
    forget = await the_action(editor, FORGET)

    cancelled = await run(editor, forget)

    [asked] = buffers.questions
    assert asked.message == (
        f"Forget {OLD}: the file is removed and its text refused from now on. "
        "Why did it never hold?"
    )
    # No prepared reason: the reason to forget is the person's own.
    assert [a.title for a in asked.actions or []] == [WRITE_OWN, "Cancel"]
    assert cancelled == {"done": [], "refused": [], "cancelled": True}
    assert ws.read(OLD) == saved and ws.read("moor.lock") == lock and buffers.applied == []

    # The control: the same action, the person writes the reason, and it forgets.
    buffers.pick = lambda _params: WRITE_OWN
    asked_to_write = await run(editor, forget)
    assert asked_to_write["done"] == [] and "line 5" in asked_to_write["next"], asked_to_write
    assert buffers.text(OLD).split("\n")[4] == "<!-- moor forget because:  -->"
    assert ws.read(OLD) == saved  # only the buffer has the line
    line = await write_reason(editor, buffers, "g never returned two")
    written = await the_action(editor, "Forget with the reason written here", line)
    assert written.command is not None
    assert list(written.command.arguments or []) == [
        str(ws.root.resolve() / OLD),
        "g never returned two",
    ]

    done = await run(editor, written)

    assert done["refused"] == [] and done["done"], done
    assert not (ws.root / OLD).exists() and (ws.root / NEW).exists()
    [tombstone] = parse_lock(ws.read("moor.lock")).tombstones
    assert tombstone.path == OLD and tombstone.reason == "g never returned two"
    # The buffer is closed with its file (a DeleteFile the client applies), so a habitual
    # save cannot write the forgotten memory back.
    assert [d.uri for d in buffers.deleted] == [editor.uri(OLD)]
    with pytest.raises(KeyError):
        buffers.text(OLD)


async def test_supersede_prepares_a_reason_from_the_shared_code_and_a_dismissal_changes_nothing(
    editor: Editor,
) -> None:
    ws = editor.ws
    two_about_g(ws)
    buffers = ClientBuffers(editor)
    await editor.start()
    lock = ws.read("moor.lock")
    supersede = await the_action(editor, SUPERSEDE)

    dismissed = await run(editor, supersede)

    [asked] = buffers.questions
    prepared = f"{NEW} says it better, about the same code (src/a.py#g)"
    assert asked.message == (
        f"Supersede {OLD} by {NEW}: {OLD} is retired. Why does {NEW} say it better?"
    )
    assert [a.title for a in asked.actions or []] == [prepared, WRITE_OWN, "Cancel"]
    assert dismissed == {"done": [], "refused": [], "cancelled": True}
    assert ws.read("moor.lock") == lock
    assert [d.code for d in await editor.now(OLD)] == []

    # The control: the prepared reason picked retires it, with that reason.
    buffers.pick = lambda params: (params.actions or [])[0].title
    done = await run(editor, supersede)

    assert done["refused"] == [] and done["done"], done
    retired = await editor.one(OLD, "retired")
    assert f"superseded by {NEW}" in retired.message
    assert prepared in log_of(ws, OLD)


async def test_supersede_and_restore_take_a_reason_written_in_the_buffer(editor: Editor) -> None:
    ws = editor.ws
    two_about_g(ws)
    buffers = ClientBuffers(editor)
    buffers.pick = lambda _params: WRITE_OWN
    await editor.start()
    buffers.open(OLD)
    saved = ws.read(OLD)

    await run(editor, await the_action(editor, SUPERSEDE))
    assert buffers.text(OLD).split("\n")[4] == f"<!-- moor supersede by {NEW} because:  -->"
    line = await write_reason(editor, buffers, "new says only two")
    written = await the_action(editor, f"Supersede by {NEW} with the reason written here", line)
    assert written.command is not None and written.command.command == "moor.supersede"
    done = await run(editor, written)

    assert done["refused"] == [] and done["done"], done
    await editor.one(OLD, "retired")
    assert buffers.text(OLD) == saved
    assert "new says only two" in log_of(ws, OLD)

    # Retired: now restore is offered, and asks the same way.
    restore = await the_action(editor, RESTORE)
    await run(editor, restore)
    assert buffers.questions[-1].message == f"Restore {OLD}: why does it hold after all?"
    assert [a.title for a in buffers.questions[-1].actions or []] == [WRITE_OWN, "Cancel"]
    assert buffers.text(OLD).split("\n")[4] == "<!-- moor restore because:  -->"
    line = await write_reason(editor, buffers, "both hold")
    done = await run(editor, await the_action(editor, "Restore with the reason written here", line))

    assert done["refused"] == [] and done["done"], done
    assert list(await editor.diagnostics(OLD, lambda items: not items)) == []
    assert "both hold" in log_of(ws, OLD)
    assert buffers.text(OLD) == saved


@pytest.mark.parametrize("command", ["moor.forget", "moor.supersede", "moor.restore"])
async def test_a_retire_action_with_a_blank_reason_is_invalid_params_and_changes_nothing(
    editor: Editor, command: str
) -> None:
    ws = editor.ws
    two_about_g(ws)
    buffers = ClientBuffers(editor)
    await editor.start()
    await the_action(editor, FORGET)
    memory = str(ws.root / OLD)
    by = [str(ws.root / NEW)] if command == "moor.supersede" else []
    lock = ws.read("moor.lock")

    for blank in ("   ", 3):
        with pytest.raises(Exception, match="needs a reason"):
            await editor.execute(command, memory, *by, blank)
    assert (ws.root / OLD).exists() and ws.read("moor.lock") == lock
    assert buffers.questions == []  # a reason was given, though a bad one: nothing asked


async def test_a_client_that_can_neither_be_asked_nor_edit_is_offered_no_retire_action(
    ws: Workspace,
) -> None:
    two_about_g(ws)
    server = RawServer(ws.root)
    server.answers["window/showMessageRequest"] = lambda _m: UNKNOWN_METHOD
    plain = {
        "textDocument": {
            "codeAction": {
                "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}
            }
        }
    }
    head = {
        "textDocument": {"uri": (ws.root / OLD).as_uri()},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []},
    }
    forget = {"command": "moor.forget", "arguments": [str(ws.root / OLD)]}
    try:
        await server.start(plain)
        # Not asked, no reason line: only supersede carrying its prepared reason, which
        # cannot fail for want of one (memories/lsp-reasons-in-the-menu-…).
        offered = await server.result("textDocument/codeAction", head)
        assert [a["title"].split(":")[0] for a in offered] == [f"Supersede {OLD} by {NEW}"]
        assert len(offered[0]["command"]["arguments"]) == 3, offered  # with the reason
        error = await server.error("workspace/executeCommand", forget)
        assert "needs a reason" in error["message"], error
        assert (ws.root / OLD).exists()
        # The control: given its reason, the command forgets.
        done = await server.result(
            "workspace/executeCommand", {**forget, "arguments": [*forget["arguments"], "wrong"]}
        )
        assert done["done"] and not done["refused"], done
        assert not (ws.root / OLD).exists()
    finally:
        await server.kill()


async def test_a_client_that_can_only_be_asked_is_offered_supersede_with_its_prepared_reason(
    ws: Workspace,
) -> None:
    two_about_g(ws)
    server = RawServer(ws.root)
    server.answers["window/showMessageRequest"] = lambda m: m["params"]["actions"][0]
    asked = {
        "window": {"showMessage": {}},
        "textDocument": {
            "codeAction": {
                "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}
            }
        },
    }
    head = {
        "textDocument": {"uri": (ws.root / OLD).as_uri()},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []},
    }
    try:
        await server.start(asked)
        actions = await server.result("textDocument/codeAction", head)
        # Forget has no prepared reason and this client can take no reason line: not offered.
        assert [a["title"] for a in actions] == [SUPERSEDE], actions
        done = await server.result("workspace/executeCommand", actions[0]["command"])
        assert done["done"] and not done["refused"], done
        [question] = [m for m in server.asked if m["method"] == "window/showMessageRequest"]
        titles = [a["title"] for a in question["params"]["actions"]]
        assert titles == [f"{NEW} says it better, about the same code (src/a.py#g)", "Cancel"]
    finally:
        await server.kill()
