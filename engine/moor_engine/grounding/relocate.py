"""Looking for a vanished target elsewhere (ARCHITECTURE.md, "The path of one check").

Evidence first, cheapest first:

1. a whole file: the same content in exactly one other file with the same suffix;
2. a symbol: the same qualified name in exactly one other file of the same language, or in
   the file git records the bound file renamed to (`file_renames.py`);
3. a rename in place: the definition now between the bound one's surviving neighbours,
   new to the file, with its kind, signature and body, however short (`places.py`);
4. the same body under another name — in the same file, then anywhere — when the body
   carries evidence (the language decides: a stub or a one-line delegation proves nothing).

A target must be unique and observable: two equally good candidates, or one whose name is
ambiguous in its file or that cannot be observed, relocate nothing — pointing a memory at
the wrong code is worse than calling its target gone. When nothing relocates, definitions
similar to the bound code (normalised token streams, sealed when it was bound) are ranked
as candidates: offered to a person (`moor follow --to`), never followed automatically.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterator
from difflib import SequenceMatcher

from moor_extractors.languages import language_for_path
from moor_extractors.model import Failure
from moor_extractors.reference import Reference
from moor_extractors.resolve import member_symbol
from moor_extractors.symbols import snippet_tokens, split_qualified
from moor_store.lockfile import LockedAnchor

from moor_engine.grounding.definition_index import Definition, DefinitionIndex, Indexes
from moor_engine.grounding.file_renames import renamed_to
from moor_engine.grounding.observe import FileObserver, FileView, Found
from moor_engine.grounding.relocation_result import Relocation, Search
from moor_engine.grounding.trust import Candidate
from moor_engine.workspace.workspace import Workspace

# Candidates below this similarity are no evidence of where gone code went, so are not
# offered (nor a `follow` to them). Measured (issue 23.4): every right candidate on the
# relocation benchmark scored 0.93 or more, on the drift corpus 0.96 or more; what deleted
# code was offered instead scored 0.60-0.99, all of it siblings that stood beside it when it
# was bound (no longer offered at all: `relocate`), half of it below 0.8.
SIMILARITY_FLOOR = 0.8
MAX_CANDIDATES = 3
# A same-named definition in another file is a move only if at least this much of the bound
# code is in it (normalised tokens). Measured on the real-history trial (issue 23): a rewritten
# function's unrelated namesake scored 0.19, its real successor 0.86; every `move` and
# `move+change` case of the relocation benchmark keeps its verdict.
NAMESAKE_FLOOR = 0.5
# At most this many definitions, nearest in size to the bound code, are looked at, and the
# ones sharing the most words with it are compared in full.
_MAX_SCORED = 300
_MAX_PARSED = 40
# Kinds one definition can have before and after a move (a function moved into a class).
_KIND_FAMILIES = ({"function", "method"},)


Snapshot = Callable[[], "str | None"]  # the bound code's source, when it was sealed
Outline = Callable[[], "list[str] | None"]  # its file's definitions when it was bound


def relocate(
    workspace: Workspace,
    observer: FileObserver,
    ref: Reference,
    locked: LockedAnchor | None,
    snapshot: Snapshot,
    indexes: Indexes,
    outline: Outline = lambda: None,
) -> Search:
    assert ref.path is not None
    if ref.symbol is None:
        return _relocate_file(workspace, observer, ref, locked)
    language = language_for_path(ref.path)
    if language is None:
        return Search()
    # Every other file of the language, as one index shared by all anchors of the check.
    index = indexes.of(language)
    bound = _Bound(language, snapshot)
    by_name = [
        Reference(view.rel, ref.symbol, None)
        for view in _views(observer, index.files_named(ref.symbol, ref.path))
        if view.named(ref.symbol)
    ]
    if len(by_name) > 1 and locked is not None:
        # A file git records as renamed carried its definitions: a namesake elsewhere (a
        # test helper, say) does not make the move ambiguous.
        went = renamed_to(workspace, ref.path, locked.address)
        by_name = [r for r in by_name if r.path == went] or by_name
    if by_name and bound.tokens() is not None:
        # A namesake that has next to nothing of the bound code is not where it went (a
        # library's rewritten `pager` is not an example script's `pager` command that stood
        # there all along): it is no evidence, and no reason to call a real move ambiguous.
        by_name = [r for r in by_name if _kin(observer, r, bound)]
    if by_name:
        return _pick(observer, by_name, "moved", bound)
    if locked is None:
        return Search()
    same_file = observer.view(ref.path)
    outline = functools.cache(outline)
    if isinstance(same_file, FileView):
        in_place = _renamed_in_place(same_file, locked, ref, outline)
        if in_place is not None:
            return _pick(observer, [Reference(ref.path, in_place, None)], "renamed", bound)
    body = locked.axes.get("body")
    others = [] if body is None else _views(observer, index.with_body(locked.kind, body, ref.path))
    for scope in ([same_file] if isinstance(same_file, FileView) else [], others):
        renamed = [
            Reference(view.rel, qname, None)
            for view in scope
            for qname in _body_matches(view, locked, ref)
        ]
        if renamed:
            return _pick(observer, renamed, "renamed", bound)
    pool = [
        Definition(ref.path, i, s.qname, s.kind, s.end_byte - s.start_byte, s.has_error, "")
        for i, s in enumerate(same_file.sites() if isinstance(same_file, FileView) else ())
    ]
    if bound.text is not None:
        size = len(bound.text.encode("utf-8"))
        pool += index.nearest(size, _family(locked.kind), ref.path, _MAX_SCORED)
    # What stood beside the bound code when it was bound is not where it went (a deleted
    # `setFeature` is not now its sibling `getFeature`).
    siblings = set(outline() or ())
    pool = [d for d in pool if not (d.rel == ref.path and d.qname in siblings)]
    return Search(candidates=_similar(observer, index, pool, ref, locked, bound, indexes.compared))


def _views(observer: FileObserver, rels: list[str]) -> list[FileView]:
    observer.preload(rels)
    return [view for rel in rels if isinstance(view := observer.view(rel), FileView)]


class _Bound:
    """The bound code's tokens, computed once and only if a comparison needs them."""

    def __init__(self, language: str, snapshot: Snapshot) -> None:
        self.language = language
        self._snapshot = snapshot
        self._text: str | None = None
        self._tokens: list[str] | None = None
        self._asked = False

    @property
    def text(self) -> str | None:
        if not self._asked:
            self._asked = True
            self._text = self._snapshot()
        return self._text

    def tokens(self) -> list[str] | None:
        if self._tokens is None and self.text is not None:
            self._tokens = snippet_tokens(self.language, self.text)
        return self._tokens

    def similarity(self, text: str) -> float | None:
        tokens = self.tokens()
        if tokens is None:
            return None
        return _ratio(tokens, snippet_tokens(self.language, text))


