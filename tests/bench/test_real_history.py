"""The real-history replay (bench/real_history.py) on a small history written here: a body
change is flagged and counted as caught, a comment-only change is neither flagged nor counted
as a miss, and a rename in place is followed — the same labels the published trial uses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import pytest  # noqa: E402
import real_history  # noqa: E402

pytestmark = pytest.mark.slow

FIRST = """\
def shout(text):
    return text.upper()


def whisper(text):
    # quietly
    return text.lower()


def keep(text):
    return text
"""


def commit(work: Path, text: str, message: str) -> str:
    (work / "tool.py").write_text(text)
    env = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *env, "-C", str(work), "add", "tool.py"], check=True)
    subprocess.run(["git", *env, "-C", str(work), "commit", "-qm", message], check=True)
    return subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_a_body_change_is_caught_a_comment_change_is_not_a_miss(tmp_path: Path) -> None:
    work = tmp_path / "mirror" / "me+toy" / "repo"
    work.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    start = commit(work, FIRST, "start")
    commit(work, FIRST.replace("text.upper()", "text.upper() + '!'"), "louder")
    commit(
        work, FIRST.replace("text.upper()", "text.upper() + '!'").replace("quietly", "softly"), "c"
    )
    end = commit(
        work,
        FIRST.replace("text.upper()", "text.upper() + '!'")
        .replace("quietly", "softly")
        .replace("def keep(", "def kept("),
        "rename",
    )
    spec = real_history.Spec(
        "me/toy", start, end, ("tool.py#shout", "tool.py#whisper", "tool.py#keep")
    )
    row = real_history.summary(real_history.replay("toy", spec, tmp_path / "mirror"))

    assert row["memories"] == 3 and row["unbound"] == []
    assert row["steps"] == 3
    rows = row["rows"]
    assert isinstance(rows, list)
    # the body change: drifted, and the diff touched its code (the positive control)
    assert [r["ref"] for r in rows if r["verdict"] == "drifted"] == ["tool.py#shout"]
    assert row["flagged_code"] == 2 and row["flagged_not_code"] == []  # the drift and the move
    # the comment-only change: touched, not flagged, and not counted as a miss
    assert row["code_not_flagged"] == []
    assert row["comment_not_flagged"] == 1
    moves = row["moves"]
    assert isinstance(moves, list) and [m["note"] for m in moves] == ["tool.py#kept"]
