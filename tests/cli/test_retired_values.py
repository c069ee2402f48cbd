"""Retired values stay retired (issue 26.3): a superseded memory's text cannot come back as a
new current memory by any write path — add under another title, an edit, a file written by
hand and bound, a reaffirm — any more than a forgotten text can; each refusal says
`superseded`, names the successor and `moor restore`. A paraphrase is a new claim: it is
written, and told of its retired siblings on the same code with why they were retired. Each
refusal has its positive control."""

from __future__ import annotations

from tests.conftest import Workspace

CODE = "def send(body):\n    return body\n\n\ndef receive(body):\n    return body\n"
OLD = "memories/old.md"
NEW = "memories/new.md"
OLD_TEXT = "Send retries three times on a timeout."
NEW_TEXT = "Send retries five times on a timeout, then gives up."


def _superseded(ws: Workspace) -> None:
    ws.write("src/a.py", CODE)
    ws.memory("old", "src/a.py#send", body=OLD_TEXT)
    ws.memory("new", "src/a.py#send", body=NEW_TEXT)
    ws.moor("bind", check=True)
    run = ws.moor("supersede", OLD, "--by", NEW, "--why", "five retries since 2.0")
    assert run.code == 0, run.err


def _assert_superseded_refusal(refusal: dict[str, object]) -> None:
    assert refusal["code"] == "superseded", refusal
    assert refusal["path"] == OLD
    message = str(refusal["message"])
    assert NEW in message and "five retries since 2.0" in message
    assert f"restore {OLD}" in message
    assert str(refusal["instead"]).startswith(f"moor restore {OLD}")


def test_add_of_a_superseded_text_under_another_title_is_refused_naming_the_successor(
    ws: Workspace,
) -> None:
    _superseded(ws)

    run = ws.moor(
        "add",
        "send RETRIES three times, on a timeout",  # the same value, spelt another way
        "--about",
        "src/a.py#receive",
        "--title",
        "Another title",
        "--format",
        "json",
    )

    assert run.code == 1
    [refusal] = run.json()["refused"]
    _assert_superseded_refusal(refusal)
    assert not (ws.root / "memories/another-title.md").exists()
    # Positive control: a claim with most of the same words is written.
    ok = ws.moor(
        "add",
        "Send retries three times on a connection reset.",
        "--about",
        "src/a.py#receive",
        "--title",
        "Another title",
    )
    assert ok.code == 0, ok.err
    assert (ws.root / "memories/another-title.md").exists()


def test_restore_is_the_way_back_for_a_superseded_text(ws: Workspace) -> None:
    _superseded(ws)
    add = ("add", OLD_TEXT, "--about", "src/a.py#send", "--title", "Again")
    assert ws.moor(*add).code == 1  # control: refused while retired

    ws.moor("restore", OLD, "--why", "three was right after all", check=True)

    assert ws.state(OLD) == "current"
    assert ws.moor(*add).code == 0  # no longer a retired value


def test_an_edit_that_writes_a_superseded_text_is_refused(ws: Workspace) -> None:
    _superseded(ws)
    ws.memory("other", "src/a.py#receive", body="Receive is cheap.")
    ws.moor("bind", check=True)
    base = ws.moor("edit", "memories/other.md", "--format", "json").json()["content_hash"]
    edit = ("edit", "memories/other.md", "--section", "other", "--base-hash", str(base))

    run = ws.moor(*edit, "--text", OLD_TEXT, "--format", "json")

    assert run.code == 1
    [refusal] = run.json()["refused"]
    _assert_superseded_refusal(refusal)
    assert "Receive is cheap." in ws.read("memories/other.md")
    ok = ws.moor(*edit, "--text", "Receive is cheap enough.")
    assert ok.code == 0, ok.err  # control: another text is written


def test_bind_refuses_a_hand_written_copy_of_a_superseded_or_forgotten_text(
    ws: Workspace,
) -> None:
    _superseded(ws)
    ws.memory("gone", "src/a.py#receive", body="Receive never blocks.")
    ws.moor("bind", check=True)
    ws.moor("forget", "memories/gone.md", "--why", "it blocks on a full queue", check=True)
    ws.memory("copy-of-old", "src/a.py#receive", body=OLD_TEXT)
    ws.memory("copy-of-gone", "src/a.py#receive", body="receive never blocks!")
    ws.memory("honest", "src/a.py#receive", body="Receive blocks on a full queue.")

    run = ws.moor("bind", "--format", "json")

    assert run.code == 1
    refused = {r["path"]: r for r in run.json()["refused"]}
    _assert_superseded_refusal(refused[OLD])
    assert refused[OLD]["message"].startswith("memories/copy-of-old.md: ")
    forgotten = refused["memories/gone.md"]
    assert forgotten["code"] == "forgotten" and "it blocks on a full queue" in forgotten["message"]
    lock = ws.read("moor.lock")
    assert "memories/copy-of-old.md" not in lock and "memories/copy-of-gone.md" not in lock
    assert "memories/honest.md" in lock  # control: the same bind bound the other one
    assert ws.state("memories/honest.md") == "current"