def _pick(observer: FileObserver, refs: list[Reference], how: str, bound: _Bound) -> Search:
    refs = list(dict.fromkeys(refs))
    observations = [observer.observe(ref) for ref in refs]
    if len(refs) == 1 and isinstance(observations[0], Found):
        return Search(Relocation(refs[0], how))
    candidates = _ranked(
        Candidate(ref.canonical(), _similarity_of(observer, observation, bound))
        for ref, observation in zip(refs, observations, strict=True)
    )
    if len(refs) > 1:
        what = "the same qualified name" if how == "moved" else "the same body"
        why = f"{len(refs)} definitions have {what}: none is followed automatically"
    else:
        failure = observations[0]
        detail = failure.detail if isinstance(failure, Failure) else "it is not there"
        why = f"{refs[0].canonical()} cannot be observed ({detail}): it is not followed"
    return Search(None, candidates, why)


def _similarity_of(observer: FileObserver, observation: object, bound: _Bound) -> float | None:
    if not isinstance(observation, Found) or observation.site is None:
        return None
    view = observer.view(observation.path)
    if not isinstance(view, FileView):
        return None
    return bound.similarity(view.source_text(observation.site))


def _kin(observer: FileObserver, ref: Reference, bound: _Bound) -> bool:
    similarity = _similarity_of(observer, observer.observe(ref), bound)
    return similarity is None or similarity >= NAMESAKE_FLOOR


def _ranked(candidates: Iterator[Candidate] | list[Candidate]) -> tuple[Candidate, ...]:
    """Best first; a total order, so the same workspace always lists them the same way."""
    return tuple(
        sorted(
            candidates,
            key=lambda c: (-(c.similarity if c.similarity is not None else -1), c.ref),
        )
    )


