"""A repository's `.gitignore` is untrusted: a 5 MB line or a pattern git accepts that a
regex does not (`[z-a]`) never crashes or hangs moor, and moor ignores what git ignores."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from moor_engine.workspace.gitignore import GitIgnores

from tests.conftest import Workspace
from tests.hostile.common import CODE, timed

# A 5 MB line; a reversed range (git: [z]); classes; a many-star pattern that a
# backtracking regex needs minutes for against a long name of a's (git: milliseconds).
STARS = "*a" * 12 + "b"
LONG = "a" * 60
HOSTILE = "a" * (5 * 1024 * 1024) + f"\n[z-a]*.py\n[[:alpha:]][[:digit:]].py\n{STARS}\n"


def git_ignores(tmp: Path, ignore: str, paths: list[str]) -> list[str]:
    """What real git says of `paths` under this `.gitignore` (a scratch repository)."""
    tmp.mkdir()
    subprocess.run(["git", "init", "-q", str(tmp)], check=True)
    (tmp / ".gitignore").write_text(ignore, encoding="utf-8")
    out = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin", "-z"],
        cwd=tmp,
        input="\0".join(paths) + "\0",
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return sorted(p for p in out.split("\0") if p)


def test_a_five_megabyte_line_and_a_reversed_range_ignore_what_git_ignores(
    ws: Workspace, tmp_path: Path
) -> None:
    # No .git: moved code is looked for by walking the tree, through moor's own ignore rules.
    ws.write("app/handler.py", CODE)
    ws.memory("handler", "app/handler.py#handler")
    ws.moor("bind", check=True)
    (ws.root / "app/handler.py").unlink()
    ws.write("app/zeta.py", CODE)  # git ignores it ([z-a] is [z]): not where code moved
    baseline, baseline_seconds = timed(ws, "check", "--format", "json")
    assert baseline.code == 1, baseline.err
    ws.write(".gitignore", HOSTILE)
    ws.write(f"app/{LONG}.py", "x = 1\n")  # the walk matches its name against every pattern
    paths = ["app/zeta.py", "app/alpha.py", "z.py", "a.py", "b7.py", "77.py", LONG, LONG + "b"]
    expected = ["app/zeta.py", "b7.py", "z.py", LONG + "b"]
    assert git_ignores(tmp_path / "git", HOSTILE, paths) == sorted(expected)
    ignores = GitIgnores(ws.root)
    assert sorted(p for p in paths if ignores.ignored(p)) == sorted(expected)
    run, seconds = timed(ws, "check", "--format", "json")
    assert seconds < 3 * baseline_seconds + 1.0, (seconds, baseline_seconds)
    assert run.code == 1 and not run.err, run.err
    assert ws.anchor("memories/handler.md")["state"] == "gone"
    # Control: the same code in a file git does not ignore is found where it moved.
    ws.write("app/alpha.py", CODE)
    anchor = ws.anchor("memories/handler.md")
    assert anchor["state"] == "moved"
    assert anchor["moved_to"] == "app/alpha.py#handler"


ATOMS = ["[", "]", "!", "^", "-", "a", "b", "z", "A", "*", "?", "\\", ":", ".", " ", "/", "0"]
ATOMS += ["[:alpha:]", "[:digit:]", "[:punct:]", "[:nope:]", "**/"]
NAMES = ["a", "b", "z", "A", "ab", "a-b", "!", "^", "-", "]", "[", "a]", "z0", "a.b", "0", "\\"]
NAMES += ["[a]", "a b", "b!", "za", "Z", "d/a", "d/z", "d/!", "d/a b", "d/e/b"]


def test_random_bracket_escape_and_star_patterns_match_git_check_ignore(tmp_path: Path) -> None:
    rng = random.Random(20261202)
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    disagreements: list[tuple[list[str], list[str], list[str]]] = []
    ignored_somewhere = kept_somewhere = 0
    for _ in range(150):
        patterns = []
        for _ in range(rng.randrange(1, 4)):
            pattern = "".join(rng.choice(ATOMS) for _ in range(rng.randrange(1, 7)))
            pattern = f"[{pattern}]" if rng.random() < 0.3 else pattern
            # A leading '!' is left out: pathspec's negation precedence is another matter.
            patterns.append("x" + pattern if pattern.startswith("!") else pattern)
        text = "\n".join(patterns) + "\n"
        (root / ".gitignore").write_text(text, encoding="utf-8")
        out = subprocess.run(
            ["git", "check-ignore", "--no-index", "--stdin", "-z"],
            cwd=root,
            input="\0".join(NAMES) + "\0",
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        by_git = sorted(p for p in out.split("\0") if p)
        ignores = GitIgnores(root)
        by_moor = sorted(p for p in NAMES if ignores.ignored(p))
        if by_git != by_moor:
            disagreements.append((patterns, by_git, by_moor))
        ignored_somewhere += bool(by_git)
        kept_somewhere += len(by_git) < len(NAMES)
    assert disagreements == []
    # The patterns are not all trivial: many ignore something, and many keep something.
    assert ignored_somewhere > 50 and kept_somewhere > 50
