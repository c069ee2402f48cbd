"""The real-Neovim end-to-end test: Neovim 0.11 headless with docs/editors.md's set-up, on a real
workspace, against this checkout's `moor lsp`.

Opt-in only (`MOOR_E2E=1`): tests/e2e/neovim/setup.sh installs the pinned Neovim wheel
into tests/e2e/neovim/.tools/ the first time. One Neovim run per set-up goes through the
scenario of `editor_scenario.py` (driven by tests/e2e/neovim/driver.lua); each test below
checks one thing it recorded.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import editor_scenario as scenario
from tests.e2e.editor_scenario import EditorRun

HERE = Path(__file__).resolve().parent / "neovim"
RUN_SECONDS = 180  # a hang guard only: a run takes a few seconds (it prints its time)

pytestmark = pytest.mark.skipif(
    os.environ.get("MOOR_E2E") != "1",
    reason="real Neovim end-to-end test: opt-in with MOOR_E2E=1 (installs Neovim, ~50 MB)",
)


@pytest.fixture(scope="module")
def nvim() -> str:
    assert scenario.MOOR.exists(), "needs .venv with moor (`make setup-dev`)"
    setup = subprocess.run(
        ["bash", str(HERE / "setup.sh")], capture_output=True, text=True, timeout=600
    )
    assert setup.returncode == 0, f"setup.sh failed:\n{setup.stdout}\n{setup.stderr}"
    return setup.stdout.strip().splitlines()[-1]


def run_neovim(nvim: str, tmp: Path, config: str, steps: str) -> EditorRun:
    spec = scenario.build(tmp / "ws")
    home = tmp / "home"  # Neovim's own files (its LSP log among them) stay in the run
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "MOOR_E2E_CONFIG": config,
        "MOOR_E2E_STEPS": steps,
    }
    cmd = [nvim, "--headless", "--clean", "-u", str(HERE / "driver.lua")]
    return scenario.run_editor(cmd, spec, RUN_SECONDS, env)


@pytest.fixture(scope="module")
def neovim(nvim: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EditorRun]:
    """The whole scenario with the Neovim 0.11 set-up (`vim.lsp.config`/`vim.lsp.enable`)."""
    yield run_neovim(nvim, tmp_path_factory.mktemp("nvim"), "moor-0.11.lua", "all")


@pytest.fixture(scope="module")
def neovim_09(nvim: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EditorRun]:
    """The scenario up to the code lenses, then the reaffirm by reason line, with the Neovim
    0.9-0.10 set-up (`vim.lsp.start` in a FileType autocmd), run in the same Neovim 0.11:
    the only Neovim this test can install."""
    yield run_neovim(nvim, tmp_path_factory.mktemp("nvim09"), "moor-0.9.lua", "short")


def test_drifted_and_moved_memories_show_diagnostics_on_their_references(
    neovim: EditorRun,
) -> None:
    scenario.check_positions(neovim)


def test_a_file_rewritten_outside_neovim_updates_the_diagnostics(neovim: EditorRun) -> None:
    scenario.check_external_change(neovim)


def test_moor_reaffirm_on_the_command_line_clears_the_diagnostics(neovim: EditorRun) -> None:
    scenario.check_cli_reaffirm(neovim)


def test_moor_reaffirm_with_a_reason_clears_the_diagnostics(neovim: EditorRun) -> None:
    scenario.check_reaffirm(neovim)


def test_a_memory_opened_after_start_up_shows_its_diagnostics(neovim: EditorRun) -> None:
    scenario.check_late_open(neovim)


def test_every_code_action_offered_but_reaffirm_executes_without_an_error(
    neovim: EditorRun,
) -> None:
    scenario.check_actions_other_than_reaffirm(neovim)


def test_follow_clears_the_moved_diagnostic_and_rewrites_the_reference(neovim: EditorRun) -> None:
    scenario.check_follow_diagnostics(neovim)


def test_the_reaffirm_quick_fix_asks_for_a_reason_and_reaffirms_with_the_first_choice(
    neovim: EditorRun,
) -> None:
    scenario.check_reaffirm_quick_fix(neovim)


def test_follow_updates_the_open_buffer(neovim: EditorRun) -> None:
    scenario.check_follow_buffer(neovim)


def test_forget_through_the_code_action_takes_the_reason_written_and_closes_the_buffer(
    neovim: EditorRun,
) -> None:
    scenario.check_forget(neovim, closes=True)


def test_reaffirm_with_the_reason_written_in_the_buffer_leaves_the_buffer_as_saved(
    neovim: EditorRun,
) -> None:
    scenario.check_reaffirm_by_reason_line(neovim)


def test_neovims_completion_completes_references_past_a_segment_and_a_dot(
    neovim: EditorRun,
) -> None:
    scenario.check_completion(neovim)


def test_code_lenses_show_on_code_without_a_manual_refresh(neovim: EditorRun) -> None:
    scenario.check_code_lenses(neovim)


def test_the_neovim_09_set_up_shows_updates_and_reaffirms(neovim_09: EditorRun) -> None:
    scenario.check_positions(neovim_09)
    scenario.check_external_change(neovim_09)
    scenario.check_cli_reaffirm(neovim_09)
    scenario.check_reaffirm(neovim_09)
    scenario.check_late_open(neovim_09)
    scenario.check_code_lenses(neovim_09)


def test_the_neovim_09_set_up_leaves_the_buffer_as_saved_after_a_reaffirm_by_reason_line(
    neovim_09: EditorRun,
) -> None:
    scenario.check_reaffirm_by_reason_line(neovim_09)


def test_neovim_names_the_file_types_of_moor_languages_as_the_set_ups_do(nvim: str) -> None:
    from tests.lsp.test_editor_setups import NEOVIM_FILETYPE

    # A .ts file could be Qt's XML: Neovim reads the buffer's first line, as when it opens one.
    lua = (
        "for _, ext in ipairs(arg) do "
        "local buf = vim.api.nvim_create_buf(false, true) "
        "vim.api.nvim_buf_set_name(buf, vim.fn.getcwd() .. '/x' .. ext) "
        "vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'x = 1' }) "
        "io.stdout:write(ext, ' ', vim.filetype.match({ buf = buf }) or '?', '\\n') "
        "end"
    )
    script = Path(os.environ.get("TMPDIR", "/tmp")) / f"moor-e2e-ft-{os.getpid()}.lua"
    script.write_text(lua, encoding="utf-8")
    try:
        done = subprocess.run(
            [nvim, "--clean", "-l", str(script), *NEOVIM_FILETYPE, ".c"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        script.unlink()
    seen = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert seen.pop(".c") == "c"  # the control: a file type the set-ups leave out
    assert seen == NEOVIM_FILETYPE
