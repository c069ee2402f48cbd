"""Keeping a long-lived server's heap cheap to collect and small once a full check is done.

A full check at 10,000 memories leaves ~290,000 objects alive for as long as the server
runs (reports, observations, the lock). Python's cyclic collector walks every one of them
in each full collection — 350 ms on this machine, at a moment set by allocation counts,
so some save's diagnostic waited for it (issue 22: p95 478 ms past the debounce). After a
full check they are moved out of its sight (`gc.freeze`), once the garbage among them is
collected; the next full check unfreezes them first, so what it replaced is collected too.

The full check also leaves the C heap with free memory it does not give back by itself
(freed parse trees, JSON being decoded): `malloc_trim` returns it to the system, where
the C library is glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import time

logger = logging.getLogger("moor_lsp")


def _trimmer() -> ctypes._NamedFuncPointer | None:
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        return None


_MALLOC_TRIM = _trimmer()


def settle() -> None:
    """After a full check: collect, keep what survives out of later collections, and hand
    freed memory back."""
    started = time.perf_counter()
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
    logger.debug(
        "heap settled in %.3f s: %d objects frozen",
        time.perf_counter() - started,
        gc.get_freeze_count(),
    )


def trim() -> None:
    """After a check of a few files: hand the C heap's freed memory back (a parse of a
    large file frees megabytes the C library would otherwise keep; well under 1 ms)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
