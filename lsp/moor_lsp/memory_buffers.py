"""A memory open in the editor and the file under it: do they differ, and editing the buffer.

The rule (memories/lsp-memory-edits-go-through-the-buffer.md): an action that writes a
memory writes the file only, never the open buffer too, and the editor reloads the
unmodified buffer; an action is refused while the buffer has unsaved changes (it would
judge and write the file, not what the editor shows) — except the reaffirm reason line,
which exists to be removed. `apply` edits only what is in the buffer alone (a reason line,
a did-you-mean edit).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types
from moor_store.inside import read_inside
from pygls.workspace import TextDocument

from moor_lsp.buffer_text import find_reason, line_edit, without_line

if TYPE_CHECKING:
    from moor_lsp.folder import Folder
    from moor_lsp.server import MoorLanguageServer

logger = logging.getLogger("moor_lsp")
APPLY_TIMEOUT = 60.0  # a client may ask its user before applying an edit


@dataclass(frozen=True)
class Applied:
    ok: bool
    why: str = ""  # why not, as the client said it (or what went wrong)


def same_text(buffer: str, disk: str) -> bool:
    """Whether a buffer holds the file's text: editors may drop a BOM or hold a CRLF file's
    lines with LF (Emacs does), and save them back as they were."""
    return _plain(buffer) == _plain(disk)


def _plain(text: str) -> str:
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


class MemoryBuffers:
    def __init__(self, server: MoorLanguageServer) -> None:
        self.server = server

    # Every method names a memory by its root's `Folder` and its path relative to that
    # root (what `MoorLanguageServer.locate` answers), so a memory is never looked for in
    # another root.

    def document(self, folder: Folder, rel: str) -> TextDocument | None:
        """The editor's buffer of `rel` in `folder`'s root, if the client has it open."""
        documents: dict[str, TextDocument] = self.server.workspace.text_documents
        for uri, document in documents.items():
            if folder.relative(uri) == rel:
                return document
        return None

    def disk_text(self, folder: Folder, rel: str) -> str | None:
        """The memory file's text on disk; None when it cannot be read (missing, a FIFO,
        a link out of the workspace: never followed, never waited on)."""
        try:
            return read_inside(folder.root, rel).decode("utf-8", "surrogateescape")
        except OSError:
            return None

    def buffer_text(self, folder: Folder, rel: str) -> str | None:
        document = self.document(folder, rel)
        return None if document is None else document.source

    def unsaved(self, folder: Folder, rel: str, *, reason_line: bool = False) -> bool:
        """Whether the open buffer differs from the file (`reason_line`: a reaffirm reason
        line that is only in the buffer does not count)."""
        buffer = self.buffer_text(folder, rel)
        if buffer is None:
            return False
        disk = self.disk_text(folder, rel)
        if disk is None:
            return True
        if same_text(buffer, disk):
            return False
        if reason_line:
            found = find_reason(buffer)
            if found is not None and same_text(without_line(buffer, found.line), disk):
                return False
        return True

    @property
    def can_apply(self) -> bool:
        return bool(self.server.capability("workspace.apply_edit"))

    async def apply(
        self,
        folder: Folder,
        rel: str,
        new: str,
        label: str,
    ) -> Applied:
        """Make the editor's text of `rel` read `new` (the open buffer's, or the file's for
        a document the client has not opened — it opens it to apply the edit)."""
        document = self.document(folder, rel)
        old = document.source if document is not None else self.disk_text(folder, rel)
        if old is None:
            return Applied(False, f"{rel} cannot be read")
        if "\r\n" in new and "\r\n" not in old and "\n" in old:
            new = new.replace("\r\n", "\n")  # the editor holds the file's CRLF as LF
        edit = line_edit(old, new, self.server.position_encoding)
        if edit is None:
            return Applied(True)
        uri = document.uri if document is not None else folder.uri(rel)
        text_edit = types.TextEdit(
            range=types.Range(
                start=types.Position(line=edit.start_line, character=0),
                end=types.Position(line=edit.end_line, character=edit.end_character),
            ),
            new_text=edit.text,
        )
        version = document.version if document is not None else None
        if self.server.capability("workspace.workspace_edit.document_changes"):
            workspace_edit = types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(
                            uri=uri, version=version
                        ),
                        edits=[text_edit],
                    )
                ]
            )
        else:
            workspace_edit = types.WorkspaceEdit(changes={uri: [text_edit]})
        try:
            result = await asyncio.wait_for(
                self.server.workspace_apply_edit_async(
                    types.ApplyWorkspaceEditParams(edit=workspace_edit, label=label)
                ),
                APPLY_TIMEOUT,
            )
        except TimeoutError:
            return Applied(False, f"no answer within {APPLY_TIMEOUT:.0f} s")
        except Exception as error:  # the client answered an error
            return Applied(False, str(error) or type(error).__name__)
        if result is None or not result.applied:
            reason = getattr(result, "failure_reason", None) if result is not None else None
            return Applied(False, reason or "the editor did not apply it")
        return Applied(True)

    async def close_deleted(self, folder: Folder, rel: str) -> Applied | None:
        """Close the open buffer of a memory whose file was just removed (forget), so a
        habitual save cannot write it back: a `DeleteFile` operation the client carries out
        itself (Neovim wipes the buffer), for a file already gone (`ignoreIfNotExists`).
        None where nothing is to close or the client takes no delete operation."""
        document = self.document(folder, rel)
        operations = self.server.capability("workspace.workspace_edit.resource_operations")
        if (
            document is None
            or not operations
            or types.ResourceOperationKind.Delete not in operations
        ):
            return None
        edit = types.WorkspaceEdit(
            document_changes=[
                types.DeleteFile(
                    uri=document.uri,
                    options=types.DeleteFileOptions(ignore_if_not_exists=True),
                )
            ]
        )
        try:
            result = await asyncio.wait_for(
                self.server.workspace_apply_edit_async(
                    types.ApplyWorkspaceEditParams(edit=edit, label=f"moor: forgot {rel}")
                ),
                APPLY_TIMEOUT,
            )
        except TimeoutError:
            return Applied(False, f"no answer within {APPLY_TIMEOUT:.0f} s")
        except Exception as error:  # the client answered an error
            return Applied(False, str(error) or type(error).__name__)
        if result is None or not result.applied:
            return Applied(False, "the editor did not close it")
        return Applied(True)
