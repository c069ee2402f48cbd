"""What changed between two versions of one definition, said in a line (issue 23, item 3).

A drift a reviewer can judge at a glance — `Optional[Scope]` → `Scope | None` — is one they
can reaffirm without opening a diff. The two sources are lexed with the language's grammar
(comments left out, a string literal one token) and compared token by token; changes a few
tokens apart are one change, and each side is shown as written, its whitespace collapsed.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from .languages import new_parser
from .symbols import spec_for

_WIDTH = 60  # characters of each side shown, at most
_JOIN = 3  # changes at most this many equal tokens apart are shown as one
_SPACE = re.compile(r"\s+")
# Tokens between the first and the last change compared every one with every other, at
# most (difflib's matching grows with the product of the lengths); beyond it, only this many
# tokens from the first change are, and the summary says there is more.
_MATCH_AT_MOST = 4000
_WINDOW = 1000


def change_summary(language: str, old: str, new: str) -> str | None:
    """ "`old part` → `new part`" for the first change between two sources of a definition
    (with "(and N more)" when there are others); None when their tokens are equal."""
    before = _leaves(language, old.encode("utf-8"))
    after = _leaves(language, new.encode("utf-8"))
    hunks: list[list[int]] = []
    stretches, whole = _changes([t for _, _, t in before], [t for _, _, t in after])
    for i1, i2, j1, j2 in stretches:
        if hunks and i1 - hunks[-1][1] <= _JOIN and j1 - hunks[-1][3] <= _JOIN:
            hunks[-1][1], hunks[-1][3] = i2, j2
        else:
            hunks.append([i1, i2, j1, j2])
    if not hunks:
        return None
    pairs = [
        (_excerpt(old.encode("utf-8"), before[i1:i2]), _excerpt(new.encode("utf-8"), after[j1:j2]))
        for i1, i2, j1, j2 in hunks
    ]
    was, now = pairs[0]
    if not was:
        said = f"added `{now}`"
    elif not now:
        said = f"removed `{was}`"
    else:
        said = f"`{was}` → `{now}`"
    if not whole:
        return f"{said} (and more)"
    if len(pairs) == 1:
        return said
    if len(set(pairs)) == 1:  # one name changed wherever it is used (a renamed receiver)
        return f"{said} ({len(pairs)} places)"
    return f"{said} (and {len(pairs) - 1} more)"


def _changes(a: list[str], b: list[str]) -> tuple[list[tuple[int, int, int, int]], bool]:
    """The unequal stretches (i1, i2, j1, j2) of two token lists, and whether they are all
    of them. The common prefix and suffix are set aside first, as diff tools do: an edit to
    one method of a class of thousands of tokens compares a few tokens, not every token
    with every other. Changes spread over more than `_MATCH_AT_MOST` tokens are compared
    over the first `_WINDOW` only (the summary shows the first change)."""
    start = 0
    shorter = min(len(a), len(b))
    while start < shorter and a[start] == b[start]:
        start += 1
    tail = 0  # tokens equal at the end of both, after the prefix
    while tail < shorter - start and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    a_mid, b_mid = a[start : len(a) - tail], b[start : len(b) - tail]
    whole = len(a_mid) + len(b_mid) <= _MATCH_AT_MOST
    if not whole:
        a_mid, b_mid = a_mid[:_WINDOW], b_mid[:_WINDOW]
    matcher = SequenceMatcher(None, a_mid, b_mid, False)
    stretches = [
        (start + i1, start + i2, start + j1, start + j2)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]
    return stretches, whole


def _leaves(language: str, source: bytes) -> list[tuple[int, int, str]]:
    """The code tokens of a source: (start, end, text), comments left out. Walked with a
    cursor, which makes no list of children per node (a third faster on a class of 25,000
    tokens, where the walk was most of a save's summary)."""
    spec = spec_for(language)
    cursor = new_parser(language).parse(spec.tree_bytes(source)).walk()
    found: list[tuple[int, int, str]] = []
    while True:
        node = cursor.node
        assert node is not None
        descend = False
        if node.type in spec.comment_types:
            pass
        elif node.child_count == 0 or "string" in node.type:
            if node.end_byte > node.start_byte:
                text = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
                found.append((node.start_byte, node.end_byte, text))
        else:
            descend = True
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


def _excerpt(source: bytes, leaves: list[tuple[int, int, str]]) -> str:
    if not leaves:
        return ""
    text = source[leaves[0][0] : leaves[-1][1]].decode("utf-8", "replace")
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"