def _similar(
    observer: FileObserver,
    index: DefinitionIndex,
    pool: list[Definition],
    ref: Reference,
    locked: LockedAnchor,
    bound: _Bound,
    compared: dict[tuple[str, int, str], object],
) -> tuple[Candidate, ...]:
    """Definitions whose normalised tokens are close to the bound code's, best first.
    What is read of each definition is kept in `compared` for the other gone anchors of
    the change set: their nearest definitions are mostly the same ones. A definition the
    index vouches for is read from its file's bytes at the span the index keeps: the first
    check after code goes in a large tree parsed every candidate's whole file."""
    text, tokens = bound.text, bound.tokens()
    if text is None or not tokens:
        return ()
    size = len(text.encode("utf-8"))
    near = [
        (abs(d.length - size), d)
        for d in pool
        if not d.has_error
        and _same_family(d.kind, locked.kind)
        and size / 2 <= d.length <= size * 2
        and not (d.rel == ref.path and d.qname == ref.symbol)
    ]
    near.sort(key=lambda item: (item[0], item[1].rel, item[1].index))
    # Parsing and aligning every candidate costs ~5 ms each: the words of the raw text
    # (no parse) pick the few worth it.
    words = _words(text)
    texts: list[Compared] = []
    for _d, definition in near[:_MAX_SCORED]:
        key = (definition.rel, definition.index, definition.qname)
        if key not in compared:
            named = index.source(definition) or _source_of(observer, definition)
            compared[key] = None if named is None else Compared(definition.rel, *named)
        seen = compared[key]
        if isinstance(seen, Compared):
            texts.append(seen)
    texts.sort(key=lambda seen: -_overlap(words, seen.words))
    found: dict[str, Candidate] = {}
    for seen in texts[:_MAX_PARSED]:
        rel, qname = seen.rel, seen.symbol
        other = seen.tokens(bound.language)
        if _ratio(tokens, other, quick=True) < SIMILARITY_FLOOR:
            continue
        similarity = _ratio(tokens, other)
        if similarity >= SIMILARITY_FLOOR:
            candidate = Candidate(Reference(rel, qname, None).canonical(), similarity)
            if candidate.ref not in found or similarity > (found[candidate.ref].similarity or 0):
                found[candidate.ref] = candidate
    return _ranked(list(found.values()))[:MAX_CANDIDATES]


class Compared:
    """One definition as `_similar` compares it: its file, the symbol naming it alone, its
    source, that source's words, and its tokens when first needed."""

    def __init__(self, rel: str, symbol: str, source: str) -> None:
        self.rel, self.symbol, self.source = rel, symbol, source
        self.words = _words(source)
        self._tokens: list[str] | None = None

    def tokens(self, language: str) -> list[str]:
        if self._tokens is None:
            self._tokens = snippet_tokens(language, self.source)
        return self._tokens


def _source_of(observer: FileObserver, definition: Definition) -> tuple[str, str] | None:
    """The symbol naming `definition` alone, and its source."""
    view = observer.view(definition.rel)
    if not isinstance(view, FileView):
        return None
    sites = view.sites()
    if definition.index >= len(sites) or sites[definition.index].qname != definition.qname:
        return None  # the index is of another version of the file: not this definition
    return _symbol_of(view, definition.index), view.source_text(sites[definition.index])


_WORD = re.compile(r"\w+")


def _words(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text))


def _overlap(a: Counter[str], b: Counter[str]) -> float:
    """The share of words two texts have in common (a multiset Dice coefficient)."""
    total = sum(a.values()) + sum(b.values())
    return 2.0 * sum((a & b).values()) / total if total else 1.0


def _ratio(a: list[str], b: list[str], *, quick: bool = False) -> float:
    """How alike two token streams are, 0..1: difflib's ratio, except that a name renamed
    consistently — every one of its two or more uses, and nothing else renamed to it —
    counts as matching. A rename that touched a body is mostly such renames (`_cache` ->
    `#cache`, a local `got` -> `actual`); an unchanged sibling differs by names used once
    (`IsSpace` / `IsLetter`), so without this it could outrank the renamed code."""
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    if quick:
        return matcher.quick_ratio()
    if not a and not b:
        return 1.0
    matched = sum(block.size for block in matcher.get_matching_blocks())
    pairs: Counter[tuple[str, str]] = Counter()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            pairs.update(
                (_leaf(x), _leaf(y))
                for x, y in zip(a[i1:i2], b[j1:j2], strict=True)
                if _is_leaf(x) and _is_leaf(y)
            )
    uses_a = Counter(_leaf(x) for x in a if _is_leaf(x))
    uses_b = Counter(_leaf(y) for y in b if _is_leaf(y))
    renamed = sum(
        count
        for (x, y), count in pairs.items()
        if count >= 2 and uses_a[x] == count and uses_b[y] == count
    )
    return 2.0 * (matched + renamed) / (len(a) + len(b))


def _is_leaf(token: str) -> bool:
    return token != ")" and not token.startswith("(")


def _leaf(token: str) -> str:
    """A leaf's text without the grammar field it fills (`left:x` and `x` are one name)."""
    label, colon, text = token.partition(":")
    return text if colon and label.isidentifier() and text else token


def _family(kind: str) -> set[str]:
    """The kinds a definition of this kind may have become."""
    return {kind}.union(*(family for family in _KIND_FAMILIES if kind in family))


