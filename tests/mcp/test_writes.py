"""`moor mcp`'s write and history tools through the SDK's client over stdio, against the real
server process on a real workspace: every write lands on disk through the engine's one
write path (checked with the real `moor` command), every refusal is an error result that
says why in text and carries the structured refusal, and each negative has its control."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from mcp.client.session import ClientSession
from mcp.types import CallToolResult

from tests.conftest import Workspace
from tests.mcp.conftest import call, error_text, run, structured

CODE = "class Client:\n    def send(self, payload):\n        return payload\n"
SEND = "net/client.py#Client.send"
TEXT = "Retries are safe: send attaches an idempotency key."


def code(ws: Workspace) -> None:
    ws.write("net/client.py", CODE)


def write(ws: Workspace, text: str = TEXT, **extra: Any) -> CallToolResult:
    return call(ws.root, "memory_write", {"text": text, "about": [SEND], **extra})


def test_a_write_lands_on_disk_bound_and_the_next_one_there_is_told_what_is_known(
    ws: Workspace,
) -> None:
    code(ws)

    async def two(session: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        first = await session.call_tool("memory_write", {"text": TEXT, "about": [SEND]})
        second = await session.call_tool(
            "memory_write",
            {
                "text": "Send returns what it was given.",
                "about": [SEND],
                "title": "Send echoes",
                "confidence": "verified",
                "questions": ["Does send still return its payload?"],
            },
        )
        return first, second

    first, second = run(ws.root, two)
    one, two_ = structured(first), structured(second)
    assert (
        one["ok"] and one["path"] == "memories/retries-are-safe-send-attaches-an-idempotency-key.md"
    )
    assert one["known_here"] == []  # the control: nothing was known there before
    text = ws.read(one["path"])
    assert f"- {SEND}" in text and "confidence: inferred" in text
    assert "author: mcp:" in text and "agent:" not in text  # provenance, not a namespace
    assert two_["path"] == "memories/send-echoes.md"
    assert "Does send still return its payload?" in ws.read(two_["path"])
    assert [(k["path"], k["state"], k["anchors"]) for k in two_["known_here"]] == [
        (one["path"], "current", [SEND])
    ]
    states = ws.states()
    assert states[one["path"]]["state"] == states[two_["path"]]["state"] == "current"
    assert ws.moor("check").code == 0


def test_a_reference_that_names_nothing_is_refused_with_suggestions(ws: Workspace) -> None:
    code(ws)
    refused = write(ws, about=["net/client.py#Client.sned"])
    assert refused.structured_content is not None
    [refusal] = refused.structured_content["refused"]
    assert refusal["code"] == "not_found" and SEND in refusal["suggestions"]
    text = error_text(refused)
    assert "names nothing that exists; did you mean net/client.py#Client.send" in text
    assert json.loads(text.splitlines()[-1])["refused"][0]["code"] == "not_found"
    assert list((ws.root / "memories").iterdir()) == []
    assert structured(write(ws))["ok"]  # the control: the right reference is written


def test_the_same_text_again_is_refused_naming_memory_edit_with_the_hash(ws: Workspace) -> None:
    code(ws)
    first = structured(write(ws))
    again = write(ws)
    assert again.structured_content is not None
    [refusal] = again.structured_content["refused"]
    assert refusal["code"] == "exists" and refusal["current_hash"] == first["content_hash"]
    assert refusal["instead"].startswith(f'memory_edit(path="{first["path"]}"')
    assert f'based_on="{first["content_hash"]}"' in error_text(again)


def test_bad_input_is_a_clear_tool_error(ws: Workspace) -> None:
    code(ws)

    async def bad(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("memory_write", {"text": "  ", "about": [SEND]}),
            await session.call_tool(
                "memory_write", {"text": TEXT, "about": [SEND], "confidence": "sure"}
            ),
            await session.call_tool("memory_write", {"text": TEXT, "about": ["../x.py#f"]}),
            await session.call_tool("memory_forget", {"path": "memories/none.md", "why": " "}),
            await session.call_tool("memory_write", {"text": TEXT}),
        ]

    empty, confidence, outside, no_why, no_about = run(ws.root, bad)
    assert "a memory needs some text" in error_text(empty)
    assert "--confidence must be one of: verified, inferred, unverified" in error_text(confidence)
    assert "../x.py#f" in error_text(outside)
    assert "forget needs a reason" in error_text(no_why)
    assert "about" in error_text(no_about)  # the SDK's own validation: a required parameter
    assert list((ws.root / "memories").iterdir()) == []
    assert structured(write(ws))["ok"]  # the control


def test_an_edit_based_on_what_was_read_lands_and_a_stale_one_is_a_conflict(
    ws: Workspace,
) -> None:
    code(ws)
    path = structured(write(ws))["path"]

    async def edit_twice(session: ClientSession) -> tuple[Any, CallToolResult, CallToolResult]:
        found = await session.call_tool("memory_search", {"query": "idempotency key"})
        hit = structured(found)["hits"][0]
        args = {"path": path, "section": hit["sections"][-1], "based_on": hit["content_hash"]}
        edited = await session.call_tool(
            "memory_edit", {**args, "text": "- Does send still attach the key?"}
        )
        stale = await session.call_tool("memory_edit", {**args, "text": "- Something else?"})
        return hit, edited, stale

    hit, edited, stale = run(ws.root, edit_twice)
    assert hit["path"] == path and hit["sections"] == [hit["title"], "When this changes, ask"]
    landed = structured(edited)
    assert landed["content_hash"] != hit["content_hash"]
    assert "- Does send still attach the key?" in ws.read(path)
    assert stale.structured_content is not None
    [conflict] = stale.structured_content["refused"]
    assert conflict["code"] == "conflict" and conflict["current_hash"] == landed["content_hash"]
    assert f"changed since {hit['content_hash']}" in error_text(stale)
    assert "Something else" not in ws.read(path)


def test_an_edit_lists_the_live_memories_already_bound_to_the_same_code(ws: Workspace) -> None:
    ws.write("net/client.py", CODE + "\n    def close(self):\n        return None\n")
    close = "net/client.py#Client.close"
    edited_send = structured(write(ws, "Send is edited.", title="Edited send"))
    about_send = structured(write(ws, "Send returns its payload.", title="About send"))
    edited_close = structured(write(ws, "Close is edited.", title="Edited close", about=[close]))
    about_close = structured(
        write(ws, "Close returns nothing.", title="About close", about=[close])
    )

    async def edit_both(session: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        results = []
        for written, title in ((edited_send, "Edited send"), (edited_close, "Edited close")):
            args = {"path": written["path"], "section": title, "based_on": written["content_hash"]}
            results.append(await session.call_tool("memory_edit", {**args, "text": "Edited."}))
        return results[0], results[1]

    send, closing = run(ws.root, edit_both)
    # By anchor only: the memories about close are not listed, nor the edited one itself.
    assert [(k["path"], k["state"], k["anchors"]) for k in structured(send)["known_here"]] == [
        (about_send["path"], "current", [SEND])
    ]
    # The control: an edit of a memory about close lists the one about close (and only it).
    assert [(k["path"], k["anchors"]) for k in structured(closing)["known_here"]] == [
        (about_close["path"], [close])
    ]


def test_supersede_retires_a_memory_from_search(ws: Workspace) -> None:
    code(ws)
    old = structured(write(ws))["path"]
    new = structured(write(ws, "Retries are safe: the server dedupes requests by key."))["path"]

    async def search(session: ClientSession) -> list[str]:
        found = await session.call_tool("memory_search", {"query": "retries safe"})
        return [hit["path"] for hit in structured(found)["hits"]]

    assert old in run(ws.root, search)  # the control: it was found before
    retired = call(ws.root, "memory_supersede", {"old": old, "by": new, "why": "more exact"})
    assert structured(retired)["done"] == [f"{old}: retired, superseded by {new}: more exact"]
    after = run(ws.root, search)
    assert old not in after and new in after
    assert ws.state(old) == "retired"
    again = call(ws.root, "memory_supersede", {"old": old, "by": new, "why": "again"})
    assert "already retired" in error_text(again)


def test_forget_then_the_same_text_is_refused_citing_why_until_restored(ws: Workspace) -> None:
    code(ws)
    path = structured(write(ws))["path"]
    gone = call(ws.root, "memory_forget", {"path": path, "why": "it never held"})
    assert structured(gone)["ok"] and not (ws.root / path).exists()

    again = write(ws, TEXT.upper())
    text = error_text(again)
    assert "forgotten on 20" in text and "it never held" in text and path in text
    assert again.structured_content is not None
    assert again.structured_content["refused"][0]["instead"].startswith(
        f'memory_restore(path="{path}"'
    )
    assert structured(write(ws, "Retries are unsafe without a key."))["ok"]  # the control

    restored = call(ws.root, "memory_restore", {"path": path, "why": "it held after all"})
    assert structured(restored)["ok"] and (ws.root / path).exists()
    assert ws.state(path) == "current"


def test_an_edit_that_would_write_the_forgotten_text_is_refused_citing_the_tombstone(
    ws: Workspace,
) -> None:
    code(ws)
    wrong = structured(write(ws))["path"]
    other = structured(write(ws, "Send returns what it was given.", title="Send echoes"))
    structured(call(ws.root, "memory_forget", {"path": wrong, "why": "it never held"}))
    before = ws.read(other["path"])

    async def edit_twice(session: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        args = {"path": other["path"], "section": "Send echoes", "based_on": other["content_hash"]}
        # The forgotten text, spelt another way: the tombstone is keyed on the value.
        refused = await session.call_tool("memory_edit", {**args, "text": TEXT.upper() + "!"})
        accepted = await session.call_tool(
            "memory_edit", {**args, "text": "Send returns its payload unchanged."}
        )
        return refused, accepted

    refused, accepted = run(ws.root, edit_twice)
    text = error_text(refused)
    assert "moor refused memory_edit" in text
    assert "forgotten on 20" in text and "it never held" in text and wrong in text
    assert refused.structured_content is not None
    [refusal] = refused.structured_content["refused"]
    assert refusal["code"] == "forgotten" and refusal["path"] == wrong
    assert refusal["instead"].startswith(f'memory_restore(path="{wrong}"')
    assert not (ws.root / wrong).exists()
    # The control: the same edit of the same section with another text is written (the
    # refusal wrote nothing, so the hash it was based on still holds).
    landed = structured(accepted)
    assert landed["ok"] and landed["path"] == other["path"]
    after = ws.read(other["path"])
    assert after != before and "Send returns its payload unchanged." in after
    assert "idempotency" not in after.lower()
    assert ws.state(other["path"]) == "current"


def test_reaffirm_makes_a_drifted_memory_current(ws: Workspace) -> None:
    code(ws)
    path = structured(write(ws))["path"]
    ws.write("net/client.py", CODE.replace("return payload", "return [payload]"))
    assert ws.state(path) == "drifted"  # the control

    empty = call(ws.root, "memory_reaffirm", {"path": path, "why": "  "})
    assert "reaffirm needs a reason" in error_text(empty)
    assert ws.state(path) == "drifted"
    done = call(ws.root, "memory_reaffirm", {"path": path, "why": "a list is still the payload"})
    assert structured(done)["ok"] and ws.state(path) == "current"


def test_reaffirm_of_a_gone_anchor_is_refused_and_changes_nothing(ws: Workspace) -> None:
    code(ws)
    path = structured(write(ws))["path"]
    ws.write("net/client.py", "class Client:\n    pass\n")
    refused = call(ws.root, "memory_reaffirm", {"path": path, "why": "it holds"})
    assert f"{path}: cannot reaffirm: {SEND}: it is gone" in error_text(refused)
    assert refused.structured_content is not None
    assert refused.structured_content["refused"][0]["code"] == "gone"
    assert ws.state(path) == "gone"


def refusal_codes(result: CallToolResult) -> list[str]:
    """The codes of an error result's refusals (its last block: `{"refused": [...]}`)."""
    error_text(result)  # it is an error result
    last = result.content[-1]
    assert last.type == "text"
    return [refused["code"] for refused in json.loads(last.text)["refused"]]


