"""Trust of the lockfile's derivation (issue 9.7): an older normaliser's lock is translated
through the bound code, so drift since binding stays drift; a newer or unknown derivation is
reported and never swallows drift."""

from __future__ import annotations

import re
import shutil

from tests.conftest import Workspace

CLIENT = '''
class Client:
    def send(self, payload):
        """Send one payload."""
        for attempt in range(3):
            if self.transport.put(payload):
                return True
        return False
'''
CLIENT_CHANGED = CLIENT.replace("range(3)", "range(5)")
MEMORY = "memories/retry.md"


def _bound(ws: Workspace) -> None:
    ws.write("src/net/client.py", CLIENT)
    ws.memory("retry", "src/net/client.py#Client.send")
    ws.moor("bind", check=True)


def _as_derivation(ws: Workspace, norm: str) -> None:
    """The lock as a moor with another normaliser wrote it: same address, other digests."""
    lock = ws.read("moor.lock")
    lock = re.sub(r"norm/\d+", norm, lock)
    lock = re.sub(r'body = "[0-9a-f]+"', 'body = "' + "1" * 32 + '"', lock)
    ws.write("moor.lock", lock)


def test_an_upgrade_rebaselines_unchanged_code_and_keeps_drift_since_binding(
    ws: Workspace,
) -> None:
    _bound(ws)
    _as_derivation(ws, "norm/0")
    unchanged = shutil.copytree(ws.root, ws.root.parent / "unchanged")
    ws.write("src/net/client.py", CLIENT_CHANGED)  # changed since binding, before the upgrade
    drifted = ws.anchor(MEMORY)
    assert (drifted["state"], drifted["axes"]) == ("drifted", ["body"])
    assert "norm/0" not in ws.read("moor.lock")  # re-baselined to the bound code, translated
    assert ws.state(MEMORY) == "drifted"  # and still drifted on the next run
    assert "reprobe" in ws.moor("log", MEMORY).out
    # Control: the same upgrade over unchanged code is current, silently re-baselined.
    other = Workspace(unchanged)
    run = other.moor("check")
    assert run.code == 0 and "re-baselined 1" in run.out
    assert other.state(MEMORY) == "current"


def test_a_fresh_clone_translates_through_the_commit_that_bound_the_code(ws: Workspace) -> None:
    _bound(ws)
    _as_derivation(ws, "norm/0")
    ws.git("init", "-q")
    ws.git("add", "-A", ".")
    ws.git("commit", "-qm", "bound by an older moor")
    shutil.rmtree(ws.root / ".moor")  # a fresh clone: no journal, no sealed snapshot
    clean = shutil.copytree(ws.root, ws.root.parent / "clean")
    ws.write("src/net/client.py", CLIENT_CHANGED)
    anchor = ws.anchor(MEMORY)
    assert (anchor["state"], anchor["axes"]) == ("drifted", ["body"])
    assert Workspace(clean).state(MEMORY) == "current"  # control: unchanged code


def test_an_upgrade_whose_bound_code_is_lost_is_unverified_until_reaffirmed(
    ws: Workspace,
) -> None:
    _bound(ws)
    _as_derivation(ws, "norm/0")
    shutil.rmtree(ws.root / ".moor")  # no journal and no git: nothing to translate through
    anchor = ws.anchor(MEMORY)
    assert (anchor["state"], anchor["code"]) == ("unverified", "older_derivation_unverifiable")
    assert "norm/0" in ws.read("moor.lock")  # nothing was re-baselined
    assert ws.moor("check").code == 1
    ws.moor("reaffirm", MEMORY, "--why", "read it after the upgrade", check=True)
    assert ws.state(MEMORY) == "current"


def test_a_lock_from_a_newer_moor_or_an_unknown_derivation_is_never_rebaselined(
    ws: Workspace,
) -> None:
    _bound(ws)
    original = ws.read("moor.lock")
    for derivation, code in (("norm/99", "lock_from_newer_moor"), ("zzz/1", "unknown_derivation")):
        lock = re.sub(
            r"symbol/\d+ norm/\d+ python", f"symbol/1 {derivation} python", ws.read("moor.lock")
        )
        if derivation == "zzz/1":
            lock = re.sub(r"symbol/1 zzz/1 python", "probe-zzz python", lock)
        ws.write("moor.lock", lock)
        anchor = ws.anchor(MEMORY)
        assert (anchor["state"], anchor["code"]) == ("unverified", code), anchor
        assert ws.read("moor.lock") == lock  # left exactly as it is
        assert ws.moor("check").code == 1
        refused = ws.moor("reaffirm", MEMORY, "--why", "x")
        assert refused.code == 1  # only upgrading moor helps
    ws.write("moor.lock", original)  # control: this moor's own derivation compares as usual
    assert ws.state(MEMORY) == "current"


