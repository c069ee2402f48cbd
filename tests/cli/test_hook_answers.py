"""A prompt hook answered from the engine's kept answer (`moor_engine.agents.hook_answers`): only
while nothing it rests on moved, with the engine's own text, never a stale verdict."""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import pytest
from moor_engine.agents import agent_hooks
from moor_engine.agents.hook_answers import FILE, cached_answer, lookup
from moor_engine.session import Session

from tests.conftest import Workspace

FUNCTIONS = 6
PROMPT = "is func_2 safe to call twice, and what about func_4?"


def function(i: int, body: str = "") -> str:
    return f"def func_{i}(value):\n    return value + {body or i}\n"


def code(bodies: dict[int, str]) -> str:
    return "\n\n".join(function(i, bodies.get(i, "")) for i in range(FUNCTIONS))


def backdate(root: Path) -> None:
    """The mtime of every file and folder changed lately put 60 s back, so none is within
    the racy window (a file modified just now never vouches: `filestat.stored`). Files
    already old are left alone: setting a time moves the ctime, which is a change."""
    now = time.time()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*files, *dirs, "."]:
            path = Path(folder) / name
            if path.stat().st_mtime > now - 30:
                os.utime(path, (now - 60, now - 60))


def with_functions(ws: Workspace) -> Workspace:
    """`ws` as a committed git workspace of FUNCTIONS functions, each with a bound memory,
    every file outside the racy window."""
    ws.write("src/many.py", code({}))
    for i in range(FUNCTIONS):
        ws.memory(f"m{i}", f"src/many.py#func_{i}", body=f"func_{i} adds {i}.")
    ws.moor("bind", check=True)
    ws.git("init", "-q")
    ws.git("add", "-A")
    ws.git("commit", "-qm", "start")
    backdate(ws.root)
    return ws


@pytest.fixture
def hooked(ws: Workspace) -> Workspace:
    return with_functions(ws)


def hook(
    ws: Workspace, prompt: str = PROMPT, event: str = "prompt", env: dict[str, str] | None = None
) -> str:
    """The context a real `moor hooks run EVENT` process gives for `prompt`."""
    return ws.hook(prompt, event, env)


def kept(ws: Workspace, prompt: str = PROMPT) -> str | None:
    answer = cached_answer(ws.root, prompt)
    return None if answer is None else answer[0]


def test_a_repeated_prompt_is_answered_from_the_kept_answer_with_the_engines_own_text(
    hooked: Workspace,
) -> None:
    assert kept(hooked) is None  # control: nothing is kept before the engine answered once
    first = hook(hooked)
    assert 'path="memories/m2.md" state="current"' in first
    assert 'path="memories/m4.md"' in first and "memories/m3.md" not in first
    assert kept(hooked) == first
    assert hook(hooked) == first


