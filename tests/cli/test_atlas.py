"""`moor atlas`: one offline HTML page of every memory, loaded in headless Chromium from a
file:// URL with no network: one node per memory carrying its path and trust state, a
drifted memory marked drifted, a memory's text, anchors, links and history on selection,
and no markup of a memory's text ever run as markup."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from tests.cli.browser import dump_dom, screenshot
from tests.conftest import Workspace

ARTEFACTS = Path(__file__).resolve().parents[1] / "artefacts"
CODE = "def send(payload):\n    return payload\n\n\ndef close():\n    return None\n"
NODE = re.compile(r'<div class="memory[^"]*" data-memory="([^"]+)" data-state="([^"]+)"')


def populated(ws: Workspace) -> None:
    ws.write("src/net.py", CODE)
    ws.write("src/util/text.py", "def clean(value):\n    return value.strip()\n")
    ws.write("docs/unbound.py", "X = 1\n")  # a folder with code and no memory
    ws.memory("retries-are-safe", "src/net.py#send", body="Retries carry an idempotency key.")
    ws.memory("send-is-logged", "src/net.py#send")
    ws.memory("close-is-free", "src/net.py#close")
    ws.memory("clean-strips", "src/util/text.py#clean")
    ws.write(
        "memories/closing-costs.md",
        "---\nabout:\n  - src/util/text.py\nlinks:\n  contradicts:\n"
        "    - memories/close-is-free.md\n---\n# Closing costs\n\n"
        "<script>document.title='owned'</script><img src=x onerror=alert(1)>"
        " Closing is not free.\n",
    )
    ws.moor("bind", "memories", check=True)
    ws.write("src/net.py", CODE.replace("return None", "return 1"))  # close-is-free drifts


def page(ws: Workspace, *args: str) -> Path:
    run = ws.moor("atlas", "--output", "atlas.html", *args)
    assert run.code == 0, run.err
    assert "atlas.html: the atlas of 5 memories" in run.out
    return ws.root / "atlas.html"


def test_every_memory_is_one_node_with_its_state_and_a_drifted_one_is_drifted(
    ws: Workspace,
) -> None:
    populated(ws)
    dom = dump_dom(page(ws).as_uri())

    assert 'data-rendered="true"' in dom
    nodes = dict(NODE.findall(dom))
    assert len(NODE.findall(dom)) == 5  # one node per memory, however many anchors it has
    assert nodes["memories/close-is-free.md"] == "drifted"
    # Control: the others are current, so the drifted mark is the memory's own.
    assert {p: s for p, s in nodes.items() if p != "memories/close-is-free.md"} == {
        "memories/retries-are-safe.md": "current",
        "memories/send-is-logged.md": "current",
        "memories/clean-strips.md": "current",
        "memories/closing-costs.md": "current",
    }
    assert "1 drifted" in dom and "4 current" in dom
    # Coverage by folder: src/util has its file covered, docs none.
    assert re.search(r'data-folder="docs"[^>]*title="0 of 1 files have memories', dom)
    assert re.search(r'data-folder="src/util"[^>]*title="1 of 1 files have memories', dom)


def test_a_selected_memory_shows_its_text_anchors_links_and_history(ws: Workspace) -> None:
    populated(ws)
    atlas = page(ws)
    dom = dump_dom(atlas.as_uri() + "#memory=memories/retries-are-safe.md")
    detail = dom[dom.index('<aside id="detail">') :]
    assert "Retries carry an idempotency key." in detail
    assert 'data-anchor="src/net.py#send"' in detail
    assert "cobound" in detail and "memories/send-is-logged.md" in detail
    assert 'id="neighbourhood"' in detail  # the drawn neighbourhood of links and cobound
    assert re.search(r"<li>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  open \(bind\)  src/net.py#send", detail)
    # Control: with no memory named, the panel only invites a click.
    plain = dump_dom(atlas.as_uri())
    assert "Click a memory" in plain[plain.index('<aside id="detail">') :]

    contradicting = dump_dom(atlas.as_uri() + "#memory=memories/closing-costs.md")
    detail = contradicting[contradicting.index('<aside id="detail">') :]
    assert "→ contradicts" in detail and "memories/close-is-free.md" in detail
    # Its text is shown as text: the markup in it ran nothing.
    assert html.escape("<script>document.title='owned'</script>", quote=False) in detail
    assert "<title>moor atlas" in contradicting and "owned</title>" not in contradicting

    ARTEFACTS.mkdir(exist_ok=True)
    shot = ARTEFACTS / "atlas.png"
    screenshot(atlas.as_uri() + "#memory=memories/retries-are-safe.md", shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_page_is_self_contained_and_its_data_cannot_end_its_script(ws: Workspace) -> None:
    populated(ws)
    text = page(ws).read_text(encoding="utf-8")
    # Nothing to fetch: no URL of any scheme in a src or href, and a policy forbidding it.
    assert not re.search(r'(src|href)="(https?:)?//', text)
    assert "default-src 'none'" in text
    data = text[text.index('id="atlas-data">') :]
    data = data[len('id="atlas-data">') : data.index("</script>")]
    parsed = json.loads(data)
    assert parsed["version"] == 1 and len(parsed["memories"]) == 5
    assert "</script>" not in data and "<script>" not in data  # every `<` escaped
    assert any("<script>" in m["text"] for m in parsed["memories"])  # control: it was there


def test_the_default_page_goes_to_moors_state_folder_and_a_reserved_output_is_refused(
    ws: Workspace,
) -> None:
    populated(ws)
    run = ws.moor("atlas")
    assert run.code == 0, run.err
    assert (ws.root / ".moor" / "atlas.html").is_file()
    refused = ws.moor("atlas", "--output", "memories/atlas.html")
    assert refused.code == 2
    assert "memory folder" in refused.err
    assert not (ws.root / "memories" / "atlas.html").exists()
    printed = ws.moor("atlas", "--output", "-")
    assert printed.code == 0 and printed.out.startswith("<!DOCTYPE html>")


def test_the_page_draws_again_from_an_atlas_sent_to_it(ws: Workspace) -> None:
    """The editor's view sends the page a new atlas as states change (a `message` event):
    the page draws it again, keeping the memory shown."""
    populated(ws)
    text = page(ws).read_text(encoding="utf-8")
    data = json.loads(
        text.split('id="atlas-data">', 1)[1].split("</script>", 1)[0].replace("\\u003c", "<")
    )
    for memory in data["memories"]:
        if memory["path"] == "memories/retries-are-safe.md":
            memory["state"] = "gone"
    sent = json.dumps({"type": "atlas", "data": data}).replace("<", "\\u003c")
    # A copy whose policy allows the one script that stands in for the editor.
    copy = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    copy = copy.replace("</body>", f"<script>window.postMessage({sent}, '*')</script></body>")
    (ws.root / "sent.html").write_text(copy, encoding="utf-8")
    dom = dump_dom((ws.root / "sent.html").as_uri() + "#memory=memories/retries-are-safe.md")
    nodes = dict(NODE.findall(dom))
    assert nodes["memories/retries-are-safe.md"] == "gone"
    assert len(NODE.findall(dom)) == 5  # drawn again, not added to
    assert nodes["memories/send-is-logged.md"] == "current"  # control: the rest as sent
    detail = dom[dom.index('<aside id="detail">') :]
    assert "Retries carry an idempotency key." in detail  # the memory shown is kept


def test_open_hands_the_written_page_to_the_browser(ws: Workspace, tmp_path: Path) -> None:
    populated(ws)
    seen = tmp_path / "browser-was-given"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf %s "$1" > {seen}\n', encoding="utf-8")
    browser.chmod(0o755)
    # Control: without --open no browser is started.
    assert ws.moor("atlas", env={"BROWSER": str(browser)}, process=True).code == 0
    assert not seen.exists()
    run = ws.moor("atlas", "--open", env={"BROWSER": str(browser)}, process=True)
    assert run.code == 0, run.err
    # A BROWSER command is waited for (webbrowser's GenericBrowser): moor exits after it.
    assert seen.read_text(encoding="utf-8") == (ws.root / ".moor" / "atlas.html").as_uri()


def test_a_custom_anchor_is_in_the_atlas_without_a_file(ws: Workspace) -> None:
    populated(ws)
    with (ws.root / "moor.toml").open("a", encoding="utf-8") as config:
        config.write('\n[anchors.roster]\ncommand = ["true"]\n')
    ws.memory("roster", "anchor:roster")
    run = ws.moor("atlas", "--output", "-")
    assert run.code == 0, run.err
    data = json.loads(
        run.out.split('id="atlas-data">', 1)[1].split("</script>", 1)[0].replace("\\u003c", "<")
    )
    memory = next(m for m in data["memories"] if m["path"] == "memories/roster.md")
    assert [(a["ref"], a["file"]) for a in memory["anchors"]] == [("anchor:roster", None)]
    # Coverage counts files only: the same folders and files as without it (the control).
    assert [f["folder"] for f in data["summary"]["folders"]] == ["docs", "src", "src/util"]
    assert sum(f["files"] for f in data["summary"]["folders"]) == 3


def test_coverage_counts_code_files_and_not_moors_own_config_and_lock(ws: Workspace) -> None:
    populated(ws)
    ws.write("setup.py", "def setup():\n    return None\n")  # the control: a root code file
    run = ws.moor("atlas", "--output", "-")
    assert run.code == 0, run.err
    data = json.loads(
        run.out.split('id="atlas-data">', 1)[1].split("</script>", 1)[0].replace("\\u003c", "<")
    )
    folders = {f["folder"]: f for f in data["summary"]["folders"]}
    assert folders[""]["files"] == 1, folders  # setup.py; not moor.toml, not moor.lock
    assert folders["src"]["files"] == 1 and folders["docs"]["files"] == 1
