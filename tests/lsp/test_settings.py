"""Settings (severity per trust state, trust), their sources, and first-scan progress."""

from __future__ import annotations

import pytest
from lsprotocol import types
from moor_lsp.settings import DEFAULT_SEVERITY, Layer, Settings, read_layer
from moor_store.journal import Entry, Journal
from pygls.exceptions import JsonRpcInvalidRequest

from tests.conftest import Workspace
from tests.lsp.conftest import G2, G3, Editor, bind_all, drifted_retry

pytestmark = [pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")]

K7 = "def k():\n    return 7\n"
Severity = types.DiagnosticSeverity


def drifted_unbound_and_moved(ws: Workspace) -> None:
    """memories/drift.md drifted, memories/unbound.md unbound, memories/zmoved.md moved
    (named to be published last: once it has arrived, the others have too)."""
    ws.write("src/a.py", G2)
    ws.write("src/b.py", K7)
    ws.memory("drift", "src/a.py#g")
    ws.memory("zmoved", "src/b.py#k")
    bind_all(ws)
    ws.write("src/a.py", G3)
    ws.write("src/b.py", "def other():\n    return 1\n")
    ws.write("src/c.py", K7)
    ws.memory("unbound", "src/a.py#g")


def messages(editor: Editor, *words: str) -> list[str]:
    return [m.message for m in editor.client.messages if all(w in m.message for w in words)]


@pytest.mark.asyncio
async def test_initialization_options_win_and_bad_values_are_named(editor: Editor) -> None:
    drifted_unbound_and_moved(editor.ws)
    editor.client.set_configuration(
        {"severity": {"drifted": "hint", "moved": "warning", "gone": 3}, "python": "ignored"},
        section="moor",
    )
    await editor.start(
        {
            "severity": {"drifted": "error", "unbound": "off", "sideways": "error", "moved": "?"},
            "trusted": "yes",
        }
    )

    # workspace/configuration applies where the initializationOptions say nothing usable …
    assert (await editor.one("memories/zmoved.md", "moved")).severity == Severity.Warning
    # … and they win where both speak (drifted is a warning by default, hint above).
    assert (await editor.one("memories/drift.md", "drifted")).severity == Severity.Error
    # `off`: nothing at all for the unbound memory (information by default).
    assert await editor.now("memories/unbound.md") == []
    # Each bad value is shown once, by its key and value; the section's other keys
    # (`python` above, the VS Code client's own) are not the server's business.
    shown = messages(editor, "moor settings")
    assert len(shown) == 4, shown
    assert len(messages(editor, "initializationOptions", "`severity.moved`", "'?'")) == 1
    assert len(messages(editor, "`severity.sideways`", "unknown state")) == 1
    assert len(messages(editor, "`trusted`", "'yes'")) == 1
    assert len(messages(editor, "workspace/configuration", "`severity.gone` = 3")) == 1


@pytest.mark.asyncio
async def test_a_configuration_change_regrades_the_diagnostics(editor: Editor) -> None:
    drifted_unbound_and_moved(editor.ws)
    editor.client.set_configuration({"severity": {"ungrounded": "loud"}}, section="moor")
    await editor.start()
    # The defaults first (the controls): drifted is a warning, unbound information.
    assert (await editor.one("memories/drift.md", "drifted")).severity == Severity.Warning
    assert (await editor.one("memories/unbound.md", "unbound")).severity == Severity.Information
    # Both clients advertise window.workDoneProgress: the first scan was reported.
    reports = await editor.until(
        lambda: _progress(editor), lambda found: len(found) == 1 and len(found[0]) == 2
    )
    begin, end = reports[0]
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert begin.title == "moor: checking memories"
    assert isinstance(end, types.WorkDoneProgressEnd)

    editor.client.set_configuration(
        {"severity": {"drifted": "error", "unbound": "off", "ungrounded": "loud"}},
        section="moor",
    )
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )

    regraded = await editor.diagnostics(
        "memories/drift.md", lambda items: [d.severity for d in items] == [Severity.Error]
    )
    assert [d.code for d in regraded] == ["drifted"]
    assert list(await editor.diagnostics("memories/unbound.md", lambda items: not items)) == []
    assert (await editor.one("memories/zmoved.md", "moved")).severity == Severity.Information
    assert len(await _progress(editor)) == 1  # a re-check is not the first scan
    # The bad value was read twice (at the start, on the change) and shown once.
    assert len(messages(editor, "`severity.ungrounded`", "'loud'")) == 1


