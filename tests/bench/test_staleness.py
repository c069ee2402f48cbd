"""The staleness benchmark (bench/staleness/) on a real public repository's history: moor
serves no stale memory as current and misses no current one, while its baselines still show
the two failures (if they stopped, the comparison would prove nothing); the published table
is what the harness measures. The repository is read from a git directory on the machine
(`MOOR_STALENESS_REPO`, else the pallets/click mirror). Where neither is there (a fresh CI
machine), the small run uses moor's own history instead — real commits nobody wrote for the
benchmark — so it runs in CI too; only the published table needs click."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import publish  # noqa: E402
from staleness import run as staleness  # noqa: E402
from staleness.harness import run  # noqa: E402

pytestmark = pytest.mark.slow
GIT_DIR = Path(os.environ.get("MOOR_STALENESS_REPO", str(staleness.DEFAULT_REPO)))
_ROW = re.compile(r"^\| (.+?) \| (\d+)% \| (\d+)% \| (\d\.\d\d) \| (\d+) \|$")


def git_dir() -> Path:
    if not (GIT_DIR / "HEAD").exists():
        pytest.skip(
            f"no git directory of pallets/click at {GIT_DIR}: fetch it there, or set "
            "MOOR_STALENESS_REPO to one"
        )
    return GIT_DIR


# A stretch of moor's own history in which engine functions changed, went and were rewritten.
OWN_FROM, OWN_TO, OWN_PREFIX = "07f999f", "6203fde", "engine/moor_engine"


def small_run_history() -> tuple[Path, str, str, str]:
    if (GIT_DIR / "HEAD").exists():
        return GIT_DIR, staleness.DEFAULT_FROM, staleness.DEFAULT_TO, staleness.DEFAULT_PREFIX
    found = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--path-format=absolute", "--git-common-dir"],
        capture_output=True,
        text=True,
        check=False,
    )
    own = Path(found.stdout.strip())
    have = subprocess.run(
        ["git", f"--git-dir={own}", "cat-file", "-e", f"{OWN_FROM}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    if found.returncode != 0 or have.returncode != 0:
        pytest.skip(
            f"neither pallets/click at {GIT_DIR} nor moor's own history ({OWN_FROM}) is here"
        )
    return own, OWN_FROM, OWN_TO, OWN_PREFIX


def rows(text: str) -> dict[str, tuple[int, int, float, int]]:
    found = {}
    for line in text.splitlines():
        match = _ROW.match(line)
        if match:
            name, stale, missed, recall, spent = match.groups()
            found[name] = (int(stale), int(missed), float(recall), int(spent))
    return found


def test_a_small_run_serves_no_stale_memory_as_current_and_its_baselines_do(
    tmp_path: Path,
) -> None:
    result = run(
        *small_run_history(),
        subjects=4,
        memories=40,
        work=tmp_path,
    )

    assert result.subjects == dict.fromkeys(("unchanged", "changed", "refreshed", "gone"), 4)
    moor, grep, stamp = (result.scores[n].rates() for n in ("moor", "grep", "timestamp"))
    assert moor["stale_served_as_current"] == 0.0, result.as_json()
    assert moor["current_missed"] == 0.0, result.as_json()
    assert moor["recall_at_5"] >= 0.9, result.as_json()
    # The controls: the same questions over the same files reproduce each failure.
    assert grep["stale_served_as_current"] >= 0.5, result.as_json()
    assert stamp["current_missed"] >= 0.25, result.as_json()
    assert moor["tokens_per_question"] > 0 and grep["tokens_per_question"] > 0
    assert any("basic-memory" in reason for reason in result.skipped)


def test_the_published_table_is_well_formed_with_a_row_per_system() -> None:
    text = publish.README.read_text(encoding="utf-8")
    published = publish.read_section(text, publish.STALENESS)
    assert published is not None, "docs/benchmarks.md has no staleness section"

    found = rows(published)

    assert set(found) >= set(staleness.LABELS.values()) - {"basic-memory (keyword)"}, found
    assert set(found) <= set(staleness.LABELS.values()), found
    assert found["moor"][:2] == (0, 0), found["moor"]


@pytest.mark.bench_check
def test_the_published_table_is_what_the_harness_measures(tmp_path: Path) -> None:
    result = run(
        git_dir(),
        staleness.DEFAULT_FROM,
        staleness.DEFAULT_TO,
        staleness.DEFAULT_PREFIX,
        staleness.DEFAULT_SUBJECTS,
        staleness.DEFAULT_MEMORIES,
        work=tmp_path,
        basic_memory="auto",
    )
    published = publish.read_section(publish.README.read_text(encoding="utf-8"), publish.STALENESS)
    assert published is not None
    expected = rows(published)
    measured = rows(staleness.markdown(result))
    if "basic-memory" not in result.scores:  # not installable here: said in `skipped`
        expected.pop(staleness.LABELS["basic-memory"], None)

    assert measured == expected


def test_the_published_label_names_the_repository_the_history_was_read_from(
    tmp_path: Path,
) -> None:
    from staleness.harness import Result
    from staleness.history import repository_name

    def git(*args: str) -> None:
        subprocess.run(["git", *args], check=True, capture_output=True)

    # Its remote says who it is; a mirror without one, the folder it was fetched into; else
    # the folder's own name.
    remote = tmp_path / "some" / "checkout.git"
    git("init", "-q", "--bare", str(remote))
    git(f"--git-dir={remote}", "remote", "add", "origin", "https://git.invalid/acme/widgets.git")
    mirror = tmp_path / "acme+gadgets" / "repo"
    git("init", "-q", "--bare", str(mirror))
    plain = tmp_path / "tool"
    git("init", "-q", str(plain))
    assert repository_name(remote) == "acme/widgets"
    assert repository_name(mirror) == "acme/gadgets"
    assert repository_name(plain / ".git") == "tool"
    result = Result(
        str(remote),
        ("a" * 40, "b" * 40),
        ("2026-01-01", "2026-02-01"),
        ("v1", "v2"),
        3,
        {"changed": 1},
        {},
        [],
        repository_name(remote),
    )
    assert staleness.markdown(result).startswith("acme/widgets v1 → v2 (2026-01-01 → 2026-02-01)")
    assert "pallets/click" not in staleness.markdown(result)
