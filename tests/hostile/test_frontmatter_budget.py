"""A memory's frontmatter is budgeted: size, nesting depth, merge-key expansion."""

from __future__ import annotations

import pytest

from tests.conftest import Workspace
from tests.hostile.common import assert_drift_detectable, bound_handler, by_path, timed


def laughs(levels: int, about: str = "app/handler.py#handler") -> str:
    """Nine mappings merged into each level (`<<`), `levels` deep: 9**levels keys."""
    lines = ["---", "l0: &l0 {k: v}"]
    for level in range(1, levels + 1):
        merged = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"l{level}: &l{level} {{<<: [{merged}]}}")
    lines += [f"<<: *l{levels}", f"about: [{about}]", "---", "# Laughs", ""]
    return "\n".join(lines)


def test_a_billion_laughs_of_merge_keys_is_invalid_at_once_with_its_own_code(
    ws: Workspace,
) -> None:
    bound_handler(ws)
    ws.write("memories/small.md", laughs(4))  # 6,561 keys: within the budget
    ws.moor("bind", check=True)
    baseline, baseline_seconds = timed(ws, "check", "--format", "json")
    assert baseline.code == 0, baseline.err
    bomb = laughs(9)
    assert len(bomb.encode()) < 700  # about the size of the 579-byte memory
    ws.write("memories/laughs.md", bomb)
    run, seconds = timed(ws, "check", "--format", "json")
    # Before the budget this check ran for more than a minute (9**9 merged keys).
    assert seconds < 3 * baseline_seconds + 1.0, (seconds, baseline_seconds)
    assert run.code == 1
    memories = by_path(run)
    assert memories["memories/laughs.md"]["state"] == "invalid"
    assert memories["memories/laughs.md"]["code"] == "frontmatter_over_budget"
    assert "merge keys" in str(memories["memories/laughs.md"]["notes"])
    text = ws.moor("check", "memories/laughs.md").out
    assert "line 12: invalid: the merge keys ('<<') expand to more than 10,000 keys" in text
    # Controls: the same shape within budget is valid and bound like any memory.
    assert memories["memories/small.md"]["state"] == "current"
    assert memories["memories/handler.md"]["state"] == "current"
    assert_drift_detectable(ws)


@pytest.mark.parametrize(
    ("frontmatter", "says"),
    [
        ("about: [app/handler.py#handler]\nnotes: '" + "x" * 70_000 + "'\n", "characters"),
        ("about: [app/handler.py#handler]\nnotes: " + "[" * 80 + "]" * 80 + "\n", "levels deep"),
        (  # depth through aliases: each level one more list around the last
            "".join(f"d{i}: &d{i} [{f'*d{i - 1}' if i else 'x'}]\n" for i in range(70))
            + "about: [app/handler.py#handler]\n",
            "levels deep",
        ),
    ],
    ids=["size", "nesting", "nesting-through-aliases"],
)
def test_frontmatter_over_its_size_or_depth_budget_is_invalid_and_says_which(
    ws: Workspace, frontmatter: str, says: str
) -> None:
    bound_handler(ws)
    ws.write("memories/hostile.md", f"---\n{frontmatter}---\n# Hostile\n")
    states = ws.states()
    assert states["memories/hostile.md"]["state"] == "invalid"
    assert states["memories/hostile.md"]["code"] == "frontmatter_over_budget"
    assert says in str(states["memories/hostile.md"]["notes"])
    # Control: the same memory cut down to a real size is valid.
    ws.write("memories/hostile.md", "---\nabout: [app/handler.py#handler]\nnotes: [[x]]\n---\n")
    assert ws.states()["memories/hostile.md"]["state"] != "invalid"
    assert_drift_detectable(ws)