def test_a_move_across_an_upgrade_keeps_its_drift_through_the_follow(ws: Workspace) -> None:
    _bound(ws)
    _as_derivation(ws, "norm/0")
    clean = Workspace(shutil.copytree(ws.root, ws.root.parent / "clean"))
    (ws.root / "src/net/client.py").unlink()
    ws.write(
        "src/net/transport.py", CLIENT.replace("(self, payload)", "(self, payload, timeout=3)")
    )
    moved = ws.anchor(MEMORY)
    assert (moved["state"], moved["axes"]) == ("moved", ["signature"])
    ws.moor("follow", MEMORY, check=True)
    followed = ws.anchor(MEMORY)
    assert (followed["state"], followed["axes"]) == ("drifted", ["signature"])
    # Control: the same move without the signature change follows to current.
    (clean.root / "src/net/client.py").unlink()
    clean.write("src/net/transport.py", CLIENT)
    assert clean.anchor(MEMORY)["axes"] == []
    clean.moor("follow", MEMORY, check=True)
    assert clean.state(MEMORY) == "current"


def test_an_upgrade_translates_a_lock_entry_written_by_a_merge_for_code_moved_since(
    ws: Workspace,
) -> None:
    """The address came in with a merge commit (bound while merging) and the file moved
    afterwards (followed): git history still holds the bound code (issue 23)."""
    ws.git("init", "-q", "-b", "main")
    ws.write(".gitignore", ".moor/\n")
    ws.write("README.md", "x\n")
    ws.git("add", "-A")
    ws.git("commit", "-qm", "start")
    ws.git("checkout", "-qb", "side")
    ws.write("src/net/client.py", CLIENT)
    ws.git("add", "-A")
    ws.git("commit", "-qm", "client")
    ws.git("checkout", "-q", "main")
    ws.write("README.md", "y\n")
    ws.git("commit", "-qam", "readme")
    ws.git("merge", "-q", "--no-ff", "--no-commit", "side")
    ws.memory("retry", "src/net/client.py#Client.send")
    ws.moor("bind", check=True)  # bound while merging: the merge commit writes the address
    ws.git("add", "-A")
    ws.git("commit", "-qm", "merge side, bound")
    ws.git("mv", "src/net/client.py", "src/client.py")
    ws.moor("follow", MEMORY, check=True)
    assert "src/client.py#Client.send" in ws.read("moor.lock")
    _as_derivation(ws, "norm/0")
    ws.git("add", "-A")
    ws.git("commit", "-qm", "moved, followed; an older moor's lock")
    shutil.rmtree(ws.root / ".moor")  # a fresh clone: only git holds the bound code
    clean = shutil.copytree(ws.root, ws.root.parent / "clean")
    assert Workspace(clean).state(MEMORY) == "current"
    # Control: a change since binding is still drift through the same translation.
    ws.write("src/client.py", CLIENT_CHANGED)
    anchor = ws.anchor(MEMORY)
    assert (anchor["state"], anchor["axes"]) == ("drifted", ["body"])


def _as_older_normaliser(ws: Workspace) -> None:
    """The lock as an older normaliser really wrote it: its address too is one today's
    normaliser never computes for any code."""
    _as_derivation(ws, "norm/0")
    ws.write(
        "moor.lock",
        re.sub(r'address = "[0-9a-f]+"', f'address = "{"2" * 32}"', ws.read("moor.lock")),
    )


def test_a_rename_with_a_one_line_change_across_an_upgrade_is_still_offered_and_diffed(
    ws: Workspace,
) -> None:
    """A fresh clone recovers the bound code from the commit that wrote its (old) address,
    though today's normaliser gives that code another address (issue 23)."""
    _bound(ws)
    ws.git("init", "-q")
    renamed = CLIENT_CHANGED.replace("def send(", "def sent(")
    # Control: bound by this very moor, the renamed and edited code is the candidate.
    same = Workspace(ws.root.parent / "same")
    shutil.copytree(ws.root, same.root)
    for each, make_old in ((same, False), (ws, True)):
        if make_old:
            _as_older_normaliser(each)
        each.git("add", "-A", ".")
        each.git("commit", "-qm", "bound")
        shutil.rmtree(each.root / ".moor")  # a fresh clone: the bound code is only in git
        each.write("src/net/client.py", renamed)
        anchor = each.anchor(MEMORY)
        assert anchor["state"] == "gone"
        assert [c["ref"] for c in anchor["candidates"]] == ["src/net/client.py#Client.sent"], (
            make_old,
            anchor,
        )
        diff = each.moor("diff", MEMORY).out
        assert "-    for attempt in range(3):" in diff, (make_old, diff)
