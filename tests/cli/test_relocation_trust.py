"""Relocation never hides a change and never points at the wrong code (issue 8, part A),
through the real `moor` command on real temporary workspaces."""

from __future__ import annotations

from tests.conftest import Workspace

SEND = """
def send(payload, retries=3):
    attempt = 0
    while attempt <= retries:
        if transport.post(payload, key=payload.idempotency_key):
            return True
        attempt += 1
    return False
"""


def test_a_rename_with_a_changed_default_is_moved_with_its_signature_and_drifted_after_follow(
    ws: Workspace,
) -> None:
    ws.write("net/client.py", SEND)
    ws.memory("retry", "net/client.py#send")
    ws.moor("bind", check=True)
    ws.write(
        "net/client.py",
        SEND.replace("def send(payload, retries=3)", "def send_payload(payload, retries=0)"),
    )
    anchor = ws.anchor("memories/retry.md")
    assert (anchor["state"], anchor["moved_to"]) == ("moved", "net/client.py#send_payload")
    assert anchor["axes"] == ["signature"]
    ws.moor("follow", "memories/retry.md", check=True)
    assert "net/client.py#send_payload" in ws.read("memories/retry.md")
    followed = ws.anchor("memories/retry.md")
    assert (followed["state"], followed["axes"]) == ("drifted", ["signature"])
    assert ws.moor("check").code == 1
    ws.moor("reaffirm", "memories/retry.md", "--why", "no retries by default now", check=True)
    assert ws.state("memories/retry.md") == "current"


def test_a_rename_alone_is_moved_with_no_axes_and_current_after_follow(ws: Workspace) -> None:
    ws.write("net/client.py", SEND)
    ws.memory("retry", "net/client.py#send")
    ws.moor("bind", check=True)
    ws.write("net/client.py", SEND.replace("def send(", "def send_payload("))
    anchor = ws.anchor("memories/retry.md")
    assert (anchor["state"], anchor["axes"]) == ("moved", [])
    ws.moor("follow", "memories/retry.md", check=True)
    assert ws.state("memories/retry.md") == "current"
    # Control: the followed anchor is observed — a changed body drifts it.
    ws.write("net/client.py", SEND.replace("def send(", "def send_payload(").replace("1", "2"))
    assert ws.state("memories/retry.md") == "drifted"


STORE = """
from pathlib import Path


class Store:
    def __init__(self, path: str) -> None:
        self.path = path
        self.rows = {}

    def load(self):
        with open(self.path) as handle:
            for line in handle:
                key, _, value = line.partition("=")
                self.rows[key.strip()] = value.strip()
        return self.rows
"""


def test_a_class_renamed_with_its_file_and_a_changed_parameter_type_is_never_current(
    ws: Workspace,
) -> None:
    ws.write("app/store.py", STORE)
    ws.memory("store", "app/store.py#Store")
    ws.moor("bind", check=True)
    (ws.root / "app/store.py").unlink()
    ws.write(
        "app/repository.py",
        STORE.replace("class Store", "class Repository").replace("path: str", "path: Path"),
    )
    anchor = ws.anchor("memories/store.md")
    # Its body changed, so no exact evidence: gone, with the right place ranked first.
    assert anchor["state"] == "gone"
    candidates = anchor["candidates"]
    assert isinstance(candidates, list) and candidates
    assert candidates[0]["ref"] == "app/repository.py#Repository"
    assert 0.9 <= candidates[0]["similarity"] < 1.0
    assert "perhaps now app/repository.py#Repository" in str(anchor["detail"])
    # `follow` alone never takes a candidate; `--to` does, keeping what was bound.
    before = ws.read("memories/store.md")
    run = ws.moor("follow", "memories/store.md")
    assert run.code == 0 and "--to app/repository.py#Repository" in run.out
    assert ws.read("memories/store.md") == before
    ws.moor("follow", "memories/store.md", "--to", "app/repository.py#Repository", check=True)
    followed = ws.anchor("memories/store.md")
    assert (followed["state"], followed["axes"]) == ("drifted", ["body"])
    # Control: the same rename with the file and nothing else changed is moved, no axes.
    ws.write("lib/store.py", STORE)
    ws.memory("store2", "lib/store.py#Store")
    ws.moor("bind", "memories/store2.md", check=True)
    (ws.root / "lib/store.py").unlink()
    ws.write("lib/repository.py", STORE.replace("class Store", "class Repository"))
    anchor = ws.anchor("memories/store2.md")
    assert (anchor["state"], anchor["moved_to"], anchor["axes"]) == (
        "moved",
        "lib/repository.py#Repository",
        [],
    )


BODY = "    total = 0\n    for row in rows:\n"
BODY += "        total += row.amount * row.rate\n    return total\n"


