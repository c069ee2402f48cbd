"""An open memory and its file never disagree: follow writes the file (and moor.lock), never
the open buffer too — the editor reloads the unmodified buffer, which stays unmodified —
and nothing that writes a memory runs on a buffer with unsaved changes."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.conftest import Workspace
from tests.lsp.client_buffers import ClientBuffers
from tests.lsp.conftest import G2, Editor, bound_retry, drifted_retry

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

MEMORY = "memories/retry.md"


def moved_retry(editor: Editor) -> None:
    """memories/retry.md bound to src/a.py#g, which then moved to src/b.py."""
    bound_retry(editor.ws)
    editor.ws.write("src/a.py", "def other():\n    return 1\n")
    editor.ws.write("src/b.py", G2)


def follow_of(actions: list[types.CodeAction]) -> types.CodeAction:
    [follow] = [a for a in actions if a.title.startswith("Follow")]
    return follow


async def test_follow_on_an_open_memory_writes_the_file_and_sends_no_edit_to_its_buffer(
    editor: Editor,
) -> None:
    ws = editor.ws
    moved_retry(editor)
    buffers = ClientBuffers(editor)
    await editor.start()
    assert editor.capabilities.workspace is not None
    assert editor.capabilities.workspace.apply_edit  # the server could edit the buffer
    buffers.open(MEMORY)
    saved = ws.read(MEMORY)
    moved = await editor.one(MEMORY, "moved")
    follow = follow_of(await editor.actions(MEMORY, moved))
    assert follow.command is not None

    result = await editor.execute(follow.command.command, *(follow.command.arguments or []))

    assert result["done"] and not result["refused"], result
    # An edit would leave the editor's buffer modified over a file changed behind it.
    assert buffers.applied == []
    assert buffers.text(MEMORY) == saved
    assert '"src/b.py#g"' in ws.read(MEMORY)
    lock = (ws.root / "moor.lock").read_text(encoding="utf-8")
    assert "src/b.py#g" in lock and "src/a.py#g" not in lock
    # The editor reloads the buffer from the file: it holds the file, nothing is unsaved.
    buffers.type(MEMORY, ws.read(MEMORY))
    assert list(await editor.diagnostics(MEMORY, lambda items: not items)) == []
    assert (await editor.execute("moor.bind", MEMORY))["refused"] == []


async def test_a_client_without_apply_edit_gets_the_file_written_as_before(
    editor: Editor,
) -> None:
    ws = editor.ws
    moved_retry(editor)
    assert editor.capabilities.workspace is not None
    editor.capabilities.workspace.apply_edit = False
    buffers = ClientBuffers(editor)
    await editor.start()
    buffers.open(MEMORY)
    await editor.one(MEMORY, "moved")

    result = await editor.execute("moor.follow", MEMORY)

    assert result["done"] and not result["refused"], result
    assert buffers.applied == []  # never asked
    assert '"src/b.py#g"' in ws.read(MEMORY)
    assert list(await editor.diagnostics(MEMORY, lambda items: not items)) == []


async def test_follow_is_neither_offered_nor_run_on_a_memory_with_unsaved_changes(
    editor: Editor,
) -> None:
    ws = editor.ws
    moved_retry(editor)
    buffers = ClientBuffers(editor)
    await editor.start()
    buffers.open(MEMORY)
    moved = await editor.one(MEMORY, "moved")
    saved, lock = ws.read(MEMORY), (ws.root / "moor.lock").read_bytes()
    buffers.type(MEMORY, saved + "\nA note not saved yet.\n")

    titles = await editor.until(
        lambda: editor.actions(MEMORY, moved),
        lambda actions: not any(a.title.startswith("Follow") for a in actions),
    )
    assert any(a.title.startswith("Open") for a in titles)  # what writes nothing stays
    result = await editor.execute("moor.follow", MEMORY)

    assert result["done"] == [] and "unsaved changes" in result["refused"][0], result
    assert any("unsaved changes" in m.message for m in editor.client.messages)
    assert buffers.applied == []
    assert ws.read(MEMORY) == saved and (ws.root / "moor.lock").read_bytes() == lock
    # The control: the buffer back as saved, Follow is offered and runs.
    buffers.type(MEMORY, saved)
    actions = await editor.until(
        lambda: editor.actions(MEMORY, moved),
        lambda actions: any(a.title.startswith("Follow") for a in actions),
    )
    follow = follow_of(actions)
    assert follow.command is not None
    result = await editor.execute(follow.command.command, *(follow.command.arguments or []))
    assert result["done"] and not result["refused"], result


