"""The real server process (`python -m moor_lsp`) driven by pytest-lsp on real workspaces.

`editor` is parameterised over two clients with different habits: VS Code 1.65 (push
diagnostics, UTF-16 positions) and Neovim 0.11 (pull diagnostics, UTF-8 positions). A test
builds its workspace first, then calls `await editor.start()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import pytest
import pytest_lsp
from lsprotocol import types
from moor_engine.grounding.actions import bind
from moor_engine.session import Session
from pygls.protocol import default_converter
from pytest_lsp import (
    ClientServerConfig,
    LanguageClient,
    client_capabilities,
)
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from tests.conftest import Workspace

CLIENTS = ["visual-studio-code", "neovim"]
TIMEOUT = 20.0
CODE = "def g():\n    return 2\n\n\ndef h():\n    return 2\n"


class RecordingClient(LanguageClient):
    """pytest-lsp's client, also remembering every publishDiagnostics in order."""

    published: list[tuple[str, int]]
    # Set on every publishDiagnostics. pytest-lsp's own wait_for_notification keeps a
    # future a timed-out wait cancelled, and the next notification then fails the
    # session, so waits for diagnostics use this instead.
    arrived: asyncio.Event
    registrations: list[types.Registration]
    lens_refreshes: int
    # Partial results of requests (`$/progress` whose value is no work-done progress), by
    # token, as sent; `partial` is set on each.
    partials: dict[str | int, list[Any]]
    partial: asyncio.Event


def _converter() -> Any:
    """lsprotocol's converter reads any CodeAction that has a `command` as a `Command`
    (it checks for the key, not its type); clients tell them apart by `command` being a
    string, as the specification says. Only the test client's reading is corrected."""
    converter = default_converter()  # type: ignore[no-untyped-call]

    def command_or_action(value: Any, _type: Any) -> types.Command | types.CodeAction:
        if isinstance(value.get("command"), str):
            return converter.structure(value, types.Command)  # type: ignore[no-any-return]
        return converter.structure(value, types.CodeAction)  # type: ignore[no-any-return]

    converter.register_structure_hook(
        Union[types.Command, types.CodeAction],  # noqa: UP007 - the key lsprotocol registers
        command_or_action,
    )
    return converter