def test_the_same_name_in_another_file_wins_over_the_same_body_under_another_name(
    ws: Workspace,
) -> None:
    ws.write("a.py", f"def subtotal(rows):\n{BODY}\n\ndef other(rows):\n{BODY}")
    ws.memory("sub", "a.py#subtotal")
    ws.moor("bind", check=True)
    ws.write("a.py", f"def other(rows):\n{BODY}")
    ws.write("b.py", f"def subtotal(rows):\n{BODY}")
    anchor = ws.anchor("memories/sub.md")
    assert (anchor["state"], anchor["moved_to"]) == ("moved", "b.py#subtotal")
    # Control: without the same name elsewhere, the same body under another name is taken.
    (ws.root / "b.py").unlink()
    anchor = ws.anchor("memories/sub.md")
    assert (anchor["state"], anchor["moved_to"], anchor["code"]) == (
        "moved",
        "a.py#other",
        "renamed",
    )


def test_bodies_without_evidence_never_establish_a_rename(ws: Workspace) -> None:
    ws.write("p/hooks.py", "def on_start():\n    return 2\n\n\ndef on_stop():\n    return 2\n")
    ws.write("p/vars.go", "package p\n\nvar first int\n\nvar second int\n")
    ws.memory("start", "p/hooks.py#on_start")
    ws.memory("first", "p/vars.go#first")
    ws.moor("bind", check=True)
    ws.write("p/hooks.py", "def on_stop():\n    return 2\n")
    ws.write("p/vars.go", "package p\n\nvar second int\n")
    assert ws.anchor("memories/start.md")["state"] == "gone"
    assert ws.anchor("memories/first.md")["state"] == "gone"
    # Control: a Go declaration whose initialiser says something is evidence.
    ws.write(
        "p/table.go", 'package p\n\nvar table = map[string]int{"a": 1, "b": 2, "c": 3, "d": 4}\n'
    )
    ws.memory("table", "p/table.go#table")
    ws.moor("bind", "memories/table.md", check=True)
    ws.write("p/table.go", ws.read("p/table.go").replace("var table", "var lookup"))
    assert ws.anchor("memories/table.md")["moved_to"] == "p/table.go#lookup"


def test_a_target_whose_name_is_ambiguous_relocates_nothing_and_is_listed(ws: Workspace) -> None:
    ws.write("a.py", f"def subtotal(rows):\n{BODY}")
    ws.memory("sub", "a.py#subtotal")
    ws.moor("bind", check=True)
    (ws.root / "a.py").unlink()
    # Two definitions that can both run, in different blocks: which one is meant depends.
    ws.write(
        "b.py",
        f"def subtotal(rows):\n{BODY}\n\nif FAST:\n    def subtotal(rows, rate):\n"
        "        return rate\n",
    )
    anchor = ws.anchor("memories/sub.md")
    assert anchor["state"] == "gone"
    assert [c["ref"] for c in anchor["candidates"]] == ["b.py#subtotal"]
    assert "cannot be observed" in str(anchor["detail"])
    # Control: defined once there, it is moved there.
    ws.write("b.py", f"def subtotal(rows):\n{BODY}")
    assert ws.anchor("memories/sub.md")["moved_to"] == "b.py#subtotal"


def test_two_equally_good_targets_relocate_nothing_and_both_are_listed(ws: Workspace) -> None:
    ws.write("a.py", f"def subtotal(rows):\n{BODY}")
    ws.memory("sub", "a.py#subtotal")
    ws.moor("bind", check=True)
    (ws.root / "a.py").unlink()
    ws.write("b.py", f"def subtotal(rows):\n{BODY}")
    ws.write("c.py", f"def subtotal(rows):\n{BODY}")
    anchor = ws.anchor("memories/sub.md")
    assert anchor["state"] == "gone"
    assert [c["ref"] for c in anchor["candidates"]] == ["b.py#subtotal", "c.py#subtotal"]
    # Control: with one of them left, it is moved to that one.
    (ws.root / "c.py").unlink()
    assert ws.anchor("memories/sub.md")["moved_to"] == "b.py#subtotal"


def test_a_refused_follow_leaves_the_memory_and_the_lock_byte_identical(ws: Workspace) -> None:
    ws.write("a.py", f"def subtotal(rows):\n{BODY}")
    ws.memory("sub", "a.py#subtotal")
    ws.moor("bind", check=True)
    ws.write("a.py", f"def total(rows, rate):\n{BODY.replace('total', 'sum_')}")
    ws.write("dup.py", "def f():\n    return 1\n\n\nif FAST:\n    def f():\n        return 2\n")
    memory, lock = (ws.root / "memories/sub.md").read_bytes(), (ws.root / "moor.lock").read_bytes()
    for target in ("a.py#missing", "dup.py#f", "../outside.py#f", "nowhere.py#f"):
        run = ws.moor("follow", "memories/sub.md", "--to", target)
        assert run.code == 1, (target, run.out, run.err)
        assert "nothing was changed" in run.err or target.startswith("..")
        assert (ws.root / "memories/sub.md").read_bytes() == memory
        assert (ws.root / "moor.lock").read_bytes() == lock
    # Control: an observable target is followed, and what changed shows as drift.
    ws.moor(
        "follow", "memories/sub.md", "--to", "a.py#total", "--why", "renamed by hand", check=True
    )
    assert (ws.root / "memories/sub.md").read_bytes() != memory
    assert ws.anchor("memories/sub.md")["state"] == "drifted"


