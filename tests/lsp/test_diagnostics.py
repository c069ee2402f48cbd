"""Diagnostics on memory files: where, which code, which severity, and kept fresh."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from tests.lsp.conftest import CODE, G2, G3, Editor, bind_all, bound_retry

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


async def test_a_drifted_reference_is_a_warning_on_the_reference_itself(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.memory("retry", ["src/a.py#g", "src/a.py#h"])
    bind_all(ws)
    ws.write("src/a.py", "def g():\n    return 2\n\n\ndef h():\n    return 3\n")
    await editor.start()

    drifted = await editor.one("memories/retry.md", "drifted")

    line = ws.read("memories/retry.md").splitlines()[3]
    assert line == '  - "src/a.py#h"'
    assert drifted.range == types.Range(
        start=types.Position(line=3, character=4), end=types.Position(line=3, character=len(line))
    )
    assert drifted.severity == types.DiagnosticSeverity.Warning
    assert drifted.source == "moor"
    # The change itself, in a line (issue 23, item 3): `return 2` became `return 3`.
    assert drifted.message == "body changed in h since it was bound: `2` → `3`"
    assert isinstance(drifted.data, dict)
    assert drifted.data["memory"] == "memories/retry.md"
    assert drifted.data["canonical"] == "src/a.py#h"
    assert drifted.data["state"] == "drifted"
    assert drifted.related_information is not None
    code_location = drifted.related_information[0].location
    assert code_location.uri == editor.uri("src/a.py")
    assert code_location.range.start == types.Position(line=4, character=0)
    # The unchanged reference to g on line 2 has no diagnostic; h's (above) does.
    items = await editor.diagnostics("memories/retry.md", lambda items: True)
    assert [d.range.start.line for d in items] == [3]


async def test_each_trust_state_has_its_code_and_severity(editor: Editor) -> None:
    ws = editor.ws
    # h's body differs from g's, or h would be found again in b.py as a rename of g.
    ws.write("src/a.py", CODE.replace("return 2", "return 5", 2).replace("return 5", "return 2", 1))
    ws.memory("gone", "src/a.py#h")
    ws.memory("moved", "src/a.py#g")
    bind_all(ws)
    ws.write("src/b.py", "def g():\n    return 2\n")
    ws.write("src/a.py", "def other():\n    return 1\n")  # g moved to b.py, h gone
    ws.memory("unbound", "src/b.py#g")
    ws.write("memories/ungrounded.md", "---\ntitle: x\n---\n# Nothing in particular\n")
    ws.write("memories/invalid.md", "---\nabout: [src/a.py\n---\n# Broken\n")
    await editor.start()

    expected = {
        "gone": types.DiagnosticSeverity.Error,
        "moved": types.DiagnosticSeverity.Information,
        "unbound": types.DiagnosticSeverity.Information,
        "ungrounded": types.DiagnosticSeverity.Hint,
        "invalid": types.DiagnosticSeverity.Error,
    }
    for name, severity in expected.items():
        diagnostic = await editor.one(f"memories/{name}.md", name)
        assert diagnostic.severity == severity, name
        assert diagnostic.source == "moor"

    moved = await editor.one("memories/moved.md", "moved")
    assert isinstance(moved.data, dict)
    assert moved.data["moved_to"] == "src/b.py#g"
    # What an action may do is the engine's verdict, carried for the code actions to offer.
    assert (moved.data["followable"], moved.data["bindable"]) == (True, False)
    unbound = await editor.one("memories/unbound.md", "unbound")
    assert isinstance(unbound.data, dict)
    assert (unbound.data["followable"], unbound.data["bindable"]) == (False, True)
    assert "now src/b.py#g" in moved.message
    invalid = await editor.one("memories/invalid.md", "invalid")
    assert invalid.range.start.line >= 1  # at the YAML problem, not at the top of the file
    assert isinstance(invalid.data, dict)
    assert invalid.data["problem"] == "yaml_syntax"


async def test_positions_count_non_ascii_text_in_the_negotiated_encoding(editor: Editor) -> None:
    ws = editor.ws
    code = "def grüße():\n    return 2\n\n\ndef größe():\n    return 2\n"
    ws.write("src/naïve😀.py", code)
    line = 'about: ["src/naïve😀.py#grüße", "src/naïve😀.py#größe"]  # ünïcode'
    ws.write("memories/wide.md", f"---\ntitle: Ärger 😀\n{line}\n---\n# Wide\n")
    bind_all(ws)
    ws.write("src/naïve😀.py", code[: -len("return 2\n")] + "return 3\n")  # größe drifts
    result = await editor.start()

    drifted = await editor.one("memories/wide.md", "drifted")

    reference = '"src/naïve😀.py#größe"'
    before = line[: line.index(reference)]
    assert drifted.range.start == types.Position(line=2, character=editor.units(before))
    assert drifted.range.end == types.Position(line=2, character=editor.units(before + reference))
    # The two clients negotiate different encodings, so the numbers above differ.
    assert result.capabilities.position_encoding == (
        types.PositionEncodingKind.Utf8
        if editor.name == "neovim"
        else types.PositionEncodingKind.Utf16
    )
    # Hovering inside the reference, after its emoji, finds that reference.
    inside = before + '"src/naïve😀.py#gr'
    hover = await editor.hover("memories/wide.md", 2, editor.units(inside))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "src/naïve😀.py#größe" in hover.contents.value
    assert "drifted" in hover.contents.value
    assert hover.range == drifted.range


async def test_a_file_written_by_another_process_updates_diagnostics(editor: Editor) -> None:
    ws = editor.ws
    g2, g3, h2, h5 = (
        "def g():\n    return 2\n",
        "def g():\n    return 3\n",
        "def h():\n    return 2\n",
        "def h():\n    return 5\n",
    )
    ws.write("src/a.py", g2 + h2)
    ws.memory("retry", "src/a.py#g")
    ws.memory("other", "src/a.py#h")
    bind_all(ws)
    ws.write("src/a.py", g2 + h5)
    await editor.start()
    await editor.one("memories/other.md", "drifted")  # the first check is done …
    assert await editor.now("memories/retry.md") == []  # … and g is current

    ws.write("src/a.py", g3 + h5)  # another process edits g; no LSP notification at all
    await editor.one("memories/retry.md", "drifted")

    ws.write("src/a.py", g2 + h5)  # and back
    for _ in range(600):  # the clearing publish of a slow machine's extra check
        if await editor.now("memories/retry.md") == []:
            break
        await asyncio.sleep(0.1)
    assert await editor.now("memories/retry.md") == []

    ws.memory("fresh", "src/a.py#h")  # a new memory file, never opened
    await editor.one("memories/fresh.md", "unbound")
    if not editor.pull:
        published = [uri for uri, _count in editor.client.published]  # type: ignore[attr-defined]
        # Only URIs whose diagnostics changed are sent: retry twice (drifted, cleared),
        # other once (its drift never changed), fresh once.
        assert published.count(editor.uri("memories/retry.md")) == 2
        assert published.count(editor.uri("memories/other.md")) == 1
        assert published.count(editor.uri("memories/fresh.md")) == 1


async def test_a_file_written_again_while_the_change_settles_is_checked_as_last_written(
    editor: Editor,
) -> None:
    ws = editor.ws
    bound_retry(ws)
    await editor.start()
    await editor.execute("moor.check")  # answers once the workspace is checked
    assert await editor.now("memories/retry.md") == []
    ws.write("src/a.py", G3)  # seen and parsed ahead while the server waits for more …
    await asyncio.sleep(0.05)
    ws.write("src/a.py", G2)  # … then written back before the check
    ws.memory("later", "src/a.py#g")  # a change whose diagnostic shows the check is done
    await editor.one("memories/later.md", "unbound")
    # What must hold is the end state: checked as last written. (On a slow machine the
    # first write can get a check of its own, whose drift is then rightly shown and
    # cleared; a parse prepared for it and used for the second would leave it drifted.)
    for _ in range(600):  # the clearing publish of a slow machine's extra check
        if await editor.now("memories/retry.md") == []:
            break
        await asyncio.sleep(0.1)
    assert await editor.now("memories/retry.md") == []
    # Control: written once, the same edit is drift.
    ws.write("src/a.py", G3)
    await editor.one("memories/retry.md", "drifted")


async def test_a_pulling_client_is_answered_and_never_pushed_to(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.memory("retry", "src/a.py#g")
    bind_all(ws)
    ws.write("src/a.py", CODE.replace("return 2", "return 3", 1))
    await editor.start()
    await editor.one("memories/retry.md", "drifted")

    report = await editor.client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    by_uri = {item.uri: item for item in report.items}
    full = by_uri[editor.uri("memories/retry.md")]
    assert isinstance(full, types.WorkspaceFullDocumentDiagnosticReport)
    assert [d.code for d in full.items] == ["drifted"]
    again = await editor.client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(
            previous_result_ids=[types.PreviousResultId(uri=full.uri, value=full.result_id or "")]
        )
    )
    assert isinstance(again.items[0], types.WorkspaceUnchangedDocumentDiagnosticReport)
    if editor.pull:
        assert editor.client.diagnostics == {}  # pulled above, never pushed
    else:
        assert editor.uri("memories/retry.md") in editor.client.diagnostics
