"""Forgetting is keyed on the value (issue 11.3): `moor forget` removes the file and
tombstones what it said; the same text — whatever its case, spacing or punctuation — cannot
come back by any write path (add, edit, `remember:` in a prompt, a note bound again by `moor
source bind`; the MCP tools' in tests/mcp/test_writes.py; a file written by hand is flagged)
until `moor restore --why`. Each refusal has its positive control: a different text is
accepted."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from moor_store.lockfile import parse_lock

from tests.conftest import Workspace

CODE = "def send(body):\n    return body\n"
WRONG = "memories/wrong.md"
TEXT = "Send retries are safe: the server dedupes by idempotency key."
VARIANTS = [
    "send retries are safe: the server dedupes by idempotency key.",  # case
    "SEND RETRIES ARE SAFE — THE SERVER DEDUPES BY IDEMPOTENCY KEY",  # case, punctuation
    "Send   retries are safe:\nthe server   dedupes by idempotency key",  # spacing
    "Send retries are safe; the server dedupes, by idempotency-key!",  # punctuation
]


def _forgotten(ws: Workspace) -> None:
    ws.write("src/a.py", CODE)
    ws.memory("wrong", "src/a.py#send", body=TEXT)
    ws.moor("bind", check=True)
    run = ws.moor("forget", WRONG, "--why", "it never held")
    assert run.code == 0, run.err


def test_forget_removes_the_file_and_tombstones_its_value_in_moor_lock(ws: Workspace) -> None:
    _forgotten(ws)

    assert not (ws.root / WRONG).exists()
    lock = parse_lock(ws.read("moor.lock"))
    assert WRONG not in lock.memories
    [tombstone] = lock.tombstones
    assert tombstone.path == WRONG and tombstone.reason == "it never held"
    assert tombstone.content.startswith("value/1 ") and TEXT not in ws.read("moor.lock")
    log = ws.moor("log", WRONG).out
    assert "forget" in log and "it never held" in log


@pytest.mark.parametrize("variant", VARIANTS)
def test_add_of_the_forgotten_text_is_refused_however_it_is_spelt(
    ws: Workspace, variant: str
) -> None:
    _forgotten(ws)

    run = ws.moor(
        "add", variant, "--about", "src/a.py#send", "--title", "Again", "--format", "json"
    )

    assert run.code == 1
    refusal = run.json()["refused"][0]
    assert refusal["code"] == "forgotten"
    assert "it never held" in refusal["message"] and WRONG in refusal["message"]
    assert refusal["instead"].startswith(f"moor restore {WRONG}")
    assert not (ws.root / "memories/again.md").exists()
    # Positive control: another claim with most of the same words is accepted.
    other = re.sub("idempotency", "request", variant, flags=re.IGNORECASE)
    assert ws.moor("add", other, "--about", "src/a.py#send", "--title", "Again").code == 0


def test_an_edit_that_writes_the_forgotten_text_is_refused(ws: Workspace) -> None:
    _forgotten(ws)
    ws.memory("other", "src/a.py#send", body="Send is cheap.")
    ws.moor("bind", check=True)
    base = ws.moor("edit", "memories/other.md", "--format", "json").json()["content_hash"]

    run = ws.moor(
        "edit",
        "memories/other.md",
        "--section",
        "other",
        "--text",
        VARIANTS[1],
        "--base-hash",
        str(base),
    )

    assert run.code == 1 and "forgotten on" in run.err and "it never held" in run.err
    assert "Send is cheap." in ws.read("memories/other.md")
    ok = ws.moor(
        "edit",
        "memories/other.md",
        "--section",
        "other",
        "--text",
        "Send is cheap enough.",
        "--base-hash",
        str(base),
    )
    assert ok.code == 0, ok.err  # control: another text is written


def test_remember_in_a_prompt_of_the_forgotten_text_is_refused_citing_the_tombstone(
    ws: Workspace,
) -> None:
    _forgotten(ws)
    before = sorted(p.name for p in (ws.root / "memories").iterdir())

    refused = ws.prompt_hook(f"remember: {VARIANTS[3]}")

    assert refused.startswith("moor: not remembered: refused: this text was forgotten on 20")
    assert f"({WRONG}): it never held" in refused
    assert sorted(p.name for p in (ws.root / "memories").iterdir()) == before
    assert ws.moor("check").code == 0  # nothing came back, not even flagged
    # Positive control: the same hook remembers another claim with most of the same words.
    other = VARIANTS[3].replace("idempotency-key", "request id")
    remembered = ws.prompt_hook(f"remember: {other}")
    assert remembered.startswith("moor: remembered as memories/"), remembered
    [written] = set(p.name for p in (ws.root / "memories").iterdir()) - set(before)
    assert "request id" in ws.read(f"memories/{written}")


SERENA = '[[sources]]\nkind = "serena"\n'
NOTE = ".serena/memories/retries.md"
SIDECAR = "memories/sources/serena/retries.md"


def test_binding_a_note_whose_sidecar_was_forgotten_is_refused_until_the_note_says_otherwise(
    ws: Workspace,
) -> None:
    # `moor source bind` writes the sidecar's text itself (the note quoted, in a fixed
    # frame): the one text it can carry back is a forgotten sidecar's, by binding its note.
    ws.write("moor.toml", 'memory_roots = ["memories"]\n' + SERENA)
    ws.write(NOTE, f"# Retries\n\n{TEXT}\n")
    ws.write("src/a.py", CODE)
    bind = ("source", "bind", "serena", "retries", "--about", "src/a.py#send", "--format", "json")
    assert ws.moor(*bind).json()["path"] == SIDECAR
    ws.moor("forget", SIDECAR, "--why", "the note was wrong", check=True)
    assert not (ws.root / SIDECAR).exists()

    run = ws.moor(*bind)

    assert run.code == 1
    answer = run.json()
    assert answer["action"] == "source bind" and not answer["ok"]
    [refusal] = answer["refused"]
    assert refusal["code"] == "forgotten" and refusal["path"] == SIDECAR
    assert f"({SIDECAR}): the note was wrong" in refusal["message"]
    assert refusal["instead"].startswith(f"moor restore {SIDECAR}")
    assert not (ws.root / SIDECAR).exists()
    # Positive control: once the note says something else, the same bind writes it.
    ws.write(NOTE, "# Retries\n\nRetries are safe: the server dedupes by request id.\n")
    again = ws.moor(*bind)
    assert again.code == 0, again.err
    assert "dedupes by request id" in ws.read(SIDECAR)
    assert ws.state(SIDECAR) == "current"


def test_a_hand_written_file_with_the_forgotten_text_is_flagged_by_check(ws: Workspace) -> None:
    _forgotten(ws)
    ws.memory("sneaky", "src/a.py#send", body=VARIANTS[2])
    ws.memory("honest", "src/a.py#send", body="Send is not safe to retry.")
    bound = ws.moor("bind")
    assert bound.code == 1 and "memories/sneaky.md: refused: this text was forgotten" in bound.err
    assert "memories/honest.md: bound" in bound.out  # control: the same bind binds the other

    run = ws.moor("check", "--format", "json")

    assert run.code == 1  # a person must delete it or restore the forgotten one
    states = {m["path"]: m for m in run.json()["memories"]}
    sneaky = states["memories/sneaky.md"]
    assert sneaky["state"] == "retired" and sneaky["code"] == "tombstoned"
    assert "it never held" in str(sneaky["notes"])
    assert states["memories/honest.md"]["state"] == "current"  # control
    assert "memories/sneaky.md" in ws.moor("check").out
    reaffirm = ws.moor("reaffirm", "memories/sneaky.md", "--why", "it is fine")
    assert reaffirm.code == 1 and "forgotten on" in reaffirm.err  # reviewing it back is refused
    assert ws.moor("reaffirm", "memories/honest.md", "--why", "fine").code == 0  # control
    (ws.root / "memories/sneaky.md").unlink()
    assert ws.moor("check").code == 0


def test_forgotten_text_written_back_is_never_told_to_be_bound(ws: Workspace) -> None:
    _forgotten(ws)
    ws.memory("wrong", "src/a.py#send", body=TEXT)  # the old buffer saved again, unbound
    ws.memory("fresh", "src/a.py#send", body="Send is not safe to retry.")  # never bound

    notes = {m["path"]: m["notes"] for m in ws.moor("check", "--format", "json").json()["memories"]}

    assert not any("moor bind" in note for note in notes[WRONG]), notes[WRONG]
    assert any("moor restore" in note for note in notes[WRONG]), notes[WRONG]
    assert any("moor bind" in note for note in notes["memories/fresh.md"])  # control


def test_the_tombstone_survives_an_older_moor_lock_checked_out(ws: Workspace) -> None:
    subprocess.run(["git", "init", "-q"], cwd=ws.root, check=True)
    ws.write(".gitignore", ".moor/\n")
    ws.write("src/a.py", CODE)
    ws.memory("wrong", "src/a.py#send", body=TEXT)
    ws.moor("bind", check=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e.invalid",
    }
    subprocess.run(["git", "add", "-A"], cwd=ws.root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "x"], cwd=ws.root, check=True, env=env)
    ws.moor("forget", WRONG, "--why", "it never held", check=True)

    # The old lock and the old file come back together.
    subprocess.run(["git", "checkout", "HEAD", "--", "moor.lock", WRONG], cwd=ws.root, check=True)

    assert parse_lock(ws.read("moor.lock")).tombstones == ()
    report = ws.states()[WRONG]
    assert report["code"] == "tombstoned"  # this clone's journal holds the tombstone
    refused = ws.moor("add", VARIANTS[0], "--title", "Again")
    assert refused.code == 1 and "forgotten on" in refused.err
    # Positive control: without the journal, that old lock lets it back.
    shutil.rmtree(ws.root / ".moor")
    assert ws.state(WRONG) == "current"


def test_restore_lifts_the_tombstone_and_writes_the_file_again_from_the_journal(
    ws: Workspace,
) -> None:
    _forgotten(ws)
    before = ws.moor("log", WRONG).out

    run = ws.moor("restore", WRONG, "--why", "it held after all")

    assert run.code == 0, run.err
    assert TEXT in ws.read(WRONG)
    assert parse_lock(ws.read("moor.lock")).tombstones == ()
    assert ws.state(WRONG) == "current"  # its bound state came back with it
    assert "it held after all" in ws.moor("log", WRONG).out and "forget" in before
    assert ws.moor("add", VARIANTS[0], "--title", "Again").code == 0  # no longer refused


def test_forget_and_restore_need_a_reason_and_restore_needs_a_latch(ws: Workspace) -> None:
    ws.write("src/a.py", CODE)
    ws.memory("plain", "src/a.py#send")

    assert ws.moor("forget", "memories/plain.md").code == 2
    assert (ws.root / "memories/plain.md").exists()
    run = ws.moor("restore", "memories/plain.md", "--why", "x")
    assert run.code == 1 and "neither retired nor forgotten" in run.err
