"""What git ignores in a workspace: every `.gitignore` (nested ones too) and `.git/info/exclude`.

Patterns are matched by `pathspec`'s `GitIgnoreSpec`, which follows git's own rules (`**`,
anchoring, `dir/` patterns, `!` negations, the last matching pattern wins). Files are read
lazily, one folder at a time, and remembered until `forget`. As in git, a deeper file's
patterns override a shallower one's, and nothing inside an ignored folder can be
re-included by a negation.

A repository's ignore files are untrusted input, so each line is first read the way git
reads it (`git_pattern`): lines split on LF only, trailing spaces trimmed as git trims
them, bracket expressions (`[z-a]`, `[[:alpha:]]`, `[!/]`) rewritten into the set of
characters git's wildmatch matches, star runs collapsed, and a pattern that can match no
path (longer than any path, an unclosed `[`, an unknown class) dropped. A pattern
`pathspec` still cannot compile is skipped, never a crash.
"""

from __future__ import annotations

import os
import re
import stat
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from moor_store.inside import NotInside, read_inside

if TYPE_CHECKING:  # pathspec is imported when an ignore file is first compiled
    from pathspec import GitIgnoreSpec
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

IGNORE_FILE = ".gitignore"
EXCLUDE_FILE = ".git/info/exclude"  # the repository's own, untracked ignore rules
MAX_IGNORE_FILE = 100 * 1024 * 1024  # git ignores pattern files larger than this
PATH_MAX = 4096  # no path moor can be asked about is longer: a longer pattern matches none
_TOP = 0x10FFFF
# git's character classes (sane_ctype: ASCII only; `space` is space, tab, LF, CR).
_CLASSES: dict[str, tuple[tuple[int, int], ...]] = {
    "alnum": ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)),
    "alpha": ((0x41, 0x5A), (0x61, 0x7A)),
    "blank": ((0x09, 0x09), (0x20, 0x20)),
    "cntrl": ((0x00, 0x1F), (0x7F, 0x7F)),
    "digit": ((0x30, 0x39),),
    "graph": ((0x21, 0x7E),),
    "lower": ((0x61, 0x7A),),
    "print": ((0x20, 0x7E),),
    "punct": ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)),
    "space": ((0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20)),
    "upper": ((0x41, 0x5A),),
    "xdigit": ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66)),
}
# Characters a bracket's content cannot start with in pathspec (negation, nested set) or
# that must sit at one end of it; emitted on their own, after the ranges.
_AWKWARD = "]-!^["
_SLASH = ord("/")
_STAR = "[^/]*"  # what pathspec writes for a `*` inside a path segment
_ESCAPES = re.compile(r"\\.|\[\^/\]")  # an escaped character, or `?`
_NOT_FIXED = re.compile(r"[/()|$*+?{}]")
_TOKEN = re.compile(r"[^\\*\[]+|\*+|\\.?|\[", re.DOTALL)


class GitIgnores:
    def __init__(self, root: Path, warn: Callable[[str], None] | None = None) -> None:
        self.root = root
        # Told of an ignore file that is there but not read (a FIFO, a link out of the
        # workspace, too large): its patterns are not applied, and the user should know.
        self._warn = warn or (lambda _message: None)
        self._specs: dict[str, list[GitIgnoreSpec]] = {}  # folder ("" for root) -> specs
        self._folders: dict[str, bool] = {}  # folder -> ignored (a cache)

    def forget(self) -> None:
        """Read the ignore files again when next asked (one of them changed)."""
        self._specs.clear()
        self._folders.clear()

    def ignored(self, rel: str, folder: bool = False) -> bool:
        """Whether git ignores the workspace-relative path `rel` (a folder when `folder`)."""
        parts = [part for part in rel.split("/") if part]
        if not parts:
            return False
        if self._in_ignored_folder(parts[:-1]):
            return True
        return self._decides(parts, folder)

    def _in_ignored_folder(self, parts: list[str]) -> bool:
        for depth in range(1, len(parts) + 1):
            key = "/".join(parts[:depth])
            if key not in self._folders:
                self._folders[key] = self._decides(parts[:depth], True)
            if self._folders[key]:
                return True
        return False

    def _decides(self, parts: list[str], folder: bool) -> bool:
        """The deepest ignore file with a pattern matching `parts` decides; none: kept."""
        for depth in range(len(parts) - 1, -1, -1):
            base = "/".join(parts[:depth])
            below = "/".join(parts[depth:]) + ("/" if folder else "")
            for spec in reversed(self._load(base)):
                verdict = spec.check_file(below).include
                if verdict is not None:
                    return verdict
        return False

    def _load(self, base: str) -> list[GitIgnoreSpec]:
        if base not in self._specs:
            files = [IGNORE_FILE] if base else [EXCLUDE_FILE, IGNORE_FILE]
            specs = []
            for name in files:
                text = self._read(f"{base}/{name}" if base else name)
                if text is not None:
                    specs.append(compile_ignore_file(text))
            self._specs[base] = specs
        return self._specs[base]

    def _read(self, rel: str) -> str | None:
        """The ignore file's text, read inside the workspace only and never blocking; None
        when there is none or it cannot be read (then a warning says it was skipped)."""
        if _certainly_absent(self.root / rel):  # most folders have none: no walk for them
            return None
        try:
            data = read_inside(self.root, rel, limit=MAX_IGNORE_FILE)
        except FileNotFoundError:
            return None
        except NotInside as error:
            self._warn(f"{rel}: not read ({error.message}); its patterns are not applied")
            return None
        except OSError as error:
            if isinstance(error, NotADirectoryError):
                return None  # a file where a folder on the way was expected: no ignore file
            self._warn(f"{rel}: not read ({error.strerror or error}); its patterns are not applied")
            return None
        return data.decode("utf-8", errors="replace")


