"""Forget, supersede and restore as code actions on a memory, through the protocol, in a
client that asks for the reason itself (VS Code): each runs the engine's latch action with
a reason, and is offered only where it applies. How every other client gives the reason:
test_retire_reasons.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import G2, Editor, bind_all

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


async def titles(editor: Editor, rel: str) -> list[str]:
    result = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri(rel)),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [a.title for a in result or [] if isinstance(a, types.CodeAction | types.Command)]


ASKS = {"asksReasons": True}  # the client asks for a reason, as the VS Code client does


async def offered_forget(editor: Editor) -> list[str]:
    """The actions on memories/old.md once the server has checked the workspace."""
    forget = "Forget memories/old.md: it never held…"
    found: list[str] = await editor.until(
        lambda: titles(editor, "memories/old.md"), lambda offered: forget in offered
    )
    return found


def two_about_g(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", G2)
    ws.memory("old", "src/a.py#g", body="G returns two.")
    ws.memory("new", "src/a.py#g", body="G returns two, and only two.")
    bind_all(ws)


async def test_supersede_is_offered_by_each_memory_about_the_same_code_and_retires_it(
    editor: Editor,
) -> None:
    two_about_g(editor)
    await editor.start(ASKS)
    await offered_forget(editor)

    offered = await titles(editor, "memories/old.md")
    assert "Supersede memories/old.md by memories/new.md…" in offered
    assert "Forget memories/old.md: it never held…" in offered
    assert not any(t.startswith("Restore") for t in offered)  # not retired: no restore

    root = editor.ws.root
    result = await editor.execute(
        "moor.supersede", str(root / "memories/old.md"), str(root / "memories/new.md"), "clearer"
    )
    assert result["refused"] == [] and result["done"], result
    retired = await editor.one("memories/old.md", "retired")
    assert list(retired.tags or []) == [types.DiagnosticTag.Deprecated]
    assert "superseded by memories/new.md" in retired.message

    after = await titles(editor, "memories/old.md")
    assert "Restore memories/old.md: it holds after all…" in after
    assert not any(t.startswith(("Forget", "Supersede")) for t in after)


async def test_restore_un_retires_a_superseded_memory_with_its_reason(editor: Editor) -> None:
    two_about_g(editor)
    editor.ws.moor(
        "supersede", "memories/old.md", "--by", "memories/new.md", "--why", "x", check=True
    )
    await editor.start(ASKS)
    await editor.one("memories/old.md", "retired")

    result = await editor.execute(
        "moor.restore", str(editor.ws.root / "memories/old.md"), "it held after all"
    )

    assert result["refused"] == [] and result["done"], result
    assert list(await editor.diagnostics("memories/old.md", lambda items: not items)) == []
    assert "Forget memories/old.md: it never held…" in await titles(editor, "memories/old.md")


async def test_forget_removes_the_memory_and_its_text_is_flagged_when_written_again(
    editor: Editor,
) -> None:
    two_about_g(editor)
    await editor.start(ASKS)
    await offered_forget(editor)

    result = await editor.execute(
        "moor.forget", str(editor.ws.root / "memories/old.md"), "it never held"
    )

    assert result["refused"] == [] and result["done"], result
    assert not (editor.ws.root / "memories/old.md").exists()
    assert (editor.ws.root / "memories/new.md").exists()  # control: the other one stays


async def test_no_retire_action_is_offered_on_a_memory_with_unsaved_edits(editor: Editor) -> None:
    two_about_g(editor)
    await editor.start(ASKS)
    await offered_forget(editor)
    # Control: offered while the buffer reads as the file.
    editor.open("memories/old.md")
    assert "Forget memories/old.md: it never held…" in await titles(editor, "memories/old.md")

    uri = editor.uri("memories/old.md")
    editor.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(
                    text=(editor.ws.root / "memories/old.md").read_text() + "\nmore\n"
                )
            ],
        )
    )
    await editor.until(
        lambda: titles(editor, "memories/old.md"),
        lambda offered: not any(t.startswith(("Forget", "Supersede")) for t in offered),
    )
    result = await editor.execute("moor.forget", str(editor.ws.root / "memories/old.md"), "x")
    assert result["done"] == [] and result["refused"], result
    assert (editor.ws.root / "memories/old.md").exists()


EXTENSION = Path(__file__).resolve().parents[2] / "vscode-client" / "src" / "extension.ts"
_REASON_ENTRY = re.compile(
    r'"(?P<command>moor\.\w+)": \{\s*question: "(?P<question>[^"]*)",\s*'
    r'example: "(?P<example>[^"]*)",\s*before: (?P<before>\d+),\s*\}'
)


def client_prompts(source: str) -> dict[str, tuple[str, str, int]]:
    """The VS Code client's input box per command it asks a reason for (`REASONS` in
    extension.ts): its question, its placeholder and how many arguments come first."""
    return {
        m["command"]: (m["question"], m["example"], int(m["before"]))
        for m in _REASON_ENTRY.finditer(source)
    }


def prompt_problems(
    offered: list[types.Command], prompts: dict[str, tuple[str, str, int]]
) -> list[str]:
    """What is wrong with the input box VS Code shows for each offered action that comes
    without its reason: none of its own, or another action's question or placeholder."""
    problems = []
    for command in offered:
        prompt = prompts.get(command.command)
        if prompt is None:
            problems.append(f"{command.command}: no input box of its own")
            continue
        question, example, before = prompt
        if len(command.arguments or []) != before:
            problems.append(f"{command.command}: offered {command.arguments}, asks after {before}")
        problems.extend(
            f"{command.command}: the input box of {other}"
            for other, (other_question, other_example, _) in prompts.items()
            if other != command.command and (other_question == question or other_example == example)
        )
    return problems


async def test_vscode_asks_each_reason_in_an_input_box_of_its_own_supersede_included(
    editor: Editor,
) -> None:
    """The VS Code client shows an input box for an offered action that comes without its
    reason. The protocol is driven here: the server's offers under VS Code's capabilities,
    and the client's prompts as it ships; the code-server e2e (tests/e2e/vscode/run.mjs,
    step (f)) runs the Supersede action in VS Code and reads the input box itself."""
    if editor.name != "visual-studio-code":
        pytest.skip("the input box is the VS Code client's")
    two_about_g(editor)
    await editor.start(ASKS)
    await offered_forget(editor)
    result = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri("memories/old.md")),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    commands = [a.command if isinstance(a, types.CodeAction) else a for a in result or []]
    asked = [
        c for c in commands if c is not None and c.command in ("moor.supersede", "moor.forget")
    ]
    assert {c.command for c in asked} == {"moor.supersede", "moor.forget"}, commands
    prompts = client_prompts(EXTENSION.read_text(encoding="utf-8"))
    assert set(prompts) >= {"moor.reaffirm", "moor.forget", "moor.supersede", "moor.restore"}
    assert prompt_problems(asked, prompts) == []
    assert prompts["moor.supersede"][1] != prompts["moor.reaffirm"][1]
    # Control: the client as it was, supersede reusing reaffirm's placeholder, is caught.
    reused = dict(prompts)
    reused["moor.supersede"] = (prompts["moor.supersede"][0], prompts["moor.reaffirm"][1], 2)
    assert prompt_problems(asked, reused) == ["moor.supersede: the input box of moor.reaffirm"]
    missing = {k: v for k, v in prompts.items() if k != "moor.supersede"}
    assert prompt_problems(asked, missing) == ["moor.supersede: no input box of its own"]