@pytest.mark.parametrize(
    "change",
    ["code body", "memory text", "new memory", "moor.toml", "moor.lock", "renamed memory"],
)
def test_a_kept_answer_is_not_used_once_anything_it_rests_on_moved(
    hooked: Workspace, change: str
) -> None:
    first = hook(hooked)
    assert kept(hooked) == first  # control: before the change it is used
    if change == "code body":
        hooked.write("src/many.py", code({2: "2 * value"}))
    elif change == "memory text":
        hooked.memory("m2", "src/many.py#func_2", body="func_2 adds two, and logs.")
    elif change == "new memory":
        hooked.memory("m2b", "src/many.py#func_2", body="func_2 is pure.")
        hooked.moor("bind", check=True)
    elif change == "moor.toml":
        hooked.write("moor.toml", 'memory_roots = ["memories"]\nignore = ["build/"]\n')
    elif change == "moor.lock":
        lock = hooked.root / "moor.lock"
        lock.write_text(lock.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    else:
        (hooked.root / "memories/m4.md").rename(hooked.root / "memories/m4-renamed.md")
        hooked.moor("bind", check=True)
    backdate(hooked.root)  # an old mtime does not hide a change: the ctime and inode move
    assert kept(hooked) is None
    second = hook(hooked)
    if change == "code body":
        assert 'path="memories/m2.md" state="drifted"' in second
    elif change == "new memory":
        assert "memories/m2b.md" in second
    elif change == "renamed memory":
        assert "memories/m4-renamed.md" in second
    if change == "memory text":  # edited since bound: not a verdict that rests on files alone
        assert 'path="memories/m2.md" state="rewritten"' in second
        assert kept(hooked) is None
    elif change == "code body":
        # Drifted, and no journal entry has seen the code as it is now: a check may date it
        # without moving any file, so the undated verdict is not kept; a dated one is.
        assert 'warning="drifted: ' in second and kept(hooked) is None
        hooked.moor("check")
        third = hook(hooked)
        assert 'warning="drifted since 20' in third and kept(hooked) == third
    else:
        assert kept(hooked) == second


def test_a_file_changed_within_the_racy_window_never_vouches(hooked: Workspace) -> None:
    hook(hooked)
    assert kept(hooked) is not None  # control: with every file old, the answer is kept
    hooked.write("src/many.py", code({}))  # the same bytes, written just now
    hook(hooked)
    assert kept(hooked) is None
    backdate(hooked.root)
    hook(hooked)
    assert kept(hooked) is not None


def test_a_retired_memory_stays_hidden_and_remember_always_goes_to_the_engine(
    hooked: Workspace,
) -> None:
    hooked.memory("m2new", "src/many.py#func_2", body="func_2 adds two, checked.")
    hooked.moor("bind", "memories/m2new.md", check=True)
    hooked.moor(
        "supersede", "memories/m2.md", "--by", "memories/m2new.md", "--why", "reworded", check=True
    )
    backdate(hooked.root)
    first = hook(hooked)
    assert "memories/m2new.md" in first and 'path="memories/m2.md"' not in first
    assert kept(hooked) == first
    # A retirement written as `supersedes:` in a memory file is a change like any other.
    hooked.write(
        "memories/m4new.md",
        hooked.read("memories/m4.md").replace("about:", "supersedes: memories/m4.md\nabout:", 1),
    )
    hooked.moor("bind", "memories/m4new.md", check=True)
    backdate(hooked.root)
    assert kept(hooked) is None
    second = hook(hooked)
    assert "memories/m4new.md" in second and 'path="memories/m4.md"' not in second
    assert 'path="memories/m4.md"' in first  # control: it was shown before
    assert kept(hooked) == second
    assert cached_answer(hooked.root, "remember: func_2 is hot") is None
    assert "remembered as" in hook(hooked, "remember: func_2 is hot, see src/many.py")


def test_a_kept_answer_that_is_not_valid_json_or_not_ours_is_not_used(hooked: Workspace) -> None:
    first = hook(hooked)
    assert kept(hooked) == first  # control
    (hooked.root / FILE).write_text("{not json", encoding="utf-8")
    assert kept(hooked) is None
    assert hook(hooked) == first
    (hooked.root / FILE).write_text(json.dumps({"format": 1, "memories": []}), encoding="utf-8")
    assert kept(hooked) is None


def random_edit(ws: Workspace, chance: random.Random, bodies: dict[int, str], step: int) -> str:
    """One random edit of the code, a memory or moor.lock, or a journalling check (or
    none); its name."""
    action = chance.choice(
        ["code", "restore", "memory", "add", "bind", "check", "nothing", "nothing"]
    )
    i = chance.randrange(FUNCTIONS)
    if action == "code":
        bodies[i] = f"{chance.randrange(100)} * value"
        ws.write("src/many.py", code(bodies))
    elif action == "restore":
        bodies.pop(i, None)
        ws.write("src/many.py", code(bodies))
    elif action == "memory":
        ws.memory(f"m{i}", f"src/many.py#func_{i}", body=f"func_{i}: {chance.random()}")
    elif action == "add":
        ws.memory(f"x{step}", f"src/many.py#func_{i}", body=f"func_{i} note {step}")
        ws.moor("bind", f"memories/x{step}.md")
    elif action == "bind":
        ws.moor("bind")
    elif action == "check":  # journals: dates what drifted, moving no file
        ws.moor("check")
    return action


@pytest.mark.parametrize("seed", [1, 2, 4])
def test_whenever_a_kept_answer_is_used_it_is_what_the_engine_answers_now(
    hooked: Workspace, seed: int
) -> None:
    """Random edits of code, memories and moor.lock; after each, the kept answer (when it
    is used at all), and the engine's answer when it starts from the kept references, must
    equal the engine's fresh one. Some steps must use each (control)."""
    chance = random.Random(seed)
    bodies: dict[int, str] = {}
    prompts = [PROMPT, "what does func_1 do?", "func_3 and src/many.py"]
    used = started_from_kept = 0
    for _step in range(18):
        action = random_edit(hooked, chance, bodies, _step)
        backdate(hooked.root)
        prompt = chance.choice(prompts)
        before, still = lookup(hooked.root, prompt)
        if still is not None:  # the engine starting from what was kept, as a hook does
            with Session.open(hooked.root) as session:
                started = agent_hooks.prompt(session, prompt, still).context
        with Session.open(hooked.root) as session:
            fresh = agent_hooks.prompt(session, prompt).context
        if before is not None:
            used += 1
            assert before[0] == fresh, f"step {_step} ({action}): a stale kept answer"
        if still is not None:
            started_from_kept += 1
            assert started == fresh, f"step {_step} ({action}): kept references went stale"
    assert used > 0 and started_from_kept > 0


def test_settings_held_in_pyproject_toml_vouch_for_a_kept_answer_like_moor_toml(
    hooked: Workspace,
) -> None:
    (hooked.root / "moor.toml").unlink()
    hooked.write("pyproject.toml", '[tool.moor]\nmemory_roots = ["memories"]\n')
    (hooked.root / "notes").mkdir()
    backdate(hooked.root)
    first = hook(hooked)
    assert 'path="memories/m2.md"' in first  # control: the settings name memories/ as the root
    assert kept(hooked) == first
    # The memories now live elsewhere, by a change to pyproject.toml's [tool.moor] alone.
    hooked.write("pyproject.toml", '[tool.moor]\nmemory_roots = ["notes"]\n')
    backdate(hooked.root)
    assert kept(hooked) is None
    assert "memories/m2.md" not in hook(hooked)


def test_a_prompt_hook_names_retired_memories_beside_one_it_shows_and_keys_the_retirement(
    hooked: Workspace,
) -> None:
    first = hook(hooked)
    assert "retired_here=" not in first  # control: nothing retired yet
    hooked.memory("m2new", "src/many.py#func_2", body="func_2 adds two, checked.")
    hooked.moor("bind", "memories/m2new.md", check=True)
    backdate(hooked.root)
    hook(hooked)
    assert kept(hooked) is not None
    hooked.moor(
        "supersede", "memories/m2.md", "--by", "memories/m2new.md", "--why", "reworded", check=True
    )
    backdate(hooked.root)
    assert kept(hooked) is None  # the kept answer rests on the retirement too
    second = hook(hooked)
    opening = next(line for line in second.splitlines() if 'path="memories/m2new.md"' in line)
    assert 'retired_here="memories/m2.md (m2): retired: superseded by memories/m2new.md' in opening
    assert "reworded" in opening
    assert kept(hooked) == second  # and kept with it, as the engine framed it
    # Forgotten: the text is gone, the reason stays beside the memory on the same code.
    hooked.moor("forget", "memories/m4.md", "--why", "func_4 is private now", check=True)
    backdate(hooked.root)
    assert kept(hooked) is None
    hooked.memory("m4new", "src/many.py#func_4", body="func_4 is internal.")
    hooked.moor("bind", "memories/m4new.md", check=True)
    backdate(hooked.root)
    third = hook(hooked)
    opening = next(line for line in third.splitlines() if 'path="memories/m4new.md"' in line)
    assert 'retired_here="memories/m4.md (m4): this text was forgotten' in opening
    assert kept(hooked) == third


def test_a_first_mention_answered_from_kept_references_keeps_the_judge_it_was_given(
    hooked: Workspace,
) -> None:
    """The engine's answer to a prompt naming other code, started from the last kept
    answer, keeps the code keys its lookup took (not stat-ing every module again): they are
    moor's modules' keys as they are."""
    from moor_engine.agents import hook_answers

    hook(hooked)  # the engine answers and keeps its answer
    other = "and func_3?"
    assert kept(hooked, other) is None  # control: func_3 was not asked about
    _cached, last = lookup(hooked.root, other)
    assert last is not None  # the engine starts from the kept references
    with Session.open(hooked.root) as session:
        answer = agent_hooks.prompt(session, other, last).context
    assert "memories/m3.md" in answer
    assert kept(hooked, other) == answer
    document = json.loads((hooked.root / FILE).read_text())
    # moor's modules as they are (touching one here would stop other tests' hook servers:
    # `vouched` compares these keys with each module's, tests/cli/test_hook_server.py).
    assert document["code"] == hook_answers.code_keys(None)
    document["code"] = {**document["code"], hook_answers.__file__: [0, 0, 0, 0, 0]}
    (hooked.root / FILE).write_text(json.dumps(document))
    assert kept(hooked, other) is None  # control: another judge's keys vouch for nothing