def _certainly_absent(path: Path) -> bool:
    """Whether `path` does not exist, by one lstat; on any other error it may exist, and the
    contained read says what is wrong with it."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False


def git_would_block(root: Path) -> bool:
    """Whether git, asked for a listing that reads ignore files (`--exclude-standard`),
    would wait forever: git opens the top `.gitignore` and `.git/info/exclude` with a
    blocking open, so one that is a FIFO (or a link to one) stops it until moor's git
    timeout. Then moor lists the files itself (`GitIgnores`, which says what it skipped).
    A nested one is not looked for (that would cost a walk): the timeout still bounds it."""
    for rel in (IGNORE_FILE, EXCLUDE_FILE):
        try:
            mode = os.stat(root / rel).st_mode  # a stat opens nothing: it cannot block
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            return True
    return False


def compile_ignore_file(text: str) -> GitIgnoreSpec:
    """The patterns of one ignore file, each read as git reads it (`git_pattern`)."""
    text = text.removeprefix("\ufeff")
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    patterns = [p for p in map(git_pattern, lines) if p is not None]
    with warnings.catch_warnings():
        # re warns of a '[' that a future Python may read as a nested set; it is literal.
        warnings.simplefilter("ignore", FutureWarning)
        try:
            return _spec(patterns)
        except (ValueError, re.error):
            return _spec([p for p in patterns if _compiles(p)])


def _spec(patterns: list[str]) -> GitIgnoreSpec:
    from pathspec import GitIgnoreSpec

    # The simple backend is Python's re, which has atomic groups (re2 has none).
    return GitIgnoreSpec.from_lines(patterns, _linear_pattern(), backend="simple")


@cache
def _linear_pattern() -> type[GitIgnoreSpecPattern]:
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    class _LinearPattern(GitIgnoreSpecPattern):
        """pathspec's pattern, with every chunk between two `*` of a segment matched at its
        first occurrence, committed (an atomic group). Plain regex backtracking is polynomial in
        the number of stars: `*a*a*a*a*a*a*a*ab` against a 60-character name took 44 s, where
        git takes milliseconds. Taking the leftmost occurrence is always right when a `*`
        follows: it leaves the most text for the rest."""

        __slots__ = ()

        @classmethod
        def pattern_to_regex(cls, pattern: str) -> tuple[str | None, bool | None]:  # type: ignore[override]
            regex, include = super().pattern_to_regex(pattern)
            return (_atomic_stars(regex) if isinstance(regex, str) else regex), include

    return _LinearPattern


def _atomic_stars(regex: str) -> str:
    parts = regex.split(_STAR)
    if len(parts) < 4:  # two stars or fewer: at most quadratic, as pathspec wrote it
        return regex
    out = [parts[0]]
    for index, part in enumerate(parts[1:], 1):
        middle = index < len(parts) - 1
        if middle and part and not _NOT_FIXED.search(_ESCAPES.sub("", part)):
            out.append(f"(?>[^/]*?{part})")
        else:
            out.append(_STAR + part)
    return "".join(out)


def _compiles(pattern: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            _spec([pattern])
        except (ValueError, re.error):
            return False
    return True


def ignore_pattern_compiles(line: str) -> bool:
    """Whether one pattern (moor.toml's `ignore`) can be matched: it compiles as git reads
    it (a pattern that matches nothing, like git's own, is allowed)."""
    pattern = git_pattern(line)
    return pattern is None or _compiles(pattern)


def git_pattern(line: str) -> str | None:
    """`line` of an ignore file spelled so that pathspec matches what git matches; None
    for a line that matches no path."""
    line = _trim_trailing_spaces(line)
    if not line or line.startswith("#"):
        return None
    out: list[str] = []
    anchored = False  # a '/' inside a bracket still makes git match from this folder
    length = 0  # characters of a path the pattern needs at least
    index, end = 0, len(line)
    while index < end:
        token = _TOKEN.match(line, index)
        assert token is not None  # every character starts a token
        text = token.group()
        if text[0] == "*":
            before = line[index - 1 : index] if out != ["!"] else ""
            after = line[token.end() : token.end() + 1]
            whole = before in ("", "/") and after in ("", "/")  # `**` only as a whole segment
            out.append("**" if len(text) > 1 and whole else "*")  # `***` is `**`, `a**b` `a*b`
            index = token.end()
            continue
        if text == "\\":
            return None  # a trailing backslash: git's wildmatch matches nothing
        if text == "\\/":  # pathspec splits at it before it sees the escape
            if token.end() == end:
                return None  # git strips the '/' and is left with a trailing backslash
            if not out or out == ["!"]:
                return None  # git anchors only at a plain '/': this one needs a '/' first
            out.append("/")
            length += 1
        elif text == "[":
            bracket = _bracket(line, index)
            if bracket is None:
                return None
            members, stop = bracket
            anchored = anchored or "/" in line[index:stop]
            emitted = _emit(members)
            if emitted is None:
                return None
            out.append(emitted)
            length += 1
            index = stop
            continue
        else:
            out.append(text)
            length += 1 if text[0] == "\\" else len(text)
        if length > PATH_MAX + 2:  # a leading `!` or `/` and a trailing `/` match no character
            return None
        index = token.end()
    pattern = "".join(out)
    if anchored and "/" not in pattern.rstrip("/"):
        negation = "!" if pattern.startswith("!") else ""
        pattern = negation + "/" + pattern[len(negation) :]
    return pattern


def _trim_trailing_spaces(line: str) -> str:
    """git's trim_trailing_spaces: unescaped trailing spaces go, `\\ ` keeps one."""
    if not line.endswith(" "):
        return line
    kept = line.rstrip(" ")
    backslashes = len(kept) - len(kept.rstrip("\\"))
    return line[: len(kept) + 1] if backslashes % 2 else kept


def _bracket(line: str, start: int) -> tuple[list[tuple[int, int]], int] | None:
    """The code points a bracket expression at `start` matches, by git's wildmatch rules,
    and the index past it; None when git's wildmatch aborts (the pattern matches nothing).

    As in wildmatch: the first character (even `]`) is a member; `a-b` adds the range
    when a <= b (`[z-a]` is `[z]`: its start was already a member); `\\x` is `x`;
    `[:name:]` is a class; an unknown class or an unclosed `[` aborts."""
    index = start + 1
    end = len(line)
    negated = index < end and line[index] in "!^"
    if negated:
        index += 1
    ranges: list[tuple[int, int]] = []
    previous: int | None = None
    first = True
    while True:
        if index >= end:
            return None
        char = line[index]
        if char == "]" and not first:
            break
        first = False
        current: int | None = ord(char)
        if char == "\\":
            index += 1
            if index >= end:
                return None
            current = ord(line[index])
            ranges.append((current, current))
        elif char == "-" and previous is not None and index + 1 < end and line[index + 1] != "]":
            index += 1
            high = line[index]
            if high == "\\":
                index += 1
                if index >= end:
                    return None
                high = line[index]
            if previous <= ord(high):
                ranges.append((previous, ord(high)))
            current = None
        elif char == "[" and index + 1 < end and line[index + 1] == ":":
            close = line.find("]", index + 2)
            if close < 0:
                return None
            if close - 1 < index + 2 or line[close - 1] != ":":
                ranges.append((ord("["), ord("[")))  # not a class: a literal '['
            else:
                name = line[index + 2 : close - 1]
                if name not in _CLASSES:
                    return None
                ranges.extend(_CLASSES[name])
                index = close
                current = None
        else:
            ranges.append((ord(char), ord(char)))
        previous = current
        index += 1
    members = _merge(ranges)
    if negated:
        members = _complement(_merge([*members, (_SLASH, _SLASH)]))
    else:
        members = _remove(members, _SLASH)  # a bracket never matches '/' (WM_PATHNAME)
    return members, index + 1


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    result: list[tuple[int, int]] = []
    low = 0
    for start, stop in ranges:
        if start > low:
            result.append((low, start - 1))
        low = stop + 1
    if low <= _TOP:
        result.append((low, _TOP))
    return result


def _remove(ranges: list[tuple[int, int]], point: int) -> list[tuple[int, int]]:
    result: list[tuple[int, int]] = []
    for low, high in ranges:
        if low <= point <= high:
            result.extend(r for r in ((low, point - 1), (point + 1, high)) if r[0] <= r[1])
        else:
            result.append((low, high))
    return result


def _emit(members: list[tuple[int, int]]) -> str | None:
    """A bracket expression pathspec turns into a regex class of exactly `members` (it
    copies the content into the regex, doubling backslashes); None for an empty set."""
    if not members:
        return None
    if len(members) == 1 and members[0][0] == members[0][1]:
        return "\\" + chr(members[0][0])  # one character: an escaped literal
    awkward = [c for c in _AWKWARD if any(low <= ord(c) <= high for low, high in members)]
    for char in awkward:
        members = _remove(members, ord(char))
    plain = "".join(chr(low) if low == high else f"{chr(low)}-{chr(high)}" for low, high in members)
    head = "]" if "]" in awkward else ""
    middle = "".join(c for c in "[!^" if c in awkward)  # '[' first: it is no negation
    if not plain and "-" in awkward:
        return "[" + head + "-" + middle + "]"  # a leading '-' is literal
    if not plain and not head and middle[:1] in ("!", "^"):
        return None  # exactly '!' and '^': pathspec would read either first as a negation
    tail = "-" if "-" in awkward else ""
    return "[" + head + plain + middle + tail + "]"