async def test_reaffirm_and_bind_are_refused_on_a_memory_with_unsaved_changes(
    editor: Editor,
) -> None:
    ws = editor.ws
    drifted_retry(ws)
    buffers = ClientBuffers(editor)
    await editor.start()
    buffers.open(MEMORY)
    drifted = await editor.one(MEMORY, "drifted")
    saved, lock = ws.read(MEMORY), (ws.root / "moor.lock").read_bytes()
    buffers.type(MEMORY, saved.replace("A decision", "An unsaved decision"))

    actions = await editor.until(
        lambda: editor.actions(MEMORY, drifted),
        lambda actions: not any(a.title.startswith("Reaffirm") for a in actions),
    )
    assert actions  # Show diff / Open stay
    for command, arguments in (("moor.reaffirm", ["it holds"]), ("moor.bind", [])):
        result = await editor.execute(command, MEMORY, *arguments)
        assert result["done"] == [] and "unsaved changes" in result["refused"][0], result
    assert buffers.questions == []  # not even asked
    assert (ws.root / "moor.lock").read_bytes() == lock
    # The control: saved, the same reaffirm is offered and done.
    ws.write_bytes(MEMORY, buffers.text(MEMORY).encode())
    await editor.diagnostics(MEMORY, lambda items: "rewritten" in [d.code for d in items])
    result = await editor.execute("moor.reaffirm", MEMORY, "it holds")
    assert result["done"] and not result["refused"], result


async def test_a_suggested_edit_is_offered_on_an_unsaved_buffer_only_while_its_reference_is_there(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/a.py", G2)
    ws.memory("typo", "src/a.py#gg")
    buffers = ClientBuffers(editor)
    await editor.start()
    buffers.open("memories/typo.md")
    gone = await editor.one("memories/typo.md", "gone")
    saved = ws.read("memories/typo.md")

    def changes(actions: list[types.CodeAction]) -> list[str]:
        return [a.title for a in actions if a.title.startswith("Change to")]

    async def offered() -> list[types.CodeAction]:
        result = await editor.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=editor.document("memories/typo.md"),
                range=gone.range,
                context=types.CodeActionContext(diagnostics=[gone]),
            )
        )
        return [a for a in result or [] if isinstance(a, types.CodeAction)]

    # Unsaved, but the reference is still where the diagnostic says: the edit applies to
    # the buffer, so it is offered.
    buffers.type("memories/typo.md", saved.replace("A decision", "An unsaved decision"))
    await editor.until(
        offered,
        lambda actions: (
            not any(a.title.startswith("Bind") for a in actions)
            and changes(actions) == ["Change to src/a.py#g"]
        ),
    )
    # The reference edited in the buffer: the edit would land on other text, so it is not.
    buffers.type("memories/typo.md", saved.replace('"src/a.py#gg"', '"src/a.py#hh"'))
    await editor.until(offered, lambda actions: not changes(actions))


