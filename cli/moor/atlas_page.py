"""The atlas as one self-contained HTML page: the engine's atlas data (JSON) in the page, and
hand-written CSS and JavaScript (atlas.css, atlas.js and the body, atlas_body.html, beside
this module, inlined; the VS Code view inlines the same files) that draw it — no library,
nothing fetched at view time.

The page's Content-Security-Policy allows nothing from anywhere (`default-src 'none'`) but
its own inline style and its one inline script (by hash), so even a memory's text that holds
markup is shown as text and can load nothing. The data is embedded as JSON in a
`<script type="application/json">` with every `<` escaped, so no text closes it.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Mapping

from moor_store.own_files import read_own_asset


def _asset(name: str) -> str:
    return read_own_asset("moor", name)


STYLE = _asset("atlas.css")
SCRIPT = _asset("atlas.js")

BODY = _asset("atlas_body.html")


def script_hash(script: str) -> str:
    """The CSP source that allows exactly this inline script."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def embedded_json(data: Mapping[str, object]) -> str:
    """`data` as JSON that no text inside can end the script element holding it."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def render_page(data: Mapping[str, object], *, csp_source: str | None = None) -> str:
    """The page. `csp_source`: what else may serve it (a VS Code webview's own source)."""
    workspace = html.escape(str(data.get("workspace", "")))
    extra = f" {csp_source}" if csp_source else ""
    policy = (
        f"default-src 'none'; script-src {script_hash(SCRIPT)}{extra}; "
        f"style-src 'unsafe-inline'{extra}; img-src data:"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f"<title>moor atlas \u2014 {workspace}</title><style>{STYLE}</style></head><body>"
        + BODY.replace("{workspace}", workspace)
        + f'<script type="application/json" id="atlas-data">{embedded_json(data)}</script>'
        + f"<script>{SCRIPT}</script></body></html>\n"
    )
