"""A mistake gets a way out, never silence (issue 8, part C), through the real command."""

from __future__ import annotations

from tests.conftest import Workspace

CODE = "class Client:\n    def send(self, payload):\n        return payload\n"


def test_a_missing_symbol_suggests_the_closest_references(ws: Workspace) -> None:
    ws.write("net/client.py", CODE)
    ws.memory("typo", "net/client.py#Client.sned")
    ws.memory("short", "net/client.py#send")
    ws.memory("rust", "net/client.py#Client::send")
    states = ws.states()
    assert states["memories/rust.md"]["state"] == "unbound"  # a pasted spelling resolves
    for memory in ("typo", "short"):
        anchor = states[f"memories/{memory}.md"]["anchors"][0]
        assert anchor["state"] == "gone"
        assert anchor["suggestions"][0] == "net/client.py#Client.send", memory
    run = ws.moor("check")
    assert run.code == 1
    assert "did you mean net/client.py#Client.send?" in run.out
    assert "next: edit memories/typo.md: write net/client.py#Client.send instead" in run.out
    # Control: a name nothing resembles gets no suggestion.
    ws.memory("none", "net/client.py#Zebra.quux")
    assert ws.states()["memories/none.md"]["anchors"][0]["suggestions"] == []


def test_a_missing_path_suggests_the_file_that_has_the_symbol(ws: Workspace) -> None:
    ws.write("net/client.py", CODE)
    ws.memory("path", "net/clinet.py#Client.send")
    ws.memory("case", "Net/Client.py#Client.send")
    states = ws.states()
    for memory in ("path", "case"):
        anchor = states[f"memories/{memory}.md"]["anchors"][0]
        assert anchor["suggestions"] == ["net/client.py#Client.send"], memory
    # Control: a file that does not have the symbol is not suggested for it.
    ws.memory("other", "net/clinet.py#Server.serve")
    assert ws.states()["memories/other.md"]["anchors"][0]["suggestions"] == []


def test_a_misspelt_frontmatter_key_is_invalid_and_names_the_key_meant(ws: Workspace) -> None:
    ws.write("net/client.py", CODE)
    ws.write("memories/abut.md", "---\nabut: net/client.py#Client.send\n---\n# Typo\n")
    ws.write("memories/own.md", "---\nabout: net/client.py#Client.send\nowner: me\n---\n# Own\n")
    run = ws.moor("check")
    assert run.code == 1
    assert "`abut:` is not a key moor reads; did you mean `about:`?" in run.out
    states = ws.states()
    assert states["memories/abut.md"]["state"] == "invalid"
    assert states["memories/abut.md"]["code"] == "misspelt_key"
    # Control: a key of the user's own that resembles nothing is metadata, not a mistake.
    assert states["memories/own.md"]["state"] == "unbound"


def test_a_configured_memory_root_that_does_not_exist_is_an_error_not_no_memories(
    ws: Workspace,
) -> None:
    ws.write("net/client.py", CODE)
    ws.memory("send", "net/client.py#Client.send")
    ws.moor("bind", check=True)
    lock = (ws.root / "moor.lock").read_bytes()
    ws.write("moor.toml", 'memory_roots = ["memoires"]\n')
    for command in (("check",), ("bind",), ("status",)):
        run = ws.moor(*command)
        assert run.code == 2, (command, run.out, run.err)
        assert "'memoires' is not a folder" in run.err
        assert "did you mean 'memories'?" in run.err
    assert (ws.root / "moor.lock").read_bytes() == lock  # bind dropped nothing
    # Control: the default root, not configured, may be absent without an error.
    (ws.root / "moor.toml").write_text("", encoding="utf-8")
    (ws.root / "memories/send.md").unlink()
    (ws.root / "memories").rmdir()
    run = ws.moor("check")
    assert run.code == 0 and "no memories found" in run.out


def test_re_pointing_a_reference_by_hand_is_journalled_as_a_re_point(ws: Workspace) -> None:
    ws.write("net/client.py", CODE + "\n\ndef helper():\n    return 1\n")
    ws.memory("send", "net/client.py#Client.send")
    ws.moor("bind", check=True)
    ws.memory("send", "net/client.py#helper")
    ws.moor("bind", check=True)
    log = ws.moor("log", "memories/send.md", check=True).out
    assert "repoint  net/client.py#helper  (re-pointed by hand: net/client.py#Client.send ->" in log
    assert "open  bind  net/client.py#Client.send" in log  # the old reference's history stays
    # Control: adding a second reference is no re-point.
    ws.memory("send", ["net/client.py#helper", "net/client.py#Client.send"])
    ws.moor("bind", check=True)
    assert ws.moor("log", "memories/send.md", check=True).out.count("repoint") == 1


def test_removing_a_reference_that_was_never_bound_needs_no_reaffirmation(ws: Workspace) -> None:
    ws.write("net/client.py", CODE)
    ws.memory("send", ["net/client.py#Client.send", "net/client.py#Client.recv"])
    assert ws.moor("bind").code == 1  # recv does not exist: refused, send is bound
    ws.memory("send", "net/client.py#Client.send")
    assert ws.state("memories/send.md") == "current"
    # Adding one not bound yet is unbound, not a rewrite; binding it makes it current.
    ws.write("net/client.py", CODE + "\n    def recv(self):\n        return None\n")
    ws.memory("send", ["net/client.py#Client.send", "net/client.py#Client.recv"])
    assert ws.state("memories/send.md") == "unbound"
    ws.moor("bind", check=True)
    assert ws.state("memories/send.md") == "current"
    # Control: removing a bound reference is a change of what the memory is about.
    ws.memory("send", "net/client.py#Client.send")
    assert ws.state("memories/send.md") == "rewritten"
    # … and so is an edit of the text itself.
    ws.moor("bind", check=True)
    ws.memory("send", "net/client.py#Client.send", body="Another decision.")
    assert ws.state("memories/send.md") == "rewritten"


def test_a_full_bind_keeps_lock_entries_of_memory_files_still_on_disk(ws: Workspace) -> None:
    ws.write("app.py", "def f(x):\n    return x + 1\n")
    ws.memory("kept", "app.py#f")
    ws.memory("removed", "app.py#f")
    ws.moor("bind", check=True)
    (ws.root / "memories/removed.md").unlink()
    (ws.root / "docs").mkdir()
    ws.write("moor.toml", 'memory_roots = ["docs"]\n')  # a mistake: the memories are elsewhere
    run = ws.moor("bind")
    assert "memories/kept.md is in moor.lock but not a memory under memory_roots" in run.err
    lock = ws.read("moor.lock")
    assert "memories/kept.md" in lock
    assert "memories/removed.md" not in lock  # control: a file that is gone is dropped
