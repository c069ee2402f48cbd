"""A drift's one-line summary costs what lexing the definition costs, however large the
definition (issue 22: a `pass` added to one method of a 5,000-line class took 1.3 s of a
save's diagnostic in the language server, comparing every token with every other)."""

from __future__ import annotations

import time

from moor_extractors.change import change_summary
from moor_extractors.symbols import parse_source

# Linear with headroom: the summary lexes both sides (two parses) and compares them.
MAX_RATIO = 8.0


def big_class(methods: int) -> str:
    body = "".join(
        f"    def m{i}(self, other, context=None):\n"
        f"        if other is None:\n"
        f"            return self._fix(context)\n"
        f"        return self.__class__(self._int + other._int, context)[{i}]\n\n"
        for i in range(methods)
    )
    return f"class Big:\n{body}"


def cpu(call: object) -> float:
    assert callable(call)
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        call()
        best = min(best, time.process_time() - started)
    return best


def test_a_one_token_edit_in_a_huge_definition_is_summarised_in_linear_time() -> None:
    old = big_class(300)
    new = old.replace("return self._fix(context)\n", "return self._fix(context)\n        pass\n", 1)
    assert new != old
    summary = change_summary("python", old, new)
    assert summary == "added `pass`"
    parsing = cpu(
        lambda: (
            parse_source("python", old.encode()).sites(),
            parse_source("python", new.encode()).sites(),
        )
    )
    summarising = cpu(lambda: change_summary("python", old, new))
    assert summarising <= MAX_RATIO * parsing, (summarising, parsing)


def test_changes_far_apart_in_a_huge_definition_say_the_first_and_that_there_is_more() -> None:
    old = big_class(300)
    new = old.replace("m0(self", "m0(me", 1).replace("m299(self", "m299(me", 1)
    assert change_summary("python", old, new) == "`self` → `me` (and more)"
    # Control: in a definition of ordinary size both are counted.
    small = big_class(20)
    both = small.replace("m0(self", "m0(me", 1).replace("m19(self", "m19(me", 1)
    assert change_summary("python", small, both) == "`self` → `me` (2 places)"
