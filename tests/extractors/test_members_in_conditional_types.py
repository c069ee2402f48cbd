"""A type alias whose value is a conditional type (`S extends X ? { … } : never`, as a real
store middleware writes its API's type) lists the properties of its object branches under
the names a reader uses, as it does for a plain object type — found by the real-history
trial (bench/real_history.py), where such a rewrite re-pointed `StorePersist.persist.rehydrate`
to a flattened `StorePersist.rehydrate`."""

from __future__ import annotations

from tests.extractors.test_resolve import listed

PLAIN = """\
type StorePersist<S> = {
  persist: {
    rehydrate: () => Promise<void> | void
  }
}
"""

CONDITIONAL = """\
type StorePersist<S, Pr> = S extends {
  getState: () => infer T
}
  ? {
      persist: {
        rehydrate: () => Promise<void> | void
      }
    }
  : {
      fallback: string
    }
"""


def symbols(source: str) -> list[str]:
    return [symbol for symbol, _ in listed("typescript", source)]


def test_the_properties_of_a_conditional_types_branches_keep_their_nesting() -> None:
    # the plain object type: the spelling a memory is bound with (the positive control)
    assert symbols(PLAIN) == [
        "StorePersist",
        "StorePersist.persist",
        "StorePersist.persist.rehydrate",
    ]
    assert symbols(CONDITIONAL) == [
        "StorePersist",
        "StorePersist.persist",
        "StorePersist.persist.rehydrate",
        "StorePersist.fallback",
    ]
