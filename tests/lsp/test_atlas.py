"""`moor.atlas` through the protocol: the atlas's data from the live check, for the editor's
*Show atlas* view, following trust states as the server sees them change."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lsp.conftest import CODE, Editor, bind_all

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


def states(atlas: Any) -> dict[str, str]:
    assert isinstance(atlas, dict) and atlas["version"] == 1
    return {m["path"]: m["state"] for m in atlas["memories"]}


async def test_the_atlas_follows_the_states_the_server_sees(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/a.py", CODE)
    ws.memory("on-g", "src/a.py#g")
    ws.memory("on-h", "src/a.py#h")
    ws.write(
        "memories/more.md",
        "---\nabout:\n  - src/a.py#h\nlinks:\n  elaborates: [memories/on-g.md]\n---\n# More\n\nx\n",
    )
    bind_all(ws)
    await editor.start()
    first = await editor.until(lambda: editor.execute("moor.atlas"), lambda found: found)
    assert states(first) == {
        "memories/on-g.md": "current",
        "memories/on-h.md": "current",
        "memories/more.md": "current",
    }
    more = next(m for m in first["memories"] if m["path"] == "memories/more.md")
    assert more["cobound"] == ["memories/on-h.md"]
    assert more["links"][0]["path"] == "memories/on-g.md"

    ws.write("src/a.py", CODE.replace("return 2", "return 9", 1))  # g drifts
    await editor.one("memories/on-g.md", "drifted")
    after = await editor.execute("moor.atlas", editor.uri("src/a.py"))
    # The drifted memory is drifted in the atlas; the control, h's, is still current.
    assert states(after)["memories/on-g.md"] == "drifted"
    assert states(after)["memories/on-h.md"] == "current"
