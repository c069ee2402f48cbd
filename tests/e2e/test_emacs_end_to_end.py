"""The real-Emacs end-to-end test: Emacs 28 with eglot 1.9 (Debian packages) and the
set-up docs/editors.md shows, on a real workspace, against this checkout's `moor lsp`.

Opt-in only (`MOOR_E2E=1`): tests/e2e/emacs/setup.sh installs emacs-nox, elpa-eglot and
elpa-markdown-mode with apt-get when they are missing. One Emacs run (batch mode, driven by
tests/e2e/emacs/driver.el) goes through the scenario of `editor_scenario.py`; each test
below checks one thing it recorded.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import editor_scenario as scenario
from tests.e2e.editor_scenario import EditorRun

HERE = Path(__file__).resolve().parent / "emacs"
RUN_SECONDS = 180  # a hang guard only: a run takes a few seconds (it prints its time)

pytestmark = pytest.mark.skipif(
    os.environ.get("MOOR_E2E") != "1",
    reason="real Emacs end-to-end test: opt-in with MOOR_E2E=1 (installs emacs-nox and eglot)",
)


@pytest.fixture(scope="module")
def emacs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EditorRun]:
    assert scenario.MOOR.exists(), "needs .venv with moor (`make setup-dev`)"
    setup = subprocess.run(
        ["bash", str(HERE / "setup.sh")], capture_output=True, text=True, timeout=900
    )
    assert setup.returncode == 0, f"setup.sh failed:\n{setup.stdout}\n{setup.stderr}"
    tmp = tmp_path_factory.mktemp("emacs")
    spec = scenario.build(tmp / "ws")
    env = {"HOME": str(tmp / "home")}  # no init file of the machine's, nothing written there
    cmd = ["emacs", "--batch", "-q", "-l", str(HERE / "driver.el")]
    yield scenario.run_editor(cmd, spec, RUN_SECONDS, env)


def test_drifted_and_moved_memories_show_diagnostics_on_their_references(
    emacs: EditorRun,
) -> None:
    scenario.check_positions(emacs)


def test_a_file_rewritten_outside_emacs_updates_the_diagnostics(emacs: EditorRun) -> None:
    scenario.check_external_change(emacs)


def test_moor_reaffirm_on_the_command_line_clears_the_diagnostics(emacs: EditorRun) -> None:
    scenario.check_cli_reaffirm(emacs)


def test_moor_reaffirm_with_a_reason_clears_the_diagnostics(emacs: EditorRun) -> None:
    scenario.check_reaffirm(emacs)


def test_a_memory_opened_after_start_up_shows_its_diagnostics(emacs: EditorRun) -> None:
    scenario.check_late_open(emacs)


def test_every_code_action_offered_but_reaffirm_executes_without_an_error(
    emacs: EditorRun,
) -> None:
    scenario.check_actions_other_than_reaffirm(emacs)


def test_follow_clears_the_moved_diagnostic_and_rewrites_the_reference(emacs: EditorRun) -> None:
    scenario.check_follow_diagnostics(emacs)


def test_the_reaffirm_quick_fixes_carry_the_prepared_reasons_and_nothing_waits_on_a_question(
    emacs: EditorRun,
) -> None:
    # eglot's request times out (10 s; 3 s in the run) while a question waits on the person:
    # the run answers only after it, so a question asked would fail here.
    scenario.check_reaffirm_quick_fix(emacs, asked=False)


def test_follow_updates_the_open_buffer(emacs: EditorRun) -> None:
    scenario.check_follow_buffer(emacs)


def test_forget_through_the_code_action_takes_the_reason_written_in_the_buffer(
    emacs: EditorRun,
) -> None:
    scenario.check_forget(emacs, asked=False)


def test_reaffirm_with_the_reason_written_in_the_buffer_leaves_the_buffer_as_saved(
    emacs: EditorRun,
) -> None:
    scenario.check_reaffirm_by_reason_line(emacs)
