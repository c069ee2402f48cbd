"""Links between memories (`links:`) and cobound memories (sharing an anchor): shown by
`moor about`, flagged by `moor check` when a memory contradicts a current one or links to a
memory that does not exist, and never a source of grounding."""

from __future__ import annotations

from typing import Any

from tests.conftest import Workspace

CODE = "def send(payload):\n    return payload\n\n\ndef close():\n    return None\n"


def linked(ws: Workspace, name: str, about: str, links: dict[str, list[str]]) -> None:
    lines = ["---", "about:", f"  - {about}", "links:"]
    for relation, targets in links.items():
        lines.append(f"  {relation}:")
        lines.extend(f"    - {target}" for target in targets)
    lines += ["---", f"# {name}", "", "A decision.", ""]
    ws.write(f"memories/{name}.md", "\n".join(lines))


def findings(ws: Workspace, memory: str) -> list[dict[str, Any]]:
    value = ws.states()[memory]["link_findings"]
    assert isinstance(value, list)
    return value


def test_a_memory_contradicting_a_current_one_gets_a_check_note(ws: Workspace) -> None:
    ws.write("src/net.py", CODE)
    ws.memory("retries-are-safe", "src/net.py#send")
    ws.memory("closing-is-free", "src/net.py#close")
    linked(
        ws,
        "retries-double-send",
        "src/net.py#send",
        {"contradicts": ["memories/retries-are-safe.md"]},
    )
    linked(
        ws, "closing-costs", "src/net.py#close", {"contradicts": ["memories/closing-is-free.md"]}
    )
    ws.moor("bind", "memories", check=True)
    # The contradicted memory of the second pair drifts: no longer a current claim.
    ws.write("src/net.py", CODE.replace("return None", "return 1"))

    found = findings(ws, "memories/retries-double-send.md")
    assert [(f["code"], f["target"], f["line"]) for f in found] == [
        ("contradicts_current", "memories/retries-are-safe.md", 6)
    ]
    # Control: contradicting a drifted memory is no finding (it already needs a look).
    assert ws.state("memories/closing-is-free.md") == "drifted"
    assert findings(ws, "memories/closing-costs.md") == []

    run = ws.moor("check")
    assert "memories/retries-double-send.md: current" in run.out
    assert "links.contradicts — contradicts memories/retries-are-safe.md, which is current" in (
        run.out
    )
    assert run.code == 1  # for the drifted memory, not for the note


def test_a_note_alone_does_not_fail_check(ws: Workspace) -> None:
    ws.write("src/net.py", CODE)
    ws.memory("retries-are-safe", "src/net.py#send")
    linked(
        ws,
        "retries-double-send",
        "src/net.py#send",
        {"contradicts": ["memories/retries-are-safe.md"]},
    )
    ws.moor("bind", "memories", check=True)
    run = ws.moor("check")
    assert "which is current" in run.out
    assert run.code == 0


def test_a_link_to_a_missing_memory_is_flagged_with_did_you_mean(ws: Workspace) -> None:
    ws.write("src/net.py", CODE)
    ws.memory("retries-are-safe", "src/net.py#send")
    linked(
        ws,
        "wire-format",
        "src/net.py#close",
        {"see-also": ["memories/retries-are-safe.md", "memories/retries-are-saef.md"]},
    )
    linked(ws, "short-name", "src/net.py#close", {"elaborates": ["retries-are-safe.md"]})
    ws.moor("bind", "memories", check=True)

    found = findings(ws, "memories/wire-format.md")
    # Control: the first, correct link is no finding.
    assert [(f["code"], f["target"], f["suggestion"], f["line"]) for f in found] == [
        ("missing_link", "memories/retries-are-saef.md", "memories/retries-are-safe.md", 7)
    ]
    assert "did you mean memories/retries-are-safe.md?" in found[0]["message"]
    short = findings(ws, "memories/short-name.md")
    assert [f["suggestion"] for f in short] == ["memories/retries-are-safe.md"]
    # Checked alone, its targets are not evaluated with it: each is looked up by itself,
    # the existing one still no finding (the control), the typo still one.
    alone = ws.states("memories/wire-format.md")["memories/wire-format.md"]["link_findings"]
    assert [f["target"] for f in alone] == ["memories/retries-are-saef.md"]


def test_links_never_propagate_grounding(ws: Workspace) -> None:
    ws.write("src/net.py", CODE)
    ws.memory("retries-are-safe", "src/net.py#send")
    linked(ws, "elaboration", "src/net.py#close", {"elaborates": ["memories/retries-are-safe.md"]})
    ws.moor("bind", "memories", check=True)
    ws.write("src/net.py", CODE.replace("return payload", "return [payload]"))
    states = ws.states()
    # Control: the linked memory did drift …
    assert states["memories/retries-are-safe.md"]["state"] == "drifted"
    # … and the memory linking to it is as its own code is.
    assert states["memories/elaboration.md"]["state"] == "current"
    assert states["memories/elaboration.md"]["link_findings"] == []


def test_about_shows_links_both_ways_and_cobound_memories(ws: Workspace) -> None:
    ws.write("src/net.py", CODE)
    ws.memory("retries-are-safe", "src/net.py#send")
    ws.memory("send-is-logged", "src/net.py#send")
    ws.memory("close-is-free", "src/net.py#close")
    linked(ws, "elaboration", "src/net.py#close", {"elaborates": ["memories/retries-are-safe.md"]})
    ws.moor("bind", "memories", check=True)

    run = ws.moor("about", "--json", "src/net.py#send")
    items = {m["path"]: m for m in run.json()["memories"]}
    safe = items["memories/retries-are-safe.md"]
    assert safe["cobound"] == ["memories/send-is-logged.md"]
    assert safe["links"] == [
        {
            "relation": "elaborates",
            "path": "memories/elaboration.md",
            "direction": "from",
            "exists": True,
        }
    ]
    # Control: a memory on other code is neither cobound nor linked.
    close = ws.moor("about", "--json", "src/net.py#close").json()["memories"]
    by_path = {m["path"]: m for m in close}
    assert by_path["memories/close-is-free.md"]["cobound"] == ["memories/elaboration.md"]
    assert by_path["memories/elaboration.md"]["links"][0]["direction"] == "to"

    text = ws.moor("about", "src/net.py#send").out
    assert "<- elaborates memories/elaboration.md" in text
    assert "cobound: memories/send-is-logged.md" in text


def test_a_link_no_file_can_have_is_a_missing_link_not_a_crash(ws: Workspace) -> None:
    ws.write("src/net.py", CODE)
    ws.write(
        "memories/hostile.md",
        "---\nabout:\n  - src/net.py#send\nlinks:\n  contradicts:\n"
        '    - "memories/\\u0000x.md"\n    - ../../etc/passwd\n    - /etc/passwd\n'
        '    - ""\n---\n# Hostile\n\nx\n',
    )
    assert ws.moor("bind", "memories").code == 0
    run = ws.moor("check", "--format", "json")
    assert run.code == 0, run.err
    [memory] = run.json()["memories"]
    codes = [(f["code"], f["target"]) for f in memory["link_findings"]]
    # Every one is a missing link (none escapes, none is read), the empty one included.
    assert [code for code, _target in codes] == ["missing_link"] * 4
    assert "/etc/passwd" in [target for _code, target in codes]