def test_each_refused_reaffirm_answers_the_engines_own_code(ws: Workspace) -> None:
    code(ws)
    path = structured(write(ws))["path"]
    reaffirm = "memory_reaffirm"

    async def calls(session: ClientSession) -> list[CallToolResult]:
        answers = [await session.call_tool(reaffirm, {"path": path, "why": "it holds"})]
        ws.write("net/client.py", "class Client:\n    pass\n")
        for arguments in (
            {"path": path, "why": "it holds"},
            {"path": "memories/no-such-memory.md", "why": "it holds"},
            {"path": path, "why": "  "},
        ):
            answers.append(await session.call_tool(reaffirm, arguments))
        return answers

    current, gone, unknown, unreasoned = run(ws.root, calls)
    # The control: a current memory is reaffirmed (its reason journalled), so the calls
    # below are refused for what each one is, not for the session or the tool.
    assert structured(current)["ok"]
    assert refusal_codes(gone) == ["gone"]
    assert refusal_codes(unknown) == ["not_found"]
    assert refusal_codes(unreasoned) == ["no_reason"]
    assert gone.structured_content is not None
    assert gone.structured_content["refused"][0]["path"] == path


def test_changes_since_pages_through_the_journal_and_refuses_a_negative_cursor(
    ws: Workspace,
) -> None:
    code(ws)
    first = structured(write(ws))["path"]
    structured(write(ws, "Send is the only way out."))

    async def pages(session: ClientSession) -> tuple[list[Any], CallToolResult, Any]:
        seen, cursor = [], 0
        while True:
            page = structured(
                await session.call_tool("changes_since", {"cursor": cursor, "limit": 2})
            )
            seen.append(page)
            cursor = page["next_cursor"]
            if not page["more"]:
                break
        negative = await session.call_tool("changes_since", {"cursor": -1})
        beyond = structured(await session.call_tool("changes_since", {"cursor": cursor + 99}))
        return seen, negative, beyond

    seen, negative, beyond = run(ws.root, pages)
    seqs = [change["seq"] for page in seen for change in page["changes"]]
    head = seen[-1]["head"]
    assert len(seen) >= 2 and seqs == list(range(1, head + 1))
    writes = [c for page in seen for c in page["changes"] if c["code"] == "add"]
    assert writes[0]["memory"] == first and writes[0]["memories"] == [first]
    assert "cursor -1" in error_text(negative)
    assert beyond["changes"] == [] and beyond["next_cursor"] == head


