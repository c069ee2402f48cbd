"""moor's hooks in Claude Code's `.claude/settings.json`, merged with what is there.

Claude Code reads `hooks.<Event>` as a list of matcher groups, each `{"matcher": ...,
"hooks": [{"type": "command", "command": ...}]}`. moor adds one group per event it serves
and recognises its own by the command (`moor hooks run ...`), so installing twice changes
nothing, uninstalling removes only those, and every other key, event and hook stays as it
was. A file that is not a JSON object (or whose `hooks` is not one) is refused untouched:
a guess at someone's settings is worse than a clear refusal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from moor_store.inside import NotInside, read_inside, write_inside
from moor_store.refusal import RefusalError

SETTINGS = ".claude/settings.json"
# Event -> the command Claude Code runs for it.
HOOKS = {
    "SessionStart": "moor hooks run session-start",
    "UserPromptSubmit": "moor hooks run prompt",
    "PreToolUse": "moor hooks run pre-tool-use",
    "PostToolUse": "moor hooks run post-tool-use",
    "Stop": "moor hooks run stop",
}
# The tools whose calls a tool hook is run for (Claude Code's `matcher`, a pattern of tool
# names): the file tools, whose `tool_input.file_path` names the file (`edit_loop`).
MATCHERS = {
    "PreToolUse": "Edit|Write|MultiEdit|NotebookEdit|Read",
    "PostToolUse": "Edit|Write|MultiEdit|NotebookEdit",
}
_OURS = "moor hooks run "


class SettingsError(RefusalError):
    """The settings file cannot be merged with; it was left as it was."""

    code = "settings_invalid"  # stable, for a program reading the refusal


@dataclass(frozen=True)
class SettingsChange:
    path: str
    changed: bool
    added: tuple[str, ...] = ()  # events whose hook was added
    removed: tuple[str, ...] = ()  # events whose hook was removed


def _is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and str(hook.get("command", "")).startswith(_OURS)


def _parse(text: str | None) -> dict[str, object]:
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise SettingsError(
            f"{SETTINGS} is not valid JSON (line {error.lineno}, column {error.colno}: "
            f"{error.msg}); fix it first, it was left as it was"
        ) from None
    if not isinstance(value, dict):
        raise SettingsError(f"{SETTINGS} is not a JSON object; it was left as it was")
    hooks = value.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f'{SETTINGS}: "hooks" is not an object; it was left as it was')
    for event in HOOKS:
        groups = hooks.get(event, [])
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise SettingsError(
                f'{SETTINGS}: "hooks.{event}" is not a list of matcher groups; '
                "it was left as it was"
            )
    return value


def _has_ours(groups: list[dict[str, object]]) -> bool:
    for group in groups:
        inner = group.get("hooks")
        if isinstance(inner, list) and any(_is_ours(h) for h in inner):
            return True
    return False


def installed(text: str | None) -> tuple[str, tuple[str, ...]]:
    """The settings text with moor's hooks added where missing, and the events added."""
    value = _parse(text)
    hooks = value.setdefault("hooks", {})
    assert isinstance(hooks, dict)
    added = []
    for event, command in HOOKS.items():
        groups = hooks.setdefault(event, [])
        if _has_ours(groups):
            continue
        group: dict[str, object] = {
            "hooks": [{"type": "command", "command": command, "timeout": 10}]
        }
        if event in MATCHERS:
            group = {"matcher": MATCHERS[event], **group}
        groups.append(group)
        added.append(event)
    return json.dumps(value, indent=2) + "\n", tuple(added)


def uninstalled(text: str | None) -> tuple[str | None, tuple[str, ...]]:
    """The settings text without moor's hooks (None: there was no file), and the events
    they were removed from. Groups left empty go; events left empty go."""
    if text is None:
        return None, ()
    value = _parse(text)
    hooks = value.get("hooks")
    if not isinstance(hooks, dict):
        return text, ()
    removed = []
    for event in HOOKS:
        groups = hooks.get(event)
        if not isinstance(groups, list) or not _has_ours(groups):
            continue
        kept = []
        for group in groups:
            inner = group.get("hooks")
            if isinstance(inner, list) and any(_is_ours(h) for h in inner):
                inner = [h for h in inner if not _is_ours(h)]
                if not inner:
                    continue
                group = {**group, "hooks": inner}
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
        removed.append(event)
    if not hooks:
        del value["hooks"]
    return json.dumps(value, indent=2) + "\n", tuple(removed)


def _read(root: Path) -> str | None:
    try:
        data = read_inside(root, SETTINGS)
    except FileNotFoundError:
        return None
    except (NotInside, OSError) as error:
        raise SettingsError(f"{SETTINGS} cannot be read: {error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SettingsError(f"{SETTINGS} is not UTF-8; it was left as it was") from None


def install(root: Path) -> SettingsChange:
    text, added = installed(_read(root))
    if added:
        write_inside(root, SETTINGS, text.encode("utf-8"))
    return SettingsChange(SETTINGS, bool(added), added=added)


def uninstall(root: Path) -> SettingsChange:
    text, removed = uninstalled(_read(root))
    if removed and text is not None:
        write_inside(root, SETTINGS, text.encode("utf-8"))
    return SettingsChange(SETTINGS, bool(removed), removed=removed)
