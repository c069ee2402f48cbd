"""Memory files are read like code files: a FIFO is refused, not waited on, and a file over
`max_file_size` is refused before it is read.

Both rest on the contained read of memory files (moor_store.inside#read_inside via
engine/grounding/memories.py#load_memories:
O_NOFOLLOW, non-blocking, regular files only, size-capped).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from tests.conftest import Run, Workspace
from tests.hostile.common import assert_drift_detectable, bound_handler, by_path

ADDRESS_SPACE = 1 << 30  # 1 GiB: reading a 2 GiB memory cannot succeed inside it


def limited_check(ws: Workspace, timeout: float) -> Run | None:
    """`moor check --format json` with a bounded address space and a bounded wait; None
    when it was still running at `timeout` (it hung)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    env = {**os.environ, "NO_COLOR": "1"}
    try:
        result = subprocess.run(
            [sys.executable, "-m", "moor", "check", "--format", "json"],
            cwd=ws.root,
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            preexec_fn=limit,
        )
    except subprocess.TimeoutExpired:
        return None
    return Run(result.returncode, result.stdout, result.stderr)


def assert_refused(ws: Workspace, memory: str) -> None:
    run = limited_check(ws, timeout=30)
    assert run is not None, "moor check hung on the memory"
    assert run.code == 1, run.err
    states = by_path(run)
    assert states[memory]["state"] == "invalid"
    assert states[memory]["notes"]
    assert states["memories/handler.md"]["state"] == "current"


def test_a_memory_path_that_is_a_fifo_is_refused_fast_not_hung(ws: Workspace) -> None:
    bound_handler(ws)
    control = limited_check(ws, timeout=30)  # the same run completes without the FIFO
    assert control is not None and control.code == 0, control
    os.mkfifo(ws.root / "memories/pipe.md")  # nobody ever writes to it: a read blocks forever
    assert_refused(ws, "memories/pipe.md")
    (ws.root / "memories/pipe.md").unlink()
    assert_drift_detectable(ws)


def test_a_two_gigabyte_memory_is_refused_before_it_is_read(ws: Workspace) -> None:
    bound_handler(ws)
    huge = ws.root / "memories/huge.md"
    head = b"---\nabout: [app/handler.py#handler]\n---\n# Huge\n"
    huge.write_bytes(head)
    control = limited_check(ws, timeout=30)  # the same memory at its real size is read
    assert control is not None and by_path(control)["memories/huge.md"]["state"] != "invalid"
    with huge.open("r+b") as handle:  # sparse: 2 GiB on paper, nothing on disk
        handle.truncate(2 << 30)
    assert Path(huge).stat().st_size == 2 << 30
    assert_refused(ws, "memories/huge.md")
    huge.unlink()
    assert_drift_detectable(ws)
