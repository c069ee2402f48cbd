"""What every write answers (ARCHITECTURE.md, "The path of one write"): the memory layer's
add, edit, supersede, forget and restore (`memory/memory_writes.py`,
`memory/latch_actions.py`) and the grounding actions bind, reaffirm and follow
(`grounding/actions.py`) each return one `Written` — what was done, or each refusal with
its stable `code` — and every surface renders it: the CLI's lines and exit status, its
`--format json` object, MCP's `WriteResult` and refusal shape, the editor's messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Refusal:
    """Why a write was not made: a stable `code`, a message, and what to do instead."""

    code: str
    message: str
    path: str | None = None
    ref: str | None = None
    suggestions: tuple[str, ...] = ()
    instead: str | None = None  # the command that does what was meant
    current_hash: str | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "message": self.message,
            "path": self.path,
            "ref": self.ref,
            "suggestions": list(self.suggestions),
            "instead": self.instead,
            "current_hash": self.current_hash,
        }


@dataclass(frozen=True)
class Known:
    """A memory bound to an anchor the written one is bound to: live, or retired (state
    `retired`, or `forgotten` for one whose file was removed) with why."""

    path: str
    title: str
    state: str
    anchors: tuple[str, ...]  # the shared canonical references
    retired_because: str = ""  # a retired one's reason (the engine's words); else empty

    def as_json(self) -> dict[str, object]:
        value: dict[str, object] = {
            "path": self.path,
            "title": self.title,
            "state": self.state,
            "anchors": list(self.anchors),
        }
        if self.retired_because:
            value["retired_because"] = self.retired_because
        return value


@dataclass
class Written:
    """What a write did (or, with `refused`, why nothing was written)."""

    action: str
    path: str | None = None
    content_hash: str | None = None
    done: list[str] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    known_here: list[Known] = field(default_factory=list)
    # The memory's new text, when the write rewrote it (`follow`) or would have (a dry run):
    # the editor shows it in the open buffer. Not part of the JSON: the file holds it.
    memory_text: str | None = None

    @property
    def ok(self) -> bool:
        return not self.refused

    def as_json(self) -> dict[str, object]:
        return {
            "action": self.action,
            "ok": self.ok,
            "path": self.path,
            "content_hash": self.content_hash,
            "done": self.done,
            "refused": [r.as_json() for r in self.refused],
            "known_here": [k.as_json() for k in self.known_here],
        }
