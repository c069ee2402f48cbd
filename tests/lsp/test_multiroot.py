"""One server process for every workspace folder (issue 10): each root has its own check,
lock, journal and settings; documents go to the innermost root holding them; folders come
and go at run time. Every test runs with a client that is pushed to and one that pulls (and
can be told to refresh)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import pytest
import pytest_lsp
from lsprotocol import types
from moor_store.journal import Entry, Journal
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient, client_capabilities

from tests.conftest import Workspace
from tests.lsp.conftest import G2, G3, PARANOID, SERVER, Editor, bind_all, drifted_retry

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]
RETRY = "memories/retry.md"


def capabilities(shape: str) -> types.ClientCapabilities:
    if shape == "push":
        return client_capabilities("visual-studio-code")
    neovim = client_capabilities("neovim")  # pulls; told to refresh, so it is offered pull
    assert neovim.workspace is not None
    return attrs.evolve(
        neovim,
        workspace=attrs.evolve(
            neovim.workspace,
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
        ),
    )


@pytest_lsp.fixture(config=SERVER, params=["push", "pull"])  # type: ignore[untyped-decorator]
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest) -> AsyncIterator[None]:
    lsp_client.shape = request.param  # type: ignore[attr-defined]
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 5)
    finally:
        server = lsp_client._server
        if server is not None and server.returncode is None:
            server.kill()
    disagreements = [m.message for m in lsp_client.messages if m.message.startswith(PARANOID)]
    assert not disagreements, disagreements


def workspace(path: Path) -> Workspace:
    """A workspace as `moor init` leaves it (the `ws` fixture's shape), at `path`."""
    path.mkdir(parents=True)
    (path / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (path / "memories").mkdir()
    return Workspace(path.resolve())


class Roots:
    """One client, several folders: an `Editor` per folder sharing the client."""

    def __init__(self, client: LanguageClient, *folders: Workspace) -> None:
        self.client = client
        self.shape: str = client.shape  # type: ignore[attr-defined]
        self.capabilities = capabilities(self.shape)
        self.editors = {
            ws.root: Editor(client, ws, self.shape, self.capabilities) for ws in folders
        }

    def __getitem__(self, ws: Workspace) -> Editor:
        editor = self.editors.get(ws.root)
        if editor is None:
            editor = self.editors[ws.root] = Editor(self.client, ws, self.shape, self.capabilities)
        editor.result = next(iter(self.editors.values())).result
        return editor

    async def start(self, *served: Workspace) -> types.InitializeResult:
        result = await self.client.initialize_session(
            types.InitializeParams(
                capabilities=self.capabilities,
                root_uri=served[0].root.as_uri(),
                workspace_folders=[folder(ws) for ws in served],
            )
        )
        for editor in self.editors.values():
            editor.result = result
        return result

    def change(
        self, added: tuple[Workspace, ...] = (), removed: tuple[Workspace, ...] = ()
    ) -> None:
        self.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[folder(ws) for ws in added], removed=[folder(ws) for ws in removed]
                )
            )
        )


def folder(ws: Workspace) -> types.WorkspaceFolder:
    return types.WorkspaceFolder(uri=ws.root.as_uri(), name=ws.root.name)


def revisions(ws: Workspace) -> list[tuple[str, str | None, str | None]]:
    """The journal's reaffirm/follow/bind entries (what an action writes)."""
    with Journal(ws.root / ".moor/journal.sqlite") as journal:
        entries = journal.entries(anchor="src/a.py#g")
    return [(e.kind, e.code, e.reason) for e in entries if e.kind == "revise"]


def journal_entries(ws: Workspace) -> list[Entry]:
    with Journal(ws.root / ".moor/journal.sqlite") as journal:
        return list(journal.entries())


