"""A TypeScript type's members are the properties of its own shape, through the real `moor`
command: `moor symbols` lists `Settings.a` and `Settings.a.b` for
`type Settings = Base & { a: { b: string } }` and nothing of the object type inside
`Promise<{ … }>`; a memory bound to a nested member stays current when a sibling changes and
drifts when its own type does (the real-history trial had found `L.b` listed for
`type L = Promise<{ a: { b: string } }>` and `I.b` without `I.a`)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Workspace

SHAPES_TS = """\
export type Loaded = Promise<{ a: { b: string } }>

export type Settings = Base & {
  a: { b: string }
  c: number
}

export type Action =
  | { kind: "add"; amount: number }
  | { kind: "reset" }

export interface Options {
  later: Promise<{ hidden: string }>
  nested: { inner: { deep: string } } | null
}

export function take(options: { param: string }): void {}
"""


def test_moor_symbols_lists_a_types_own_members_under_what_holds_them(ws: Workspace) -> None:
    ws.write("src/shapes.ts", SHAPES_TS)
    listed = ws.moor("symbols", "src/shapes.ts", check=True).out.splitlines()
    assert [line.removeprefix("src/shapes.ts#") for line in listed] == [
        "Loaded",
        "Settings",
        "Settings.a",
        "Settings.a.b",
        "Settings.c",
        "Action",
        "Action.kind@1",  # namesakes are listed together, as overloads are
        "Action.kind@2",
        "Action.amount",
        "Options",
        "Options.later",
        "Options.nested",
        "Options.nested.inner",
        "Options.nested.inner.deep",
        "take",
    ]


def test_a_property_inside_a_generic_argument_cannot_be_bound_to_the_alias(ws: Workspace) -> None:
    ws.write("src/shapes.ts", SHAPES_TS)
    ws.memory("wrong", ["src/shapes.ts#Loaded.b"])
    run = ws.moor("bind")
    assert run.code == 1, run.out
    assert "src/shapes.ts#Loaded.b: it does not exist" in run.err
    # Positive control: the same property in the alias's own shape binds.
    ws.memory("wrong", ["src/shapes.ts#Settings.a.b"])
    assert ws.moor("bind").code == 0


def test_a_nested_member_is_its_own_anchor_through_bind_and_check(ws: Workspace) -> None:
    ws.write("src/shapes.ts", SHAPES_TS)
    ws.memory("nested", ["src/shapes.ts#Settings.a.b", "src/shapes.ts#Options.nested.inner.deep"])
    assert ws.moor("bind").code == 0, ws.moor("check").out
    assert ws.state("memories/nested.md") == "current"
    sibling = SHAPES_TS.replace("c: number", "c: bigint")
    ws.write("src/shapes.ts", sibling)
    assert ws.state("memories/nested.md") == "current"  # a sibling's edit is not its drift
    ws.write("src/shapes.ts", sibling.replace("a: { b: string }", "a: { b: number }"))
    states = [anchor["state"] for anchor in ws.states()["memories/nested.md"]["anchors"]]
    assert states == ["drifted", "current"]
    ws.write("src/shapes.ts", sibling.replace("deep: string", "deep: number"))
    states = [anchor["state"] for anchor in ws.states()["memories/nested.md"]["anchors"]]
    assert states == ["current", "drifted"]


# What moor wrote into moor.lock for these aliases before their own members were listed
# (commit b0bf307), every axis watched: their facts do not move.
OLD_ABOUT = [
    "src/shapes.ts#Loaded",
    "src/shapes.ts#Settings",
    "src/shapes.ts#Action",
    "src/shapes.ts#Options",
    "src/shapes.ts#Options.nested",
    "src/shapes.ts#take",
]
EVERY_AXIS = ["kind", "signature", "decorators", "body", "doc", "place"]
OLD_LOCK = Path(__file__).with_name("members_of_a_types_own_shape_old.lock")


def test_a_lock_bound_before_stays_current(ws: Workspace) -> None:
    ws.write("src/shapes.ts", SHAPES_TS)
    ws.memory("before", OLD_ABOUT, watch=EVERY_AXIS)
    ws.write("moor.lock", OLD_LOCK.read_text(encoding="utf-8"))
    run = ws.moor("check")
    assert run.code == 0, run.out
    assert "re-baselined" not in run.out
    assert ws.read("moor.lock") == OLD_LOCK.read_text(encoding="utf-8")
    # Positive control: the same lock does see a change to one of those anchors.
    ws.write("src/shapes.ts", SHAPES_TS.replace("c: number", "c: bigint"))
    anchors = ws.states()["memories/before.md"]["anchors"]
    assert [a["state"] for a in anchors] == ["current", "drifted", *["current"] * 4]


METHODS_TS = """\
export type Pending = Promise<{ settle(): void; label: string }>

