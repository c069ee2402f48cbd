"""Hover shows journal times in the server's local time, with the zone named."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
import pytest_lsp
from lsprotocol import types
from moor_store.journal import Journal
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import Workspace
from tests.lsp.conftest import Editor, drifted_retry, make_client

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

# India has no daylight saving time and a half-hour offset: its local time is never the
# UTC time, whatever the date, and its zone has a name of its own.
ZONE = "Asia/Kolkata"


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "moor_lsp"],
        client_factory=make_client,
        server_env={**os.environ, "TZ": ZONE},
    )
)
async def kolkata(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    yield lsp_client
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 5)
    finally:
        server = lsp_client._server
        if server is not None and server.returncode is None:
            server.kill()


async def test_hover_times_are_local_with_the_zone_shown(
    kolkata: LanguageClient, ws: Workspace
) -> None:
    drifted_retry(ws)
    editor = Editor(kolkata, ws, "neovim", client_capabilities("neovim"))
    await editor.start()
    drifted = await editor.one("memories/retry.md", "drifted")

    hover = await editor.hover("memories/retry.md", drifted.range.start.line, 6)

    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    with Journal(ws.root / ".moor/journal.sqlite") as journal:
        [bound] = [e for e in journal.entries(anchor="src/a.py#g") if e.code == "bind"]
    at = datetime.fromisoformat(bound.at.replace("Z", "+00:00"))
    local = at.astimezone(ZoneInfo(ZONE))
    utc = f"{at:%Y-%m-%d %H:%M}"
    assert f"- {local:%Y-%m-%d %H:%M} IST — bound" in hover.contents.value
    assert utc != f"{local:%Y-%m-%d %H:%M}"  # the control: the two readings differ …
    assert f"{utc} " not in hover.contents.value  # … and the UTC one is not shown