async def refreshed(client: LanguageClient, before: int, timeout: float = 60) -> None:
    """Once the server has asked the client to pull diagnostics again."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while client.diagnostic_refresh_count == before:
        assert loop.time() < deadline, "never asked to refresh"
        await asyncio.sleep(0.02)


def open_journals(client: LanguageClient) -> set[Path]:
    """The journal files the server process holds open (from /proc)."""
    server = client._server
    assert server is not None
    found = set()
    fds = Path(f"/proc/{server.pid}/fd")
    for fd in fds.iterdir():
        try:
            target = Path(os.readlink(fd))
        except OSError:
            continue
        if target.name == "journal.sqlite":
            found.add(target)
    return found


async def test_two_folders_each_get_their_own_drift_and_a_reaffirm_in_one_leaves_the_other_alone(
    client: LanguageClient, tmp_path: Path
) -> None:
    left, right = workspace(tmp_path / "left"), workspace(tmp_path / "right")
    drifted_retry(left)
    drifted_retry(right)
    roots = Roots(client, left, right)
    await roots.start(left, right)
    drifted = await roots[left].one(RETRY, "drifted")
    await roots[right].one(RETRY, "drifted")
    # Anything the first scans journal is in before this hover, queued behind them.
    assert await roots[right].hover(RETRY, 2, 5) is not None
    right_lock, right_journal = right.read("moor.lock"), journal_entries(right)
    left_lock = left.read("moor.lock")

    reaffirm = next(a for a in await roots[left].actions(RETRY, drifted) if "Reaffirm" in a.title)
    assert reaffirm.command is not None
    result = await roots[left].execute(
        reaffirm.command.command, *(reaffirm.command.arguments or []), "3 is fine on the left"
    )
    assert result["refused"] == [], result
    await roots[left].diagnostics(RETRY, lambda items: not items)
    # The left's lock and journal changed (the control) …
    assert left.read("moor.lock") != left_lock
    assert revisions(left)[-1] == ("revise", "reaffirm", "3 is fine on the left")
    # … the right's did not, and it is still drifted.
    assert right.read("moor.lock") == right_lock
    assert journal_entries(right) == right_journal
    assert [d.code for d in await roots[right].now(RETRY)] == ["drifted"]
    # A relative path names a root when only one of them has that file.
    with pytest.raises(JsonRpcInvalidParams, match="more than one"):
        await roots[right].execute("moor.reaffirm", RETRY, "which one?")
    assert right.read("moor.lock") == right_lock


async def test_a_folder_added_at_run_time_gets_its_diagnostics_and_one_removed_has_them_cleared(
    client: LanguageClient, tmp_path: Path
) -> None:
    left, right = workspace(tmp_path / "left"), workspace(tmp_path / "right")
    drifted_retry(left)
    drifted_retry(right)
    roots = Roots(client, left, right)
    await roots.start(left)
    await roots[left].one(RETRY, "drifted")
    assert await roots[right].now(RETRY) == []  # not served yet
    assert open_journals(client) == {left.root / ".moor/journal.sqlite"}

    roots.change(added=(right,))
    await roots[right].one(RETRY, "drifted")  # scanned when it was added
    assert open_journals(client) == {
        left.root / ".moor/journal.sqlite",
        right.root / ".moor/journal.sqlite",
    }

    refreshes = client.diagnostic_refresh_count
    roots.change(removed=(left,))
    await roots[left].diagnostics(RETRY, lambda items: not items)  # cleared
    if roots.shape == "pull":
        await refreshed(client, refreshes)  # told to pull again
        report = await client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        assert [item.uri for item in report.items] == [roots[right].uri(RETRY)]
    else:
        assert list(client.diagnostics[roots[left].uri(RETRY)]) == []  # published empty
    assert [d.code for d in await roots[right].now(RETRY)] == ["drifted"]
    # Its state is closed: its journal is no longer open, and its changes go unseen …
    assert open_journals(client) == {right.root / ".moor/journal.sqlite"}
    left.write("src/a.py", G2)
    right.write("src/a.py", G2)
    await roots[right].diagnostics(RETRY, lambda items: not items)  # (the control)
    left.write("src/a.py", G3)
    right.write("src/a.py", G3)
    await roots[right].one(RETRY, "drifted")
    assert await roots[left].now(RETRY) == []


async def test_a_nested_folder_with_its_own_moor_toml_is_its_own_root(
    client: LanguageClient, tmp_path: Path
) -> None:
    outer = workspace(tmp_path / "outer")
    inner = workspace(outer.root / "inner")
    # The outer root would count the nested memories too (unbound in its lock).
    outer.write("moor.toml", 'memory_roots = ["memories", "inner/memories"]\n')
    drifted_retry(outer)
    inner.write("src/a.py", G2)
    inner.memory("nested", "src/a.py#g")
    bind_all(inner)
    inner.write("src/a.py", G3)
    outer_lock = outer.read("moor.lock")
    assert "inner" not in outer_lock  # the nested memory is bound in its own lock only

    roots = Roots(client, outer, inner)
    await roots.start(outer, inner)
    await roots[outer].one(RETRY, "drifted")
    nested = await roots[inner].one("memories/nested.md", "drifted")  # against ITS lock
    assert [d.code for d in await roots[inner].now("memories/nested.md")] == ["drifted"]

    reaffirm = next(
        a for a in await roots[inner].actions("memories/nested.md", nested) if "Reaffirm" in a.title
    )
    assert reaffirm.command is not None
    inner_lock = inner.read("moor.lock")
    await roots[inner].execute(
        reaffirm.command.command, *(reaffirm.command.arguments or []), "nested holds"
    )
    await roots[inner].diagnostics("memories/nested.md", lambda items: not items)
    assert inner.read("moor.lock") != inner_lock
    assert outer.read("moor.lock") == outer_lock
    assert [d.code for d in await roots[outer].now(RETRY)] == ["drifted"]


async def test_a_document_outside_every_folder_gets_no_diagnostics_and_no_error(
    client: LanguageClient, tmp_path: Path
) -> None:
    served, elsewhere = workspace(tmp_path / "served"), workspace(tmp_path / "elsewhere")
    drifted_retry(served)
    drifted_retry(elsewhere)
    roots = Roots(client, served, elsewhere)
    await roots.start(served)
    inside, outside = roots[served], roots[elsewhere]
    inside.open(RETRY)
    outside.open(RETRY)
    diagnostic = await inside.one(RETRY, "drifted")  # the control: the same memory, served
    assert await inside.hover(RETRY, 2, 5) is not None
    assert await inside.actions(RETRY, diagnostic)

    assert await outside.now(RETRY) == []
    assert await outside.hover(RETRY, 2, 5) is None
    assert await outside.definition(RETRY, 2, 5) is None
    assert await outside.complete(RETRY, 2, 5) is None
    assert await outside.lenses("src/a.py") == []
    assert (
        await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=outside.document(RETRY),
                range=diagnostic.range,
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        is None
    )
    assert outside.uri(RETRY) not in client.diagnostics
    shown: list[types.ShowMessageParams | types.LogMessageParams] = [
        *client.messages,
        *client.log_messages,
    ]
    errors = [m.message for m in shown if m.type == types.MessageType.Error]
    assert not errors, errors


async def test_each_folder_has_its_own_settings(client: LanguageClient, tmp_path: Path) -> None:
    left, right = workspace(tmp_path / "left"), workspace(tmp_path / "right")
    drifted_retry(left)
    drifted_retry(right)
    client.set_configuration(
        {"severity": {"drifted": "error"}}, section="moor", scope_uri=left.root.as_uri()
    )
    client.set_configuration(
        {"severity": {"drifted": "hint"}}, section="moor", scope_uri=right.root.as_uri()
    )
    roots = Roots(client, left, right)
    await roots.start(left, right)
    assert (await roots[left].one(RETRY, "drifted")).severity == types.DiagnosticSeverity.Error
    assert (await roots[right].one(RETRY, "drifted")).severity == types.DiagnosticSeverity.Hint

    # Check workspace checks every root, counted together.
    checked = await roots[left].execute("moor.check")
    assert (checked["memories"], checked["summary"]) == (2, {"drifted": 2}), checked
    # workspace/symbol spans every root.
    symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
    assert symbols is not None
    assert sorted(s.location.uri for s in symbols) == sorted(
        [roots[left].uri(RETRY), roots[right].uri(RETRY)]
    )


async def test_two_client_folders_in_one_root_share_it_until_both_are_removed(
    client: LanguageClient, tmp_path: Path
) -> None:
    ws = workspace(tmp_path / "ws")
    drifted_retry(ws)
    sub = ws.root / "src"  # no moor.toml of its own: served as the root above it
    roots = Roots(client, ws)
    editor = roots[ws]
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=roots.capabilities,
            workspace_folders=[
                types.WorkspaceFolder(uri=ws.root.as_uri(), name="ws"),
                types.WorkspaceFolder(uri=sub.as_uri(), name="src"),
            ],
        )
    )
    editor.result = result
    await editor.one(RETRY, "drifted")
    assert open_journals(client) == {ws.root / ".moor/journal.sqlite"}  # one state
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=sub.as_uri(), name="src")]
            )
        )
    )
    ws.write("src/a.py", G2)  # still served: the change is seen
    await editor.diagnostics(RETRY, lambda items: not items)
    ws.write("src/a.py", G3)
    await editor.one(RETRY, "drifted")
    refreshes = client.diagnostic_refresh_count
    roots.change(removed=(ws,))  # the last client folder of the root: now it goes
    await editor.diagnostics(RETRY, lambda items: not items)
    if roots.shape == "pull":  # (told once the root is closed)
        await refreshed(client, refreshes)
    assert open_journals(client) == set()