def make_client() -> LanguageClient:
    client = RecordingClient(converter_factory=_converter)
    client.published = []
    client.arrived = asyncio.Event()
    client.registrations = []
    client.lens_refreshes = 0
    client.partials = {}
    client.partial = asyncio.Event()

    def publish(client: RecordingClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append((params.uri, len(params.diagnostics)))
        client.arrived.set()

    def register(client: RecordingClient, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    def lens_refresh(client: RecordingClient, _params: None) -> None:
        client.lens_refreshes += 1

    def progress(client: RecordingClient, params: types.ProgressParams) -> None:
        if isinstance(params.value, dict) and "kind" not in params.value:
            client.partials.setdefault(params.token, []).append(params.value)
            client.partial.set()
        else:
            DEFAULT_CLIENT_FEATURES[types.PROGRESS](client, params)

    features = {
        **DEFAULT_CLIENT_FEATURES,
        types.WORKSPACE_CODE_LENS_REFRESH: lens_refresh,
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
        types.CLIENT_REGISTER_CAPABILITY: register,
        types.PROGRESS: progress,
    }
    register_lsp_features(client, features)
    return client


def bind_all(ws: Workspace) -> None:
    with Session.open(ws.root) as session:
        outcome = bind(session, [])
        assert not outcome.refused, outcome.refused


G2 = "def g():\n    return 2\n"
G3 = "def g():\n    return 3\n"


def bound_retry(ws: Workspace) -> None:
    """memories/retry.md bound to src/a.py#g (`G2`)."""
    ws.write("src/a.py", G2)
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)


def drifted_retry(ws: Workspace) -> None:
    """memories/retry.md bound to src/a.py#g, whose body then changed on disk."""
    bound_retry(ws)
    ws.write("src/a.py", G3)


@dataclass
class Editor:
    client: LanguageClient
    ws: Workspace
    name: str
    capabilities: types.ClientCapabilities
    result: types.InitializeResult | None = None
    _versions: dict[str, int] = field(default_factory=dict)

    async def start(self, options: Any = None) -> types.InitializeResult:
        """Initialize the server on the workspace (`options`: `initializationOptions`)."""
        uri = self.ws.root.as_uri()
        self.result = await self.client.initialize_session(
            types.InitializeParams(
                capabilities=self.capabilities,
                root_uri=uri,
                workspace_folders=[types.WorkspaceFolder(uri=uri, name="ws")],
                initialization_options=options,
            )
        )
        return self.result

    @property
    def pull(self) -> bool:
        """Whether diagnostics are pulled: the server offers pull to this client (only to
        one that can also be told to refresh)."""
        assert self.result is not None, "start the editor first"
        return self.result.capabilities.diagnostic_provider is not None

    @property
    def encoding(self) -> str:
        assert self.result is not None
        return str(self.result.capabilities.position_encoding or "utf-16")

    def uri(self, rel: str) -> str:
        return (self.ws.root / rel).as_uri()

    @property
    def recording(self) -> RecordingClient:
        """The client as the recording client every fixture here makes."""
        assert isinstance(self.client, RecordingClient)
        return self.client

    def units(self, text: str) -> int:
        """How many code units `text` takes in the negotiated position encoding."""
        if self.encoding == "utf-8":
            return len(text.encode("utf-8"))
        if self.encoding == "utf-32":
            return len(text)
        return len(text.encode("utf-16-le")) // 2

    async def diagnostics(
        self,
        rel: str,
        until: Callable[[Sequence[types.Diagnostic]], bool],
        timeout: float = TIMEOUT,
    ) -> Sequence[types.Diagnostic]:
        """The memory's diagnostics once `until` holds (pushed or pulled, as the client
        does it); fails with the last ones seen after `timeout` seconds."""
        uri = self.uri(rel)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: Sequence[types.Diagnostic] | None = None
        while True:
            if self.pull:
                report = await self.client.text_document_diagnostic_async(
                    types.DocumentDiagnosticParams(
                        text_document=types.TextDocumentIdentifier(uri=uri)
                    )
                )
                assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
                last = report.items
            else:
                self.recording.arrived.clear()
                last = self.client.diagnostics.get(uri)
            if last is not None and until(last):
                return last
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"{rel}: diagnostics never matched; last seen: {last}")
            if self.pull:
                await asyncio.sleep(min(0.1, remaining))
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.recording.arrived.wait(), min(0.5, remaining))

    async def now(self, rel: str) -> list[types.Diagnostic]:
        """The memory's diagnostics as the client has them now (a file never published
        to has none)."""
        if not self.pull:
            return list(self.client.diagnostics.get(self.uri(rel), []))
        return list(await self.diagnostics(rel, lambda items: True))

    async def one(self, rel: str, code: str) -> types.Diagnostic:
        """The single diagnostic with this code on the memory, once it is there."""
        found = await self.diagnostics(rel, lambda items: any(d.code == code for d in items))
        matching = [d for d in found if d.code == code]
        assert len(matching) == 1, found
        return matching[0]

    async def actions(self, rel: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
        result = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri(rel)),
                range=diagnostic.range,
                context=types.CodeActionContext(diagnostics=[diagnostic]),
            )
        )
        assert result is not None
        return [a for a in result if isinstance(a, types.CodeAction)]

    async def execute(self, command: str, *arguments: Any) -> Any:
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=list(arguments))
        )

    async def hover(self, rel: str, line: int, character: int) -> types.Hover | None:
        return await self.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri(rel)),
                position=types.Position(line=line, character=character),
            )
        )

    def document(self, rel: str) -> types.TextDocumentIdentifier:
        return types.TextDocumentIdentifier(uri=self.uri(rel))

    def open(self, rel: str) -> None:
        """Tell the server the editor opened a file (with its text on disk)."""
        language = "markdown" if rel.endswith(".md") else "python"
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=self.uri(rel), language_id=language, version=1, text=self.ws.read(rel)
                )
            )
        )

    async def complete(self, rel: str, line: int, character: int) -> types.CompletionList | None:
        result = await self.client.text_document_completion_async(
            types.CompletionParams(
                text_document=self.document(rel),
                position=types.Position(line=line, character=character),
            )
        )
        assert result is None or isinstance(result, types.CompletionList)
        return result

    async def definition(self, rel: str, line: int, character: int) -> Any:
        return await self.client.text_document_definition_async(
            types.DefinitionParams(
                text_document=self.document(rel),
                position=types.Position(line=line, character=character),
            )
        )

    async def lenses(self, rel: str) -> list[types.CodeLens]:
        result = await self.client.text_document_code_lens_async(
            types.CodeLensParams(text_document=self.document(rel))
        )
        return list(result or [])

    async def until(self, what: Callable[[], Any], check: Callable[[Any], bool]) -> Any:
        """Ask `what()` again every 0.1 s until `check` holds; fail after TIMEOUT."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while True:
            last = await what()
            if check(last):
                return last
            if loop.time() > deadline:
                raise AssertionError(f"never matched; last seen: {last}")
            await asyncio.sleep(0.1)


# Paranoid: after every incremental check the server checks everything from scratch and
# shows an error when the two differ; every test then also asserts that none was shown.
SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "moor_lsp"],
    client_factory=make_client,
    server_env={**os.environ, "MOOR_LSP_PARANOID": "1"},
)
PARANOID = "moor (paranoid)"


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)  # type: ignore[untyped-decorator]
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest) -> AsyncIterator[None]:
    lsp_client.client_name = request.param  # type: ignore[attr-defined]
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 5)
    finally:
        server = lsp_client._server
        if server is not None and server.returncode is None:
            server.kill()  # never initialized (the test failed first) or stuck
    disagreements = [m.message for m in lsp_client.messages if m.message.startswith(PARANOID)]
    assert not disagreements, disagreements


@pytest.fixture
def editor(client: LanguageClient, ws: Workspace) -> Editor:
    name: str = client.client_name  # type: ignore[attr-defined]
    return Editor(client, ws, name, client_capabilities(name))
