"""The engine's own refusal of a request as asked (`moor_store.refusal`): a module of its
own, importing nothing of the engine, so any engine module may raise it without importing
the session (loading memories comes before sessions)."""

from __future__ import annotations

from moor_store.refusal import RefusalError


class UsageError(RefusalError):
    """The request cannot be carried out as asked (exit status 2).

    `code` names why, stably, for a program: `usage` unless the engine knows more
    (`not_found`: no such memory or file; `not_a_memory`; `agent_invalid`;
    `outside_workspace`; a reference's own code, such as `bad_reference`); `path` is the
    path it is about (workspace-relative, or as given when it is outside) and `line` its
    1-based line, when there is one."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "usage",
        path: str | None = None,
        line: int | None = None,
        suggestions: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.code = code
        self.path = path
        self.line = line
        self.suggestions = suggestions  # did you mean: what exists close to what was named