TS_STORE = """
export class Store {
  private _cache: Map<string, string> = new Map();

  _load(key: string): string | undefined {
    if (!this._cache.has(key)) {
      const value = readFileSync(join(this.root, key), "utf8");
      this._cache.set(key, value.trim());
    }
    return this._cache.get(key);
  }
}
"""


def test_a_rename_that_touched_the_body_is_gone_with_ranked_candidates_and_a_lineage(
    ws: Workspace,
) -> None:
    ws.write("src/store.ts", TS_STORE)
    ws.memory("load", "src/store.ts#Store._load")
    ws.moor("bind", check=True)
    ws.moor("check")
    ws.write("src/store.ts", TS_STORE.replace("_load", "#load").replace("._cache", ".#cache"))
    anchor = ws.anchor("memories/load.md")
    assert anchor["state"] == "gone"
    assert anchor["candidates"][0]["ref"] == "src/store.ts#Store.#load"
    run = ws.moor("check")
    assert run.code == 1
    assert "perhaps now src/store.ts#Store.#load" in run.out
    assert "next: moor follow memories/load.md --from src/store.ts#Store._load" in run.out
    ws.moor(
        "follow",
        "memories/load.md",
        "--to",
        "src/store.ts#Store.#load",
        "--why",
        "private",
        check=True,
    )
    assert ws.anchor("memories/load.md")["state"] == "drifted"
    log = ws.moor("log", "memories/load.md", check=True).out
    # The old reference's history, the follow with from -> to and why, the new one's.
    assert "open  bind  src/store.ts#Store._load" in log
    assert "transition  gone  src/store.ts#Store._load" in log
    assert "follow  src/store.ts#Store.#load  (chosen: src/store.ts#Store._load -> " in log
    assert "— private" in log


def test_reaffirm_refuses_a_moved_memory_as_the_editor_does(ws: Workspace) -> None:
    ws.write("g.py", "class RenderGroup:\n    def render(self):\n        return 1\n")
    ws.memory("group", "g.py#RenderGroup")
    ws.moor("bind", check=True)
    ws.write(
        "g.py", "class Group:\n    def render(self):\n        return 1\n\n\nRenderGroup = Group\n"
    )
    assert ws.anchor("memories/group.md")["state"] == "moved"
    run = ws.moor("reaffirm", "memories/group.md", "--why", "still holds")
    assert run.code == 1 and "moved" in run.err
    # Control: after following, it can be reaffirmed.
    ws.moor("follow", "memories/group.md", check=True)
    ws.moor("reaffirm", "memories/group.md", "--why", "still holds", check=True)
    assert ws.state("memories/group.md") == "current"


IMPLS = """
impl Header for SectionHeader32 {
    fn s_nreloc(&self) -> u32 {
        self.n.get()
    }
    fn width(&self) -> u8 {
        32
    }
}

impl Header for SectionHeader64 {
    fn s_nreloc(&self) -> u32 {
        self.n.get()
    }
    fn width(&self) -> u8 {
        64
    }
}
"""


def test_a_short_method_deleted_from_an_impl_of_a_foreign_type_is_not_renamed_onto_its_twin(
    ws: Workspace,
) -> None:
    ws.write("src/section.rs", IMPLS)
    ws.memory("nreloc", "src/section.rs#SectionHeader64.s_nreloc")
    ws.moor("bind", check=True)
    first, second = IMPLS.split("\n\n")
    kept = second.replace("    fn s_nreloc(&self) -> u32 {\n        self.n.get()\n    }\n", "")
    ws.write("src/section.rs", first + "\n\n" + kept)
    anchor = ws.anchor("memories/nreloc.md")
    assert anchor["state"] == "gone", anchor
    # Control: the impl renamed around its methods (nothing left of the old one) is a move.
    ws.write("src/section.rs", second.replace("SectionHeader64", "SectionHeaderWide"))
    anchor = ws.anchor("memories/nreloc.md")
    assert anchor["state"] == "moved"
    assert anchor["moved_to"] == "src/section.rs#SectionHeaderWide.s_nreloc"


def test_a_tie_between_candidates_asks_the_person_to_choose(ws: Workspace) -> None:
    twin = (
        "def {name}(rows):\n    total = 0\n    for row in rows:\n"
        "        total += row.{field} * {factor}\n    return total\n\n\n"
    )
    ws.write("a.py", twin.format(name="by_amount", field="amount", factor=2))
    ws.memory("amount", "a.py#by_amount")
    ws.moor("bind", check=True)
    ws.write(
        "a.py",
        twin.format(name="by_price", field="price", factor=2)
        + twin.format(name="by_rate", field="rate", factor=2),
    )
    anchor = ws.anchor("memories/amount.md")
    assert anchor["state"] == "gone"
    first, second = anchor["candidates"][:2]
    assert abs(first["similarity"] - second["similarity"]) <= 0.03
    assert "no clear best" in ws.moor("check").out
    # Control: with one candidate clearly ahead, the next command names it.
    ws.write("a.py", twin.format(name="by_price", field="amount", factor=3))
    run = ws.moor("check")
    assert "no clear best" not in run.out
    assert "--to a.py#by_price" in run.out