export type Handlers = {
  onLoad(): void
  onError(reason: string): void
}

export interface Api {
  fetch(url: string): Promise<{ json(): unknown }>
}

export function take(options: { run(): void }): void {}
"""


def test_a_method_signature_follows_the_rule_properties_follow(ws: Workspace) -> None:
    """A method signature in a generic argument or a parameter's object type is no one's
    member, as a property there is not; one in a type's own shape is."""
    ws.write("src/methods.ts", METHODS_TS)
    listed = ws.moor("symbols", "src/methods.ts", check=True).out.splitlines()
    assert [line.removeprefix("src/methods.ts#") for line in listed] == [
        "Pending",
        "Handlers",
        "Handlers.onLoad",
        "Handlers.onError",
        "Api",
        "Api.fetch",
        "take",
    ]
    ws.memory("wrong", ["src/methods.ts#Pending.settle"])
    run = ws.moor("bind")
    assert run.code == 1, run.out
    assert "cannot bind src/methods.ts#Pending.settle: no_longer_listed" in run.err
    assert run.err.rstrip().endswith("name the definition that holds it: src/methods.ts#Pending")
    # Positive control: a method of the alias's own shape binds, and is its own anchor.
    ws.memory("wrong", ["src/methods.ts#Handlers.onError"])
    assert ws.moor("bind").code == 0
    ws.write("src/methods.ts", METHODS_TS.replace("onLoad(): void", "onLoad(): boolean"))
    assert ws.state("memories/wrong.md") == "current"
    ws.write("src/methods.ts", METHODS_TS.replace("reason: string", "reason: Error"))
    assert ws.state("memories/wrong.md") == "drifted"


def test_a_lock_bound_to_such_a_method_is_told_why_and_never_called_gone(
    ws: Workspace,
) -> None:
    """moor.lock as the previous moor wrote it for `Pending.settle`, which it listed."""
    ws.write("src/methods.ts", METHODS_TS)
    ws.memory("before", ["src/methods.ts#Pending.settle"])
    ws.write(
        "moor.lock", Path(__file__).with_name("method_in_a_generic_argument_old.lock").read_text()
    )
    anchor = ws.anchor("memories/before.md")
    assert (anchor["state"], anchor["code"]) == ("unverified", "no_longer_listed")
    assert str(anchor["detail"]).endswith(
        "name the definition that holds it: src/methods.ts#Pending"
    )
    # Positive control: a name that was never there is gone, as before.
    ws.memory("before", ["src/methods.ts#Pending.never"])
    anchor = ws.anchor("memories/before.md")
    assert (anchor["state"], anchor["code"]) == ("gone", "not_found")


MAPPED_TS = """\
export type Optional<T> = { [K in keyof T]?: T[K] }

export type Frozen<T> = { readonly [K in keyof T]: T[K] } & { frozenAt: number }
"""


def test_a_mapped_type_is_referenceable_as_its_alias_and_lists_no_members(
    ws: Workspace,
) -> None:
    """A mapped type's keys exist only once a type argument is given: no member of it is
    written in the source, so only the alias (and an own object branch's property) is."""
    ws.write("src/mapped.ts", MAPPED_TS)
    listed = ws.moor("symbols", "src/mapped.ts", check=True).out.splitlines()
    assert [line.removeprefix("src/mapped.ts#") for line in listed] == [
        "Optional",
        "Frozen",
        "Frozen.frozenAt",
    ]
    ws.memory("mapped", ["src/mapped.ts#Optional", "src/mapped.ts#Frozen.frozenAt"])
    assert ws.moor("bind").code == 0
    # The mapping is the alias's body: dropping the `?` modifier drifts it, not the sibling.
    ws.write("src/mapped.ts", MAPPED_TS.replace("]?: T[K] }", "]-?: T[K] }"))
    states = [anchor["state"] for anchor in ws.states()["memories/mapped.md"]["anchors"]]
    assert states == ["drifted", "current"]
