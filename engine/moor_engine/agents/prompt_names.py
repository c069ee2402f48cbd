"""The code a prompt names: paths, `path#Symbol` references and bare identifiers.

Read from the prompt's words only, never guessed: a path is a word with a `/` or a file
extension, a reference is a path with `#Symbol`, and an identifier is any other word that
looks like code (letters, digits, `_` and dots). Which of them name memories is decided by
the memories' own references (`agent_hooks.matching`), so a bare word that no memory is
bound to costs nothing and matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

_WORD = re.compile(r"[\w./#:-]+")
_PATH = re.compile(r"[\w.-]*(?:/[\w.-]+)*\.\w+|[\w.-]+(?:/[\w.-]+)+")
_IDENT = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_MIN_IDENT = 3  # shorter words ("a", "is", "do") are never a useful match
REMEMBER = "remember:"


@dataclass(frozen=True)
class Names:
    """The code a prompt names (`prompt_names`): files, references and bare identifiers."""

    paths: frozenset[str]  # files named (with or without a symbol)
    refs: frozenset[str]  # `path#Symbol` as written
    identifiers: frozenset[str]  # bare words that may be symbol names


def prompt_names(prompt: str) -> Names:
    paths: set[str] = set()
    refs: set[str] = set()
    identifiers: set[str] = set()
    for raw in _WORD.findall(prompt):
        word = raw.strip(".,:;-`'\"()[]")
        if not word:
            continue
        path, hashed, symbol = word.partition("#")
        path = path.removeprefix("./")
        if hashed and symbol and _PATH.fullmatch(path):
            paths.add(path)
            refs.add(f"{path}#{symbol}")
            identifiers.add(symbol)
        elif _PATH.fullmatch(path) and ("/" in path or not _IDENT.fullmatch(path)):
            paths.add(path)
        if _IDENT.fullmatch(word) and len(word) >= _MIN_IDENT:
            identifiers.add(word)
            if "." in word:  # `module.py` may be a file, `Client.send` a symbol: both kept
                paths.add(word)
    return Names(frozenset(paths), frozenset(refs), frozenset(identifiers))


def remembered(prompt: str) -> str | None:
    """The text after a leading `remember:` (any case), or None when the prompt is not one."""
    stripped = prompt.lstrip()
    if not stripped.lower().startswith(REMEMBER):
        return None
    return stripped[len(REMEMBER) :].strip()


def split_ref(ref: str) -> tuple[str, str | None]:
    path, hashed, symbol = ref.partition("#")
    return path.removeprefix("./"), (symbol if hashed and symbol else None)


def ref_matches(ref: str, names: Names) -> bool:
    """Whether a memory's reference names code the prompt names: its file, the reference
    itself, its symbol's full or last name, or a definition that holds it (`Client` for
    `Client.send`)."""
    path, symbol = split_ref(ref)
    if path in names.paths or ref in names.refs:
        return True
    if symbol is None:
        return False
    last = symbol.rsplit(".", 1)[-1]
    if symbol in names.identifiers or last in names.identifiers:
        return True
    # A class (or any definition that holds others) named: the memories about its members.
    parts = symbol.split(".")
    return any(".".join(parts[:end]) in names.identifiers for end in range(1, len(parts)))


def matching(references: dict[str, list[str]], names: Names) -> list[str]:
    return sorted(
        path for path, refs in references.items() if any(ref_matches(r, names) for r in refs)
    )


def about_files(references: dict[str, list[str]], files: Collection[str]) -> list[str]:
    return sorted(
        path for path, refs in references.items() if any(split_ref(r)[0] in files for r in refs)
    )
