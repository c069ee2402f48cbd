"""What the server asks when an action that needs a reason comes without one (reaffirm,
forget, supersede, restore), and the titles of its answers. Plain data: the asking itself
is `CodeActions._ask_reason` (features/code_actions.py), one place for every action
(memories/lsp-reaffirm-asks-for-its-reason.md)."""

from __future__ import annotations

from dataclasses import dataclass

WRITE_OWN = "Write my own reason…"
CANCEL = "Cancel"


@dataclass(frozen=True)
class Question:
    """The question for one action on one memory."""

    action: str  # the engine's action: reaffirm, forget, supersede or restore
    message: str  # what `window/showMessageRequest` asks
    why: str  # what the reason tells, for the person asked to write it ("x.md never held")
    reasons: tuple[str, ...] = ()  # prepared reasons a person may pick, in order
    by: str | None = None  # supersede's replacing memory, as the reason line names it


def written_title(action: str, by: str | None = None) -> str:
    """The code action that runs `action` with the reason written on the reason line."""
    if by is not None:
        return f"Supersede by {by} with the reason written here"
    return f"{action.capitalize()} with the reason written here"