async def _progress(editor: Editor) -> list[list[object]]:
    return [list(values) for values in editor.client.progress_reports.values()]


@pytest.mark.asyncio
async def test_an_untrusted_workspace_is_checked_but_never_written(editor: Editor) -> None:
    ws = editor.ws
    drifted_retry(ws)
    ws.memory("unbound", "src/a.py#g")
    lock = (ws.root / "moor.lock").read_bytes()
    journal = len(_journal(ws))
    await editor.start({"trusted": False})

    drifted = await editor.one("memories/retry.md", "drifted")  # checks still run
    titles = [a.title for a in await editor.actions("memories/retry.md", drifted)]
    assert any(t.startswith("Open") for t in titles), titles  # reading is fine …
    assert not any("Reaffirm" in t for t in titles), titles  # … writing is not offered
    unbound = await editor.one("memories/unbound.md", "unbound")
    # No "Bind" either (trusted, both are offered: see test_actions).
    titles = [a.title for a in await editor.actions("memories/unbound.md", unbound)]
    assert titles == ["Open src/a.py#g"]

    with pytest.raises(JsonRpcInvalidRequest, match="not trusted"):
        await editor.execute("moor.reaffirm", "memories/retry.md", "it still holds")
    with pytest.raises(JsonRpcInvalidRequest, match="not trusted"):
        await editor.execute("moor.bind", "memories/unbound.md")
    # Nothing was written: neither the lock nor the journal (the check is not recorded).
    assert (ws.root / "moor.lock").read_bytes() == lock
    assert len(_journal(ws)) == journal
    assert [d.code for d in await editor.now("memories/retry.md")] == ["drifted"]


def _journal(ws: Workspace) -> list[Entry]:
    with Journal(ws.root / ".moor/journal.sqlite") as journal:
        return list(journal.entries())


def test_layers_merge_later_wins_and_bad_keys_fall_back() -> None:
    config, problems = read_layer(
        {"severity": {"drifted": "hint", "gone": "default", "moved": 1}, "trace": "x"}, "c"
    )
    options, more = read_layer(
        {"severity": {"drifted": "off"}, "trusted": False}, "initializationOptions"
    )
    assert config == Layer({"drifted": "hint"}, None)
    assert problems == [
        "moor settings (c): `severity.moved` = 1 is not one of error, warning, information, "
        "hint, off; ignored (the default is information)"
    ]
    assert more == []
    merged = Settings.merge(config, options)
    assert merged.level("drifted") == "off"
    assert merged.level("gone") == DEFAULT_SEVERITY["gone"] == "error"
    assert merged.level("retired") is None
    assert merged.trusted is False
    assert Settings.merge() == Settings()
    assert read_layer([1], "x")[1] and read_layer({"severity": "loud"}, "x")[1]


def test_trust_comes_only_from_the_client_and_a_malformed_value_means_read_only() -> None:
    from_workspace, problems = read_layer({"trusted": True}, "workspace/configuration")
    assert from_workspace.trusted is None and "taken only from" in problems[0]
    malformed, problems = read_layer({"trusted": "yes"}, "initializationOptions")
    assert malformed.trusted is False and "read-only" in problems[0]
    # Control: the client's own boolean is honoured.
    assert read_layer({"trusted": False}, "initializationOptions")[0].trusted is False
    assert read_layer({"trusted": True}, "initializationOptions")[0].trusted is True