def _same_family(kind: str, bound_kind: str) -> bool:
    return kind == bound_kind or any(
        kind in family and bound_kind in family for family in _KIND_FAMILIES
    )


def _relocate_file(
    workspace: Workspace, observer: FileObserver, ref: Reference, locked: LockedAnchor | None
) -> Search:
    if locked is None or "text" not in locked.axes:
        return Search()
    assert ref.path is not None
    suffix = ref.path.rsplit(".", 1)[-1] if "." in ref.path else ""
    matches: list[Reference] = []
    for rel in workspace.code_paths:
        if rel == ref.path or (rel.rsplit(".", 1)[-1] if "." in rel else "") != suffix:
            continue
        view = observer.view(rel)
        if (
            isinstance(view, FileView)
            and view.whole_file_facts().axes.get("text") == locked.axes["text"]
        ):
            matches.append(Reference(rel, None, None))
    if len(matches) == 1:
        return Search(Relocation(matches[0], "moved"))
    if matches:
        why = f"{len(matches)} files have the same content: none is followed automatically"
        return Search(None, tuple(Candidate(m.canonical(), 1.0) for m in matches), why)
    return Search()


def _renamed_in_place(
    view: FileView, locked: LockedAnchor, vanished: Reference, outline: Outline
) -> str | None:
    """The definition that took the vanished one's place in its file: where the bound
    outline and today's differ only by it (aligned as sequences, so namesakes around it
    — a static and an instance `parse` — still anchor the place), new to the file, in the
    same container, of the bound kind, signature and body: a rename where it stands,
    however short the body (places.py). None when the place is not known, no neighbour
    is left to tell it by, or not exactly one definition fits."""
    body, signature = locked.axes.get("body"), locked.axes.get("signature")
    if view.language is None or vanished.symbol is None or body is None:
        return None
    before = outline()
    if before is None or before.count(vanished.symbol) != 1:
        return None
    sites = view.sites()
    now = [site.qname for site in sites]
    at = before.index(vanished.symbol)
    gap = range(0)
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, before, now, autojunk=False).get_opcodes():
        if i1 <= at < i2:
            if tag == "replace" and (i1 > 0 or i2 < len(before)):
                gap = range(j1, j2)
            break
    was = set(before)
    container = split_qualified(view.language, vanished.symbol)[0]
    fits = [
        index
        for index in gap
        if now[index] not in was
        and now.count(now[index]) == 1
        and split_qualified(view.language, now[index])[0] == container
        and sites[index].kind == locked.kind
        and not sites[index].has_error
        and view.facts_at(index).axes.get("body") == body
        and view.facts_at(index).axes.get("signature") == signature
    ]
    return now[fits[0]] if len(fits) == 1 else None


def _body_matches(view: FileView, locked: LockedAnchor, vanished: Reference) -> list[str]:
    """Definitions of `view` whose body is the bound one and says enough to prove it: a
    body that carries evidence by itself, or any body under the same own name and
    signature when its container is gone from the file (`KeepOpenFile.__getattr__` ->
    `_KeepOpenFile.__getattr__`: the class was renamed around a one-line method)."""
    body = locked.axes.get("body")
    if body is None or view.language is None or vanished.symbol is None:
        return []
    container, own = split_qualified(view.language, vanished.symbol)
    # Gone means nothing of it is left: no definition by its name and none inside it (a
    # Rust `impl` of a type defined elsewhere names no definition here, yet it is there).
    container_gone = (
        container is not None
        and not view.named(container)
        and not any(
            split_qualified(view.language, site.qname)[0] == container for site in view.sites()
        )
    )
    matches = []
    for index, site in enumerate(view.sites()):
        if (
            (view.rel == vanished.path and site.qname == vanished.symbol)
            or site.kind != locked.kind
            or site.has_error
        ):
            continue
        facts = view.facts_at(index)
        if facts.axes.get("body") != body:
            continue
        renamed_around = (
            container_gone
            and split_qualified(view.language, site.qname)[1] == own
            and facts.axes.get("signature") == locked.axes.get("signature")
        )
        if renamed_around or view.parsed().carries_evidence(site):
            matches.append(_symbol_of(view, index))
    return matches


def _symbol_of(view: FileView, index: int) -> str:
    """The symbol that names the definition at `index` alone: its qualified name, or, when
    it shares that name (a Java overload whose parameter type changed), its member's
    spelling — never the whole group, whose facts are not the bound code's."""
    qname = view.sites()[index].qname
    indexes = view.named(qname)
    if len(indexes) < 2:
        return qname
    return member_symbol(qname, view.group(indexes).spellings, indexes.index(index))