def test_history_tells_what_was_done_to_a_memory_even_once_forgotten(ws: Workspace) -> None:
    code(ws)
    path = structured(write(ws))["path"]
    ws.write("net/client.py", CODE.replace("return payload", "return [payload]"))
    call(ws.root, "memory_reaffirm", {"path": path, "why": "still holds"})
    call(ws.root, "memory_forget", {"path": path, "why": "it never held"})

    history = structured(call(ws.root, "memory_history", {"path": path}))
    assert history["path"] == path
    codes = [entry["code"] for entry in history["entries"] if entry["memory"] == path]
    assert codes.index("add") < codes.index("reaffirm") < codes.index("forget")
    reasons = {entry["code"]: entry["reason"] for entry in history["entries"]}
    assert reasons["reaffirm"] == "still holds" and reasons["forget"] == "it never held"
    unknown = call(ws.root, "memory_history", {"path": "memories/never.md"})
    assert unknown.is_error


def test_paths_are_the_workspace_s_wherever_the_server_was_started(ws: Workspace) -> None:
    code(ws)
    path = structured(write(ws))["path"]
    ws.write("net/client.py", CODE.replace("return payload", "return [payload]"))

    async def use(session: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        written = await session.call_tool(
            "memory_write", {"text": "Send is the only way out.", "about": [SEND]}
        )
        reaffirmed = await session.call_tool("memory_reaffirm", {"path": path, "why": "holds"})
        return written, reaffirmed

    written, reaffirmed = run(ws.root, use, cwd=ws.root / "net")
    assert (ws.root / structured(written)["path"]).exists()
    assert not (ws.root / "net" / "memories").exists()
    assert structured(reaffirmed)["path"] == path and ws.state(path) == "current"


HOLD = """
import sys
from pathlib import Path
from moor_store.writelock import write_lock
with write_lock(Path(sys.argv[1]), "moor test-holder"):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_a_write_while_another_writer_holds_the_lock_is_a_tool_error_naming_it(
    ws: Workspace,
) -> None:
    code(ws)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(ws.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    async def use(session: ClientSession) -> CallToolResult:
        return await session.call_tool("memory_write", {"text": TEXT, "about": [SEND]})

    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        busy = run(ws.root, use, env={"MOOR_WRITE_WAIT": "0.5"})
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    text = error_text(busy)
    assert f"pid {holder.pid}" in text and "moor test-holder" in text
    assert list((ws.root / "memories").iterdir()) == []
    assert structured(run(ws.root, use, env={"MOOR_WRITE_WAIT": "0.5"}))["ok"]  # the control