def test_reaffirm_refuses_a_memory_rewritten_by_hand_into_a_superseded_text(
    ws: Workspace,
) -> None:
    _superseded(ws)
    ws.memory("other", "src/a.py#receive", body="Receive is cheap.")
    ws.moor("bind", check=True)
    ws.memory("other", "src/a.py#receive", body=OLD_TEXT)  # rewritten by hand
    assert ws.states("memories/other.md")["memories/other.md"]["code"] == "superseded_text"

    run = ws.moor("reaffirm", "memories/other.md", "--why", "reviewed", "--format", "json")

    assert run.code == 1
    [refusal] = run.json()["refused"]
    assert refusal["code"] == "superseded" and refusal["path"] == "memories/other.md"
    assert OLD in refusal["message"] and NEW in refusal["message"]
    assert "five retries since 2.0" in refusal["message"]
    assert f"moor restore {OLD}" in refusal["message"]
    ws.memory("other", "src/a.py#receive", body="Receive is cheap, mostly.")
    ok = ws.moor("reaffirm", "memories/other.md", "--why", "reviewed")
    assert ok.code == 0, ok.err  # control: another rewrite is reaffirmed


def test_a_paraphrase_is_written_and_told_of_its_retired_siblings_with_why(
    ws: Workspace,
) -> None:
    _superseded(ws)
    ws.memory("gone", "src/a.py#send", body="Send never blocks.")
    ws.moor("bind", check=True)
    ws.moor("forget", "memories/gone.md", "--why", "it blocks on a full queue", check=True)

    run = ws.moor(
        "add",
        "On a timeout, send makes three retries.",  # the old claim, reworded
        "--about",
        "src/a.py#send",
        "--title",
        "Paraphrase",
        "--format",
        "json",
    )

    assert run.code == 0, run.err
    known = {k["path"]: k for k in run.json()["known_here"]}
    assert known[NEW]["state"] == "current" and "retired_because" not in known[NEW]  # control
    assert known[OLD]["state"] == "retired"
    assert NEW in known[OLD]["retired_because"]
    assert "five retries since 2.0" in known[OLD]["retired_because"]
    gone = known["memories/gone.md"]
    assert gone["state"] == "forgotten" and "it blocks on a full queue" in gone["retired_because"]
    assert gone["anchors"] == ["src/a.py#send"]
    # The text output puts them apart from the live ones, each with why.
    text = ws.moor(
        "add", "Send makes three retries when it times out.", "--about", "src/a.py#send"
    ).out
    live, _, retired = text.partition("retired here (bound to the same code, no longer current):")
    assert NEW in live and OLD not in live
    assert OLD in retired and "five retries since 2.0" in retired
    assert "memories/gone.md" in retired and "it blocks on a full queue" in retired
    # Control: a memory about other code is told of none of them.
    other = ws.moor(
        "add", "Receive echoes.", "--about", "src/a.py#receive", "--format", "json"
    ).json()
    assert other["ok"] and other["known_here"] == []


def test_a_search_shows_the_retired_siblings_beside_the_memory_that_answers(
    ws: Workspace,
) -> None:
    _superseded(ws)
    ws.memory("gone", "src/a.py#send", body="Send never blocks on timeouts.")
    ws.memory("echo", "src/a.py#receive", body="Receive echoes timeouts back.")
    ws.moor("bind", check=True)
    ws.moor("forget", "memories/gone.md", "--why", "it blocks on a full queue", check=True)

    run = ws.moor("recall", "send timeout", "--format", "json")

    assert run.code == 0, run.err
    hits = {h["path"]: h for h in run.json()["hits"]}
    assert OLD not in hits  # a retired memory is never a hit
    beside = {k["path"]: k for k in hits[NEW]["retired_here"]}
    assert set(beside) == {OLD, "memories/gone.md"}
    assert "five retries since 2.0" in beside[OLD]["retired_because"]
    assert "it blocks on a full queue" in beside["memories/gone.md"]["retired_because"]
    assert hits["memories/echo.md"]["retired_here"] == []  # control: other code, none
    text = ws.moor("recall", "send timeout").out
    assert f"retired here: {OLD}" in text and "five retries since 2.0" in text


def test_a_hand_written_copy_of_a_superseded_text_is_flagged_and_kept_out_of_recall(
    ws: Workspace,
) -> None:
    _superseded(ws)
    ws.memory("copy", "src/a.py#receive", body="SEND retries three times, on a timeout!")
    ws.memory("honest", "src/a.py#receive", body="Send retries three times on a reset.")

    run = ws.moor("check", "--format", "json")

    assert run.code == 1  # a person must delete it or restore the superseded one
    states = {m["path"]: m for m in run.json()["memories"]}
    copy = states["memories/copy.md"]
    assert copy["state"] == "retired" and copy["code"] == "superseded_text"
    assert OLD in copy["notes"][0] and f"moor restore {OLD}" in copy["notes"][0]
    assert not any("moor bind" in note for note in copy["notes"])
    honest = states["memories/honest.md"]
    assert honest["state"] != "retired" and honest["code"] != "superseded_text"  # control
    recalled = [
        h["path"] for h in ws.moor("recall", "send retries", "--format", "json").json()["hits"]
    ]
    assert "memories/copy.md" not in recalled and "memories/honest.md" in recalled
    (ws.root / "memories/copy.md").unlink()
    ws.moor("bind", check=True)
    assert ws.moor("check").code == 0


