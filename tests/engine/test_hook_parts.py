"""The pure parts of the hooks: what a prompt names, and merging Claude Code's settings."""

from __future__ import annotations

import json

import pytest
from moor_engine.agents.claude_settings import SettingsError, installed, uninstalled
from moor_engine.agents.prompt_names import matching, prompt_names, remembered


def test_a_prompt_names_paths_references_and_identifiers() -> None:
    names = prompt_names("Fix `net/client.py#Client.send`, see util/x.py and retry_policy.")
    assert {"net/client.py", "util/x.py"} <= names.paths
    assert names.refs == {"net/client.py#Client.send"}
    assert {"Client.send", "retry_policy"} <= names.identifiers
    assert "see" in names.identifiers and "a" not in prompt_names("a b").identifiers


def test_memories_match_by_path_symbol_or_last_name_and_nothing_else() -> None:
    refs = {"m/a.md": ["net/client.py#Client.send"], "m/b.md": ["util/x.py#helper"]}
    assert matching(refs, prompt_names("why does send retry")) == ["m/a.md"]
    assert matching(refs, prompt_names("open util/x.py")) == ["m/b.md"]
    assert matching(refs, prompt_names("nothing relevant here")) == []


def test_remember_is_read_only_at_the_start_of_a_prompt() -> None:
    assert remembered("  Remember: send is safe") == "send is safe"
    assert remembered("please remember: this") is None


def test_settings_merge_keeps_other_keys_and_is_idempotent() -> None:
    text, added = installed(json.dumps({"env": {"A": "1"}}))
    assert added == ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
    assert json.loads(text)["env"] == {"A": "1"}
    # An install from before the edit loop gets only the hooks it lacks.
    older = {"hooks": {event: json.loads(text)["hooks"][event] for event in added[:2]}}
    assert installed(json.dumps(older))[1] == ("PreToolUse", "PostToolUse", "Stop")
    assert installed(text) == (text, ())
    back, removed = uninstalled(text)
    assert removed == added and json.loads(back or "") == {"env": {"A": "1"}}


@pytest.mark.parametrize("text", ["[1]", "{", '{"hooks": 3}', '{"hooks": {"SessionStart": {}}}'])
def test_settings_that_are_not_mergeable_are_refused(text: str) -> None:
    with pytest.raises(SettingsError):
        installed(text)
    installed("{}")  # positive control: an empty object merges
