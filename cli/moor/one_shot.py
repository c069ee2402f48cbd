"""The garbage collector of a command that walks every memory once and exits.

A check of 10,000 memories allocates millions of objects that live until the report is
printed, and almost none of them are garbage: with the collector's default thresholds it
traversed them again and again (~15 % of a warm check's CPU time). For such a command the
objects of the imports are set aside (`gc.freeze`) and the young generation is collected
far less often. The settings before are restored afterwards, so a long-lived process (the
language server, the hook server, a test calling `main` in process) keeps its own.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

# Young-generation collections every 50,000 allocations instead of 700: a check allocates
# its objects to keep them, and frees them all at exit.
_YOUNG_THRESHOLD = 50_000


@contextlib.contextmanager
def collecting_less() -> Iterator[None]:
    thresholds = gc.get_threshold()
    freeze = gc.get_freeze_count() == 0  # a caller's own frozen objects stay as they are
    if freeze:
        gc.freeze()
    gc.set_threshold(max(thresholds[0], _YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        if freeze:
            # What the command allocated is still held (its report, an index's columns) and
            # is freed at exit: set aside with the imports, where the restored threshold
            # does not start a young collection that traverses it all at once (16 ms of
            # the first check after code went, at 50,000 files).
            gc.freeze()
        gc.set_threshold(*thresholds)
        if freeze:
            gc.unfreeze()
