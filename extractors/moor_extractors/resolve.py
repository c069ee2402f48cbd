"""Which definitions a symbol names (docs/memories.md): one resolver for the engine, the CLI's
`moor symbols` and the editor's completion.

A qualified name shared by several definitions is a *group*. The parse decides what the
group is (`group_of`): one symbol whose bare name means all of it, watched together
(branches of one `if`, property accessors, overloads with their implementation, `cfg`
variants), and which spelling picks each member alone (`Registry.lookup(Key)`,
`Pattern.fmt(Display)`). `resolve` then needs only the listed sites and the groups, which
a caller may remember: a warm check never parses to know what a name means.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tree_sitter import Node

from .lang_base import LanguageSpec, Variant
from .model import DefinitionSite, Failure
from .reference import canonical_spelling, parse_reference, split_spelling
from .symbols import ParsedFile, spec_for

# `name@2`: the second definition called `name` in its file (the spelling of last resort).
_ORDINAL = re.compile(r"(.+)@([1-9][0-9]*)")


@dataclass(frozen=True)
class Group:
    """What the parse says about the definitions sharing one qualified name."""

    together: bool
    """The bare name means every one of them, watched together."""
    spellings: tuple[str | None, ...]
    """Per definition (in document order): what `name(…)` holds to pick it alone."""
    bare: tuple[int, ...] | None = None
    """When `together`: the positions of the members the bare name means (None: all)."""


@dataclass(frozen=True)
class Named:
    """The sites a symbol names: one, or several watched together."""

    indexes: tuple[int, ...]


@dataclass(frozen=True)
class Ambiguous:
    """The symbol names several definitions that are not one thing to a reader."""

    indexes: tuple[int, ...]
    candidates: tuple[tuple[str | None, int], ...]
    """Per definition: the symbol that picks it alone (None: there is none), its line."""


Resolution = Named | Ambiguous | None


@dataclass(frozen=True)
class SymbolRef:
    """One symbol that names definitions of a file exactly (`moor symbols`)."""

    symbol: str
    kind: str
    line: int
    end_line: int
    variants: int


def resolve(
    symbol: str,
    sites: Sequence[DefinitionSite],
    language: str,
    named: Callable[[str], list[int]],
    group: Callable[[list[int]], Group],
    head: Callable[[int], str] | None = None,
) -> Resolution:
    """What `symbol` (canonical, as `parse_reference` gives it) names among `sites`.

    `named(qname)`: the indexes of the sites with that qualified name; `group(indexes)`:
    `group_of` those sites (asked only when several share the name, or a spelling is
    given); `head(index)`: a site's first line of source, asked only when nothing else
    matched (an explicit anchor written in a Markdown heading). None: nothing of that
    name."""
    spec = spec_for(language)
    base, spelling = split_spelling(symbol)
    indexes = named(base)
    if not indexes and spelling is None:
        ordinal = _ORDINAL.fullmatch(base)
        if ordinal is not None:
            # `f@2`: the second definition called `f` in the file, in document order.
            members = sorted(named(ordinal.group(1)), key=lambda i: sites[i].start_byte)
            number = int(ordinal.group(2))
            return Named((members[number - 1],)) if number <= len(members) else None
    if not indexes:
        indexes = spec.loose_matches(base, [site.qname for site in sites])
    if not indexes and head is not None:
        indexes = spec.anchor_matches(base, len(sites), head)
    if not indexes:
        return None
    if spelling is not None:
        spellings = group(indexes).spellings
        picked = tuple(i for i, s in zip(indexes, spellings, strict=True) if s == spelling)
        if not picked:  # `select(java.lang.String)` for `select(String)`
            loose = spec.simple_spelling(spelling)
            picked = tuple(
                i
                for i, s in zip(indexes, spellings, strict=True)
                if s is not None and spec.simple_spelling(s) == loose
            )
        if len(picked) > 1:
            return Ambiguous(picked, tuple((None, sites[i].line) for i in picked))
        return Named(picked) if picked else None
    if len(indexes) == 1:
        return Named((indexes[0],))
    return _bare(sites, indexes, group(indexes))


def _bare(sites: Sequence[DefinitionSite], indexes: list[int], found: Group) -> Named | Ambiguous:
    """What the bare name of several same-named definitions means."""
    if found.together:
        if found.bare is not None:
            return Named(tuple(indexes[position] for position in found.bare))
        return Named(tuple(indexes))
    plain = [i for i, s in zip(indexes, found.spellings, strict=True) if s is None]
    if len(plain) == 1:
        # Rust resolves `p.fmt()` to the inherent method before any trait's: so does moor;
        # a Python name rebound in one block is its last definition.
        return Named((plain[0],))
    qname = sites[indexes[0]].qname
    return Ambiguous(
        tuple(indexes),
        tuple(
            (_picking(qname, indexes, position, found.spellings), sites[i].line)
            for position, i in enumerate(indexes)
        ),
    )


def _spelled(qname: str, spelling: str | None, spellings: tuple[str | None, ...]) -> str | None:
    """The symbol that picks the definition with this spelling alone, if one does."""
    if spelling is None or spellings.count(spelling) > 1:
        return None
    if spelling.startswith("@"):
        return qname + spelling  # an ordinal (`group_of`), not a parenthesised list
    return f"{qname}({spelling})"


def _picking(
    qname: str, indexes: list[int], position: int, spellings: tuple[str | None, ...]
) -> str:
    """The symbol that picks the member at `position` alone: its spelling, else its
    ordinal (`f@2`, 1-based in document order; `indexes` are in document order)."""
    return _spelled(qname, spellings[position], spellings) or f"{qname}@{position + 1}"


def member_symbol(qname: str, spellings: tuple[str | None, ...], position: int) -> str:
    """The symbol that picks member `position` of the group `qname` alone (`f(int)`,
    else `f@2`): what relocation names when the code it found is one overload."""
    return _picking(qname, [], position, spellings)


def group_of(
    spec: LanguageSpec,
    sites: Sequence[DefinitionSite],
    parsed: Callable[[], ParsedFile],
) -> Group:
    """Decide what same-named `sites` are (or what one site's spelling is); `parsed()`
    gives the parse they come from."""
    parse = parsed()
    nodes = [parse.definition(site) for site in sites]
    variants = [spec.variant(node, span) for node, span in nodes]
    # A member listed inside a definition (a field, a variant) never takes its name from a
    # namesake listed before members were (a Rust method beside a field of its name).
    primary = [
        i
        for i, (variant, (node, _)) in enumerate(zip(variants, nodes, strict=True))
        if not variant.secondary and spec.is_place(node)
    ]
    if primary and len(primary) < len(sites):
        # What the others are decides the bare name; the secondary ones are each spelled
        # (by their kind where they have no spelling: `ErrorImpl.backtrace(field)`).
        inner = group_of(spec, [sites[i] for i in primary], parsed)
        secondary = [i for i in range(len(sites)) if i not in primary]
        spelled = _distinct(
            [_canonical(variants[i].spelling) or sites[i].kind for i in secondary],
            [variants[i] for i in secondary],
        )
        merged: list[str | None] = [None] * len(sites)
        for i, spelling in zip(primary, inner.spellings, strict=True):
            merged[i] = spelling
        for i, spelling in zip(secondary, spelled, strict=True):
            merged[i] = spelling
        if not inner.together:
            return Group(False, tuple(merged))
        bare = primary if inner.bare is None else [primary[p] for p in inner.bare]
        return Group(True, tuple(merged), tuple(bare))
    spellings = _distinct([_canonical(v.spelling) for v in variants], variants)
    # `f = None` (or `f: Callable | None = None`) beside `def f`: a declared default or
    # fallback of one symbol, watched together.
    declared = sum(site.kind != "constant" for site in sites) <= 1
    together = declared or spec.together(variants) or _exclusive(spec, [node for node, _ in nodes])
    plain = [i for i, spelling in enumerate(spellings) if spelling is None]
    if not together and len(plain) > 1 and spec.replaces([nodes[i] for i in plain]):
        # The last rebinding is what the bare name means; the ones it replaced, by ordinal.
        spellings = tuple(
            f"@{i + 1}" if i in plain[:-1] else spelling for i, spelling in enumerate(spellings)
        )
    return Group(together, spellings)


def _distinct(short: list[str | None], variants: list[Variant]) -> tuple[str | None, ...]:
    """Each member's spelling: its short one where that alone tells it apart (no spelling
    at all, for the one member the bare name means), else its full one."""
    chosen: list[str | None] = []
    for spelling, variant in zip(short, variants, strict=True):
        if short.count(spelling) > 1 and variant.full is not None:
            spelling = _canonical(variant.full)
        chosen.append(spelling)
    return tuple(chosen)


def _canonical(spelling: str | None) -> str | None:
    return None if spelling is None else canonical_spelling(spelling)


def _exclusive(spec: LanguageSpec, nodes: list[Node]) -> bool:
    """True when no two of the definitions can both run: each pair sits in different
    branches of some conditional (`if WIN: def f` / `else: def f`, `try:`/`except:`, also
    nested, and methods of a class defined once per branch). Two `def f` in one branch
    are a redefinition, not variants."""
    branches: list[dict[tuple[int, int], tuple[int, int]]] = []
    for definition in nodes:
        child: Node = definition
        node = definition.parent
        seen: dict[tuple[int, int], tuple[int, int]] = {}  # conditional -> branch
        while node is not None:
            if node.type in spec.conditionals:
                seen[(node.start_byte, node.end_byte)] = (child.start_byte, child.end_byte)
            child, node = node, node.parent
        branches.append(seen)
    return all(
        any(a[c] != b[c] for c in a.keys() & b.keys())
        for index, a in enumerate(branches)
        for b in branches[index + 1 :]
    )


def reference_symbol(path: str, qname: str) -> str | None:
    """A qualified name as a reference to it in `path` spells it, or None when no
    reference can (a heading holding `>`)."""
    ref = parse_reference(f"{path}#{qname}")
    return None if isinstance(ref, Failure) else ref.symbol


def references(parsed: ParsedFile, path: str) -> list[SymbolRef]:
    """Every symbol that names definitions of `parsed` (the file at `path`) exactly, in
    document order: each unique name, each group's bare name (when it means something),
    and each spelling that picks one member."""
    sites = parsed.sites()
    by_name: dict[str, list[int]] = {}
    for index, site in enumerate(sites):
        by_name.setdefault(site.qname, []).append(index)
    spec = parsed.spec

    def parse() -> ParsedFile:
        return parsed

    result: list[SymbolRef] = []
    for qname, indexes in by_name.items():
        symbol = reference_symbol(path, qname)
        if symbol is None:
            continue
        if len(indexes) == 1:
            result.append(_ref(symbol, [sites[indexes[0]]]))
            continue
        members = [sites[i] for i in indexes]
        found = group_of(spec, members, parse)
        meaning = _bare(sites, indexes, found)
        if isinstance(meaning, Named):
            result.append(_ref(symbol, [sites[i] for i in meaning.indexes]))
        alone = meaning.indexes if isinstance(meaning, Named) and len(meaning.indexes) == 1 else ()
        for position, (index, spelling) in enumerate(zip(indexes, found.spellings, strict=True)):
            picked = _spelled(symbol, spelling, found.spellings)
            # Its ordinal where nothing else picks it alone: a member of a group that is not
            # one symbol, or one whose spelling a namesake shares (a Python overload and its
            # implementation both `(bool)`).
            shared = spelling is not None and picked is None
            if picked is None and (shared or not found.together) and index not in alone:
                picked = _picking(symbol, indexes, position, found.spellings)
            if picked is not None:
                result.append(_ref(picked, [sites[index]]))
    return result


def _ref(symbol: str, sites: list[DefinitionSite]) -> SymbolRef:
    return SymbolRef(symbol, sites[0].kind, sites[0].line, sites[-1].end_line, len(sites))
