"""What a refusal is: an answer instead of the answer asked for, never an internal error.

Every error that moor answers a request with — the store's (moor.lock unreadable, the
journal busy, the write lock held, a path outside, the environment full) and the engine's
(a usage error, a configuration error) — derives from `RefusalError`, so the surfaces catch
one class: the CLI exits 2 with the message, MCP answers its refusal shape with `code`,
`path` and `line`, the language server shows the message. It lives here, the lowest layer
the others import, and imports nothing of moor.
"""

from __future__ import annotations

from pathlib import Path


class RefusalError(Exception):
    """A request refused. `code` names why, stably, for a program (each kind sets its own);
    `path` is what it is about (workspace-relative, or a `Path` the surface shows relative
    to the root) and `line` its 1-based line, when known."""

    code: str = "refused"
    path: str | Path | None = None
    line: int | None = None
