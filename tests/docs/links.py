"""The links of a Markdown page, and which of them lead nowhere.

A link is `[text](target)` outside fenced code and inline code. A relative target must name
a file of the repository, and its `#anchor` (if any) a heading of that file, slugged as
GitHub slugs headings. A link to anything outside the repository — a URL, an absolute path,
a path that climbs out of it — is a problem too: the manual is read from the checkout.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"(?<!\\)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Link:
    page: Path
    line: int
    target: str


def prose_lines(text: str, *, spans: bool = False) -> Iterator[tuple[int, str]]:
    """(1-based number, line) of each line outside fenced code; inline code removed unless
    `spans` (a heading's anchor is made from its code spans' text too)."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line if spans else _CODE_SPAN.sub("", line)


def links(page: Path) -> Iterator[Link]:
    for number, line in prose_lines(page.read_text(encoding="utf-8")):
        for match in _LINK.finditer(line):
            yield Link(page, number, match.group(1))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose_lines(page.read_text(encoding="utf-8"), spans=True):
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def problem(link: Link, repo: Path) -> str | None:
    """What is wrong with `link`, or None when it leads to a file (and heading) of `repo`."""
    where = f"{link.page.relative_to(repo)}:{link.line}: {link.target}"
    target = link.target
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("/", "//")):
        return f"{where}: leads outside the repository"
    path_part, _, anchor = target.partition("#")
    file = (link.page.parent / path_part).resolve() if path_part else link.page.resolve()
    if not file.is_relative_to(repo.resolve()):
        return f"{where}: leads outside the repository"
    if not file.exists():
        return f"{where}: no such file"
    if anchor:
        if file.is_dir() or file.suffix != ".md":
            return f"{where}: an anchor into a file that is not Markdown"
        if anchor not in anchors(file):
            return f"{where}: no heading #{anchor} in {file.relative_to(repo.resolve())}"
    return None


def problems(pages: list[Path], repo: Path) -> list[str]:
    return [found for page in pages for link in links(page) if (found := problem(link, repo))]
