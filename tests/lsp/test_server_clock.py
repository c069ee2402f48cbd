"""The language server's test-only clock reads a number from a regular file and nothing else:
a FIFO or a link there reads as 0 at once (no hang), where a regular file gives its time."""

from __future__ import annotations

import os
from pathlib import Path

from moor_lsp.clock import server_clock


def test_the_test_clock_reads_a_regular_file_and_never_a_fifo_or_a_link(tmp_path: Path) -> None:
    time_file = tmp_path / "clock"
    time_file.write_text("300\n", encoding="ascii")
    clock = server_clock({"MOOR_LSP_CLOCK": str(time_file)})
    assert clock.fake and clock.now() == 300.0  # the control: a regular file is read

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert server_clock({"MOOR_LSP_CLOCK": str(fifo)}).now() == 0.0  # returns, no hang

    link = tmp_path / "link"
    link.symlink_to(time_file)
    assert server_clock({"MOOR_LSP_CLOCK": str(link)}).now() == 0.0
