"""A TypeScript type's members are the properties of the object types that are its own
shape: the alias's value, or a branch of it (union, intersection, conditional, parentheses),
and, a level down, a listed property's type or a branch of it — each named under what holds
it (`Settings.a.b`). An object type inside a generic argument, an array, a function's
parameter or any other type is not the alias's shape: `type L = Promise<{ a: { b: string } }>`
had listed `L.b`, and `type I = Base & { a: { b: string } }` had listed `I.b` and no `I.a`
(found by the real-history trial)."""

from __future__ import annotations

from tests.extractors.test_members import moved
from tests.extractors.test_resolve import listed

SHAPES_TS = """\
export type Loaded = Promise<{ a: { b: string } }>

export type Settings = Base & {
  a: { b: string }
  c: number
}

export type Action =
  | { kind: "add"; amount: number }
  | { kind: "reset" }

export type Picked<S> = S extends string ? ({ text: S }) : never

export interface Options {
  later: Promise<{ hidden: string }>
  list: { item: string }[]
  nested: { inner: { deep: string; [key: string]: string } } | null
}

export function take(options: { param: { value: string } }): void {}
"""


def symbols(source: str) -> list[str]:
    return [symbol for symbol, _ in listed("typescript", source)]


def test_only_the_object_types_that_are_a_types_own_shape_give_it_members() -> None:
    assert symbols(SHAPES_TS) == [
        "Loaded",  # a generic argument's object type is Promise's, not the alias's
        "Settings",
        "Settings.a",
        "Settings.a.b",
        "Settings.c",
        "Action",
        "Action.kind@1",  # namesakes are listed together, as overloads are
        "Action.kind@2",
        "Action.amount",
        "Picked",
        "Picked.text",
        "Options",
        "Options.later",
        "Options.list",  # an array's element type is not the property's shape
        "Options.nested",
        "Options.nested.inner",
        "Options.nested.inner.deep",
        "Options.nested.inner.[string]",
        "take",  # a parameter's object type is not a reader's definition
    ]


def test_a_nested_members_own_edit_drifts_it_and_a_siblings_does_not() -> None:
    own = SHAPES_TS.replace("a: { b: string }\n  c", "a: { b: number }\n  c")
    sibling = SHAPES_TS.replace("c: number", "c: bigint")
    assert moved("typescript", SHAPES_TS, own, "Settings.a.b") == {"signature", "text"}
    assert moved("typescript", SHAPES_TS, sibling, "Settings.a.b") == set()
    assert moved("typescript", SHAPES_TS, sibling, "Settings.c") == {"signature", "text"}