def test_the_successor_may_say_what_it_superseded_and_nothing_else_may(ws: Workspace) -> None:
    ws.write("src/a.py", CODE)
    ws.memory("old", "src/a.py#send", body=OLD_TEXT)
    ws.memory("new", "src/a.py#send", body=OLD_TEXT)  # the same words, re-confirmed
    ws.moor("bind", check=True)
    ws.moor("supersede", OLD, "--by", NEW, "--why", "re-read after 2.0", check=True)

    states = ws.states()

    assert states[NEW]["state"] == "current", states[NEW]
    assert states[OLD]["state"] == "retired"
    # Control: a third memory saying it is a return of the retired text.
    ws.memory("third", "src/a.py#receive", body=OLD_TEXT)
    assert ws.states()["memories/third.md"]["code"] == "superseded_text"


def test_remember_in_a_prompt_is_told_of_the_retired_sibling_with_why(ws: Workspace) -> None:
    _superseded(ws)

    told = ws.prompt_hook("remember: src/a.py#send makes three retries on each timeout")

    assert told.startswith("moor: remembered as memories/"), told
    assert f"already known here: {NEW} (new)" in told  # control: the live one, no reason
    retired = next(line for line in told.splitlines() if OLD in line)
    assert " - retired: superseded by " in retired and "five retries since 2.0" in retired
    # The hook refuses the retired text itself, as every write does.
    refused = ws.prompt_hook(f"remember: {OLD_TEXT}")
    assert refused.startswith("moor: not remembered: refused: this text is what"), refused


def test_the_refusal_names_the_successor_that_is_current_now(ws: Workspace) -> None:
    _superseded(ws)
    ws.memory("newest", "src/a.py#send", body="Send retries with backoff, up to a deadline.")
    ws.moor("bind", check=True)
    ws.moor("supersede", NEW, "--by", "memories/newest.md", "--why", "backoff", check=True)

    run = ws.moor("add", OLD_TEXT, "--about", "src/a.py#receive", "--format", "json")

    [refusal] = run.json()["refused"]
    assert refusal["code"] == "superseded" and refusal["path"] == OLD
    # Superseded by new.md, which was superseded in turn: what is true now is newest.md.
    assert "what is true now is in memories/newest.md" in refusal["message"]
    # Control: new.md's own text is refused naming newest.md as its successor too.
    again = ws.moor("add", NEW_TEXT, "--about", "src/a.py#receive", "--format", "json")
    [second] = again.json()["refused"]
    assert second["path"] == NEW and "memories/newest.md" in second["message"]


def test_a_superseded_text_stays_retired_after_its_file_is_deleted(ws: Workspace) -> None:
    _superseded(ws)
    add = ("add", OLD_TEXT, "--about", "src/a.py#receive", "--title", "Again", "--format", "json")
    (ws.root / OLD).unlink()  # the retired file goes; its retirement stays latched
    ws.moor("bind", check=True)

    run = ws.moor(*add)

    assert run.code == 1
    [refusal] = run.json()["refused"]
    _assert_superseded_refusal(refusal)
    assert not (ws.root / "memories/again.md").exists()
    # A copy written by hand is flagged by the check as before the deletion.
    ws.memory("copy", "src/a.py#receive", body="SEND retries three times, on a timeout!")
    states = {m["path"]: m for m in ws.moor("check", "--format", "json").json()["memories"]}
    assert states["memories/copy.md"]["code"] == "superseded_text"
    # Controls: another claim is written, and the successor is current.
    ok = ("add", "Receive never retries.", "--about", "src/a.py#receive", "--title", "Other")
    assert ws.moor(*ok).code == 0
    assert states[NEW]["state"] == "current"


def test_a_declared_supersession_keeps_the_text_retired_after_the_file_is_deleted(
    ws: Workspace,
) -> None:
    ws.write("src/a.py", CODE)
    ws.memory("old", "src/a.py#send", body=OLD_TEXT)
    ws.moor("bind", check=True)
    ws.write(
        NEW,
        "---\nabout:\n  - src/a.py#send\nsupersedes:\n  - memories/old.md\n---\n# new\n\n"
        f"{NEW_TEXT}\n",
    )
    ws.moor("bind", check=True)  # latches what `new` declares, while old.md is there
    (ws.root / OLD).unlink()
    ws.moor("bind", check=True)

    run = ws.moor("add", OLD_TEXT, "--about", "src/a.py#receive", "--title", "Again")

    assert run.code == 1 and "superseded" in run.out + run.err
    assert ws.moor("add", "Receive is cheap.", "--about", "src/a.py#receive").code == 0
