"""The language server observes command anchors on a cadence (issue 25, scheduling), on a
fake clock the test moves through the server's test-only `MOOR_LSP_CLOCK` file
(`moor_lsp.clock`): not before an anchor is due, again once it is, backing off after a
failure and saying `stalled` at the third in a row; never in a workspace the editor does
not trust."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import Workspace
from tests.lsp.conftest import Editor, make_client

CLOCK = Path(tempfile.mkdtemp(prefix="moor-clock-")) / "now"
TIMED = ClientServerConfig(
    server_command=[sys.executable, "-m", "moor_lsp"],
    client_factory=make_client,
    server_env={**os.environ, "MOOR_LSP_CLOCK": str(CLOCK)},
)
RUNS = "runs.txt"  # one line per run of the probe
FAIL = "fail"  # while it exists, the probe exits 1


@pytest_lsp.fixture(config=TIMED, params=["visual-studio-code"])  # type: ignore[untyped-decorator]
async def timed(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    lsp_client.client_name = "visual-studio-code"  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.fixture
def editor(timed: LanguageClient, ws: Workspace) -> Editor:
    CLOCK.write_text("0")
    return Editor(timed, ws, "visual-studio-code", client_capabilities("visual-studio-code"))


def probed(ws: Workspace) -> None:
    ws.write("roster.txt", "test_a\n")
    ws.write(
        "probes/roster.py",
        "import os, sys\n"
        f"open({RUNS!r}, 'a').write('ran\\n')\n"
        f"if os.path.exists({FAIL!r}):\n    sys.exit(1)\n"
        "print(open('roster.txt').read(), end='')\n",
    )
    command = json.dumps([sys.executable, "probes/roster.py"])
    ws.write("moor.toml", f'memory_roots = ["memories"]\n\n[anchors.roster]\ncommand = {command}\n')
    ws.memory("roster", "anchor:roster")
    ws.moor("bind", "--trust", check=True)
    (ws.root / RUNS).unlink()


def runs(ws: Workspace) -> int:
    path = ws.root / RUNS
    return len(path.read_text().splitlines()) if path.exists() else 0


async def at(editor: Editor, seconds: float, said: str) -> str:
    """Move the clock to `seconds` and wait for the server's log line of that time that
    contains `said` (`nothing due` or `observed`)."""
    CLOCK.write_text(str(seconds))
    wanted = f" at {seconds:g} s"

    async def logged() -> list[str]:
        return [m.message for m in editor.client.log_messages]

    lines: list[str] = await editor.until(
        logged, lambda lines: any(said in line and line.endswith(wanted) for line in lines)
    )
    return next(line for line in lines if said in line and line.endswith(wanted))


def shown(editor: Editor) -> list[str]:
    return [m.message for m in editor.client.messages]


@pytest.mark.asyncio
async def test_a_command_anchor_is_observed_again_once_due_and_not_before(
    editor: Editor,
) -> None:
    ws = editor.ws
    probed(ws)
    await editor.start({"trusted": True})
    # The opening check ran it, and was published (then the clock was first looked at).
    await at(editor, 0, "nothing due")
    assert runs(ws) == 1
    ws.write("memories/roster.md", ws.read("memories/roster.md") + "\nMore words.\n")
    await at(editor, 299, "nothing due")  # a saved memory and 299 s: not yet
    assert runs(ws) == 1
    ws.write("roster.txt", "test_a\ntest_b\n")
    assert "observed anchor:roster" in await at(editor, 300, "observed")
    assert runs(ws) == 2  # the control: due at 300 s (every = 5m by default)
    await editor.one("memories/roster.md", "drifted")  # and what it saw is shown


@pytest.mark.asyncio
async def test_failures_back_off_and_the_third_in_a_row_stalls_the_anchor(
    editor: Editor,
) -> None:
    ws = editor.ws
    probed(ws)
    ws.write(FAIL, "")
    await editor.start({"trusted": True})
    await editor.one("memories/roster.md", "unverified")  # attempt 1 at 0 s: next at 30 s
    await at(editor, 29, "nothing due")
    assert runs(ws) == 1
    assert "(process_failed)" in await at(editor, 30, "observed")  # attempt 2: next at 90 s
    await at(editor, 89, "nothing due")
    assert runs(ws) == 2
    assert not [m for m in shown(editor) if "stalled" in m]  # two failures do not stall it
    assert not [d for d in await editor.now("memories/roster.md") if "stalled" in d.message]
    await at(editor, 90, "observed")  # attempt 3: stalled, next at 210 s
    await editor.until(lambda: _value(shown(editor)), lambda m: any("stalled" in x for x in m))
    assert any("anchor:roster stalled: 3 failed attempts" in m for m in shown(editor))
    await editor.diagnostics(
        "memories/roster.md", lambda items: any("stalled" in d.message for d in items)
    )
    (ws.root / FAIL).unlink()
    await at(editor, 209, "nothing due")
    assert runs(ws) == 3
    assert "(process_failed)" not in await at(editor, 210, "observed")  # healed
    assert runs(ws) == 4
    await editor.diagnostics("memories/roster.md", lambda items: not items)  # current again


@pytest.mark.asyncio
async def test_an_editor_that_does_not_trust_the_workspace_never_runs_it_on_the_cadence(
    editor: Editor,
) -> None:
    ws = editor.ws
    probed(ws)
    await editor.start({"trusted": False})
    await editor.one("memories/roster.md", "unverified")
    await at(editor, 3600, "nothing due")
    assert not (ws.root / RUNS).exists()
    # The control: the same probe, allowed to run, leaves the file behind.
    ws.moor("check", "--trust")
    assert runs(ws) == 1


async def _value(value: object) -> object:
    return value


def hover_value(hover: types.Hover | None) -> str:
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


@pytest.mark.asyncio
async def test_a_hover_shows_the_anchors_cadence_and_re_observe_now_runs_it_at_once(
    editor: Editor,
) -> None:
    ws = editor.ws
    probed(ws)
    ws.write(FAIL, "")
    await editor.start({"trusted": True})
    failed = await editor.one("memories/roster.md", "unverified")
    said = hover_value(await editor.hover("memories/roster.md", 2, 6))  # on "anchor:roster"
    assert "1 failed attempt in a row (last: `process_failed`)" in said
    assert "Next in 30 s" in said
    titles = [action.title for action in await editor.actions("memories/roster.md", failed)]
    assert "Re-observe now" in titles
    (ws.root / FAIL).unlink()
    done = await editor.execute(
        "moor.reobserve", str(ws.root / "memories/roster.md"), "anchor:roster"
    )
    assert done["done"] == ["anchor:roster"]
    assert runs(ws) == 2  # at 0 s, 30 s before it was due: the action ran it
    await editor.diagnostics("memories/roster.md", lambda items: not items)  # current
    said = hover_value(await editor.hover("memories/roster.md", 2, 6))
    assert "Last attempt succeeded" in said and "Next in 5 min" in said
    assert "Observations **closed**" in said


@pytest.mark.asyncio
async def test_an_untrusted_editor_offers_no_re_observe_and_says_why_nothing_runs(
    editor: Editor,
) -> None:
    ws = editor.ws
    probed(ws)
    await editor.start({"trusted": False})
    refused = await editor.one("memories/roster.md", "unverified")
    offered = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri("memories/roster.md")),
            range=refused.range,
            context=types.CodeActionContext(diagnostics=[refused]),
        )
    )
    assert "Re-observe now" not in [action.title for action in offered or []]
    said = hover_value(await editor.hover("memories/roster.md", 2, 6))
    assert "Not observed on a cadence here" in said
    assert runs(ws) == 0
    ws.moor("check", "--trust")  # the control: allowed to run, the probe leaves its file
    assert runs(ws) == 1
