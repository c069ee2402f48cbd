"""moor's hooks in an agent's hook settings file, merged with what is there.

Each agent that moor serves has a `Layout`: the file its hooks live in, the events moor
installs and the command each runs, and how the file nests them. Claude Code and Gemini CLI
read `hooks.<Event>` as a list of matcher groups, `{"matcher": ..., "hooks": [{"type":
"command", "command": ...}]}` (`grouped`); Cursor reads `hooks.<event>` as a flat list of
`{"command": ...}` beside `"version": 1`. moor recognises its own entries by the command
(`moor hooks run ...`), so installing twice changes nothing, uninstalling removes only
those, and every other key, event and hook stays as it was. A file that is not a JSON
object (or whose `hooks` is not one) is refused untouched: a guess at someone's settings
is worse than a clear refusal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from moor_store.inside import NotInside, read_inside, write_inside
from moor_store.refusal import RefusalError

_OURS = "moor hooks run "


class SettingsError(RefusalError):
    """The settings file cannot be merged with; it was left as it was."""

    code = "settings_invalid"  # stable, for a program reading the refusal


@dataclass(frozen=True)
class Layout:
    agent: str
    file: str  # workspace-relative
    hooks: Mapping[str, str]  # the agent's event -> the command it runs
    matchers: Mapping[str, str] = field(default_factory=dict)  # event -> tool pattern
    grouped: bool = True  # matcher groups (Claude Code, Gemini CLI) or a flat list (Cursor)
    entry: Mapping[str, object] = field(default_factory=dict)  # more fields of each hook
    top: Mapping[str, object] = field(default_factory=dict)  # keys the file must have
    notice: str = ""  # what a person must still do for the agent to run them


@dataclass(frozen=True)
class SettingsChange:
    path: str
    changed: bool
    added: tuple[str, ...] = ()  # events whose hook was added
    removed: tuple[str, ...] = ()  # events whose hook was removed


def _is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and str(hook.get("command", "")).startswith(_OURS)


def _parse(layout: Layout, text: str | None) -> dict[str, object]:
    name = layout.file
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise SettingsError(
            f"{name} is not valid JSON (line {error.lineno}, column {error.colno}: "
            f"{error.msg}); fix it first, it was left as it was"
        ) from None
    if not isinstance(value, dict):
        raise SettingsError(f"{name} is not a JSON object; it was left as it was")
    hooks = value.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f'{name}: "hooks" is not an object; it was left as it was')
    what = "matcher groups" if layout.grouped else "hooks"
    for event in layout.hooks:
        entries = hooks.get(event, [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise SettingsError(
                f'{name}: "hooks.{event}" is not a list of {what}; it was left as it was'
            )
    return value


def _has_ours(layout: Layout, entries: list[dict[str, object]]) -> bool:
    if not layout.grouped:
        return any(_is_ours(entry) for entry in entries)
    for group in entries:
        inner = group.get("hooks")
        if isinstance(inner, list) and any(_is_ours(h) for h in inner):
            return True
    return False


def _entry(layout: Layout, event: str, command: str) -> dict[str, object]:
    hook: dict[str, object] = {"command": command, **layout.entry}
    if not layout.grouped:
        return hook
    group: dict[str, object] = {"hooks": [{"type": "command", **hook}]}
    if event in layout.matchers:
        group = {"matcher": layout.matchers[event], **group}
    return group


def installed(layout: Layout, text: str | None) -> tuple[str, tuple[str, ...]]:
    """The settings text with moor's hooks added where missing, and the events added."""
    value = _parse(layout, text)
    for key, default in layout.top.items():
        value.setdefault(key, default)
    hooks = value.setdefault("hooks", {})
    assert isinstance(hooks, dict)
    added = []
    for event, command in layout.hooks.items():
        entries = hooks.setdefault(event, [])
        if _has_ours(layout, entries):
            continue
        entries.append(_entry(layout, event, command))
        added.append(event)
    return json.dumps(value, indent=2) + "\n", tuple(added)


def _without_ours(layout: Layout, entries: list[dict[str, object]]) -> list[dict[str, object]]:
    if not layout.grouped:
        return [entry for entry in entries if not _is_ours(entry)]
    kept = []
    for group in entries:
        inner = group.get("hooks")
        if isinstance(inner, list) and any(_is_ours(h) for h in inner):
            inner = [h for h in inner if not _is_ours(h)]
            if not inner:
                continue
            group = {**group, "hooks": inner}
        kept.append(group)
    return kept


def uninstalled(layout: Layout, text: str | None) -> tuple[str | None, tuple[str, ...]]:
    """The settings text without moor's hooks (None: there was no file), and the events
    they were removed from. Groups left empty go; events left empty go."""
    if text is None:
        return None, ()
    value = _parse(layout, text)
    hooks = value.get("hooks")
    if not isinstance(hooks, dict):
        return text, ()
    removed = []
    for event in layout.hooks:
        entries = hooks.get(event)
        if not isinstance(entries, list) or not _has_ours(layout, entries):
            continue
        kept = _without_ours(layout, entries)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
        removed.append(event)
    if not hooks:
        del value["hooks"]
    return json.dumps(value, indent=2) + "\n", tuple(removed)


def _read(root: Path, name: str) -> str | None:
    try:
        data = read_inside(root, name)
    except FileNotFoundError:
        return None
    except (NotInside, OSError) as error:
        raise SettingsError(f"{name} cannot be read: {error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SettingsError(f"{name} is not UTF-8; it was left as it was") from None


def install(layout: Layout, root: Path) -> SettingsChange:
    text, added = installed(layout, _read(root, layout.file))
    if added:
        write_inside(root, layout.file, text.encode("utf-8"))
    return SettingsChange(layout.file, bool(added), added=added)


def uninstall(layout: Layout, root: Path) -> SettingsChange:
    text, removed = uninstalled(layout, _read(root, layout.file))
    if removed and text is not None:
        write_inside(root, layout.file, text.encode("utf-8"))
    return SettingsChange(layout.file, bool(removed), removed=removed)
