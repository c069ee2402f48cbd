"""The characters `framing` must look for before it reads a text closely (`lookalikes`):
kept apart so that a memory text holding none of them — most do — costs the framing no
import of the look-alike tables (a hook answers in its own process, `moor hooks run`)."""

from __future__ import annotations

# Every character that reads as `<` or `>` (a test checks this against all of Unicode), and
# `&`, which starts an entity: text without any of them reads as nothing moor delimits, so
# it is not read character by character.
ANGLES = "<>&\u02c2\u1438\u02c3\u1433\u226e\u226f\ufe64\ufe65\uff1c\uff1e"
# What reads as a line end (Python's `str.splitlines` and Unicode's separators).
LINE_ENDS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