async def test_a_crlf_memory_held_with_lf_lines_is_not_unsaved_and_its_file_keeps_crlf(
    editor: Editor,
) -> None:
    ws = editor.ws
    moved_retry(editor)
    crlf = ws.read(MEMORY).replace("\n", "\r\n")
    ws.write_bytes(MEMORY, crlf.encode())
    buffers = ClientBuffers(editor)
    await editor.start()
    buffers.open(MEMORY)  # as Emacs holds a DOS file: its lines end with LF in the buffer
    assert "\r" not in buffers.text(MEMORY)
    moved = await editor.one(MEMORY, "moved")

    follow = follow_of(await editor.actions(MEMORY, moved))  # offered: nothing is unsaved
    assert follow.command is not None
    result = await editor.execute(follow.command.command, *(follow.command.arguments or []))

    assert result["done"] and not result["refused"], result
    assert buffers.applied == []
    on_disk = (ws.root / MEMORY).read_bytes().decode()
    assert '"src/b.py#g"' in on_disk and on_disk.count("\r\n") == on_disk.count("\n")


async def test_follow_on_a_memory_of_the_second_root_writes_that_roots_file_and_lock_only(
    editor: Editor,
) -> None:
    first = editor.ws
    second_root = first.root.parent / "second"
    second_root.mkdir()
    (second_root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (second_root / "memories").mkdir()
    second = Workspace(second_root.resolve())
    # The same paths in both roots: only the root can tell the two memories apart.
    for ws in (first, second):
        bound_retry(ws)
        ws.write("src/a.py", "def other():\n    return 1\n")
        ws.write("src/b.py", G2)
    buffers = ClientBuffers(editor)
    editor.result = await editor.client.initialize_session(
        types.InitializeParams(
            capabilities=editor.capabilities,
            root_uri=first.root.as_uri(),
            workspace_folders=[
                types.WorkspaceFolder(uri=ws.root.as_uri(), name=ws.root.name)
                for ws in (first, second)
            ],
        )
    )
    other = Editor(editor.client, second, editor.name, editor.capabilities, editor.result)
    buffers.open(MEMORY)
    buffers.open(MEMORY, second.root)
    # The first root's memory has unsaved changes: that blocks writing to it, not to the
    # memory of the same path in the second root.
    saved = first.read(MEMORY)
    buffers.type(MEMORY, saved + "\nNot saved yet.\n")
    first_lock = (first.root / "moor.lock").read_bytes()
    moved = await other.one(MEMORY, "moved")
    follow = follow_of(await other.actions(MEMORY, moved))
    assert follow.command is not None
    assert list(follow.command.arguments or []) == [str(second.root / MEMORY)]

    result = await other.execute(follow.command.command, *(follow.command.arguments or []))

    assert result["done"] and not result["refused"], result
    assert buffers.applied == []
    assert '"src/b.py#g"' in second.read(MEMORY)
    assert "src/b.py#g" in (second.root / "moor.lock").read_text(encoding="utf-8")
    assert list(await other.diagnostics(MEMORY, lambda items: not items)) == []
    # The first root is as it was: its buffer, file and lock, and its memory still moved.
    assert buffers.text(MEMORY) == saved + "\nNot saved yet.\n"
    assert first.read(MEMORY) == saved
    assert (first.root / "moor.lock").read_bytes() == first_lock
    assert [d.code for d in await editor.now(MEMORY)] == ["moved"]
    refused = await editor.execute("moor.follow", str(first.root / MEMORY))
    assert refused["done"] == [] and "unsaved changes" in refused["refused"][0], refused
    # The control: the first root's buffer as saved, its follow writes its file.
    buffers.type(MEMORY, saved)
    moved = await editor.one(MEMORY, "moved")
    actions = await editor.until(
        lambda: editor.actions(MEMORY, moved),
        lambda actions: any(a.title.startswith("Follow") for a in actions),
    )
    follow = follow_of(actions)
    assert follow.command is not None
    assert list(follow.command.arguments or []) == [str(first.root.resolve() / MEMORY)]
    result = await editor.execute(follow.command.command, *(follow.command.arguments or []))
    assert result["done"] and not result["refused"], result
    assert buffers.applied == []
    assert '"src/b.py#g"' in first.read(MEMORY)
    assert (first.root / "moor.lock").read_bytes() != first_lock
