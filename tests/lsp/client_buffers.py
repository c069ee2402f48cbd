"""The editor's side of open buffers for pytest-lsp's client: it keeps each open document's
text, applies the server's `workspace/applyEdit` to it as an editor does (then tells the
server with `didChange`, a moment after answering, as Neovim's debounced changes arrive),
and answers `window/showMessageRequest` with what the test picks."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.lsp.conftest import Editor

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")

Pick = Callable[[types.ShowMessageRequestParams], str | None]


def _offset(text: str, position: types.Position, encoding: str) -> int:
    lines = _LINE.findall(text)
    offset = sum(len(line) for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for index, char in enumerate(line.rstrip("\r\n")):
        if units >= position.character:
            return offset + index
        if encoding == "utf-8":
            units += len(char.encode("utf-8"))
        elif encoding == "utf-32":
            units += 1
        else:
            units += 2 if ord(char) > 0xFFFF else 1
    return offset + len(line.rstrip("\r\n"))


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    spans = sorted(
        (
            (_offset(text, e.range.start, encoding), _offset(text, e.range.end, encoding), e)
            for e in edits
        ),
        key=lambda item: item[0],
        reverse=True,
    )
    for start, end, edit in spans:
        text = text[:start] + edit.new_text + text[end:]
    return text


class ClientBuffers:
    def __init__(self, editor: Editor) -> None:
        self.editor = editor
        self.texts: dict[str, str] = {}  # uri -> the buffer's text
        self.versions: dict[str, int] = {}
        self.applied: list[types.ApplyWorkspaceEditParams] = []
        self.accept = True  # False: answer `applied: false`
        self.questions: list[types.ShowMessageRequestParams] = []
        self.deleted: list[types.DeleteFile] = []
        self.pick: Pick = lambda _params: None
        client = editor.client

        def apply_edit(
            ls: Any, params: types.ApplyWorkspaceEditParams
        ) -> types.ApplyWorkspaceEditResult:
            return self._apply_edit(params)

        def question(
            ls: Any, params: types.ShowMessageRequestParams
        ) -> types.MessageActionItem | None:
            return self._question(params)

        client.feature(types.WORKSPACE_APPLY_EDIT)(apply_edit)
        client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(question)

    def open(self, rel: str, root: Path | None = None) -> None:
        """Open `rel` of the editor's root (`root`: of another workspace folder)."""
        uri = self._uri(rel, root)
        text = (root / rel).read_text(encoding="utf-8") if root else self.editor.ws.read(rel)
        self.texts[uri] = text
        self.versions[uri] = 1
        self.editor.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=text
                )
            )
        )

    def _uri(self, rel: str, root: Path | None) -> str:
        return (root / rel).as_uri() if root is not None else self.editor.uri(rel)

    def text(self, rel: str, root: Path | None = None) -> str:
        return self.texts[self._uri(rel, root)]

    def type(self, rel: str, text: str, root: Path | None = None) -> None:
        """The person edits the buffer (it is not saved)."""
        self._changed(self._uri(rel, root), text)

    def _changed(self, uri: str, text: str) -> None:
        self.texts[uri] = text
        self.versions[uri] += 1
        self.editor.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def _apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.applied.append(params)
        if not self.accept:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="declined")
        edits: dict[str, list[types.TextEdit]] = {}
        for uri, changes in (params.edit.changes or {}).items():
            edits.setdefault(uri, []).extend(changes)
        for change in params.edit.document_changes or []:
            if isinstance(change, types.DeleteFile):  # the client deletes it, closing its buffer
                self.deleted.append(change)
                self.texts.pop(change.uri, None)
                continue
            assert isinstance(change, types.TextDocumentEdit), change
            version = change.text_document.version
            uri = change.text_document.uri
            if version is not None and version != self.versions.get(uri):
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="version")
            edits.setdefault(uri, []).extend(
                e for e in change.edits if isinstance(e, types.TextEdit)
            )
        encoding = self.editor.encoding
        for uri, changes in edits.items():
            if uri not in self.texts:  # an editor opens the file to apply an edit to it
                rel = uri.removeprefix(self.editor.ws.root.as_uri() + "/")
                self.open(rel)
            new = apply_text_edits(self.texts[uri], changes, encoding)
            self.texts[uri] = new
            # The server hears of it a moment after the answer (Neovim debounces changes).
            asyncio.get_running_loop().call_soon(self._changed, uri, new)
        return types.ApplyWorkspaceEditResult(applied=True)

    def _question(self, params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        self.questions.append(params)
        title = self.pick(params)
        return None if title is None else types.MessageActionItem(title=title)
