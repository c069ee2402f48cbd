"""The README is a door and docs/ the manual: the README stays short and has its sections,
every link of the README and docs/ leads to a file and heading of the repository, and
nothing in the repository points at a folder beside it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.docs.links import problems

REPO = Path(__file__).resolve().parents[2]
README_MAX_LINES = 250
README_SECTIONS = (
    "## Install",
    "## Five minutes with moor",
    "## In CI",
    "## Trust states",
    "## In the editor",
    "## For coding agents",
    "## Benchmarks",
    "## Contributing",
)
MANUAL = ("cli", "memories", "editors", "agents", "ci", "files", "benchmarks", "decisions")
# The folder beside the checkout that held design notes; spelled in two parts so that this
# file does not name it.
OUTSIDE = "../" + "shared"


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_the_readme_is_short_and_has_every_section_of_the_door() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert [h for h in headings if h in README_SECTIONS] == list(README_SECTIONS)
    for page in MANUAL:  # the door leads into each room of the manual
        assert f"](docs/{page}.md" in text, page


def test_every_link_in_the_readme_and_the_manual_leads_to_a_file_and_heading_here() -> None:
    found = pages()
    assert len(found) > len(MANUAL)  # the README, docs/README.md and every page
    assert problems(found, REPO) == []


def test_a_broken_link_or_anchor_and_a_link_outside_are_flagged(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "cli.md").write_text("# CLI\n\n## moor check, and `--format`\n")
    page = tmp_path / "README.md"
    page.write_text(
        "# moor\n\n## Trust states\n\n"
        "[good](docs/cli.md) [here](#trust-states)\n"
        "[good anchor](docs/cli.md#moor-check-and---format)\n"
        "[missing](docs/nowhere.md) [bad anchor](docs/cli.md#nowhere)\n"
        f"[beside]({OUTSIDE}/DESIGN.md) [web](https://example.org/)\n"
        "```\n[in code](docs/nowhere.md)\n```\n`[in a span](docs/nowhere.md)`\n"
    )
    assert problems([page], tmp_path) == [
        "README.md:7: docs/nowhere.md: no such file",
        "README.md:7: docs/cli.md#nowhere: no heading #nowhere in docs/cli.md",
        f"README.md:8: {OUTSIDE}/DESIGN.md: leads outside the repository",
        "README.md:8: https://example.org/: leads outside the repository",
    ]


def files_pointing_outside(repo: Path) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout.decode()
    found = []
    for name in filter(None, listed.split("\0")):
        path = repo / name
        if path.is_file() and not path.is_symlink():
            if OUTSIDE.encode() in path.read_bytes():
                found.append(name)
        elif path.is_symlink() and OUTSIDE in str(path.readlink()):
            found.append(name)
    return found


def test_no_file_of_the_repository_points_to_the_folder_beside_it(tmp_path: Path) -> None:
    # The control: a planted file and link in a repository of their own are found.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "notes.md").write_text(f"see `{OUTSIDE}/DESIGN.md`\n")
    (tmp_path / "clean.md").write_text("nothing beside\n")
    (tmp_path / "link").symlink_to(f"{OUTSIDE}/corpus")
    assert sorted(files_pointing_outside(tmp_path)) == ["link", "notes.md"]
    assert files_pointing_outside(REPO) == []
