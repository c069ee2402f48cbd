"""Looking for a vanished target elsewhere (DESIGN §4): moved files, moved or renamed symbols.

Cheapest first: the same file under another name, then the same qualified name in another
file of the same language, then the same body under another name anywhere. A search that
finds more than one equally good candidate relocates nothing: pointing a memory at the
wrong code is worse than calling its target gone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import TypeVar

from moor_extractors.languages import language_for_path
from moor_extractors.reference import Reference
from moor_extractors.symbols import parse_source
from moor_store.lockfile import LockedAnchor

from moor_engine.observe import FileObserver, FileView, Found
from moor_engine.workspace import Workspace

_T = TypeVar("_T")
# A body is evidence of identity only when it says something: a stub (`pass`, `...`,
# `return None`, `{}`) matches too many unrelated definitions to prove a rename.
_STUBS: dict[str, tuple[str, ...]] = {
    "python": tuple(
        f"def f():\n    {body}\n"
        for body in (
            "pass",
            "...",
            "return",
            "return None",
            "raise NotImplementedError",
            "raise NotImplementedError()",
        )
    ),
    "javascript": ("function f() {}", "function f() { return; }"),
    "typescript": ("function f() {}", "function f() { return; }"),
    "tsx": ("function f() {}", "function f() { return; }"),
    "go": ("package p\nfunc f() {}\n", "package p\nfunc f() { return }\n"),
    "rust": ("fn f() {}", "fn f() { todo!() }", "fn f() { unimplemented!() }"),
    "java": ("class C { void f() {} }", "class C { void f() { return; } }"),
}


@cache
def stub_bodies(language: str | None) -> frozenset[str]:
    """Body digests of the language's do-nothing definitions, normalised like any code."""
    digests = set()
    for snippet in _STUBS.get(language or "", ()):
        parsed = parse_source(language or "", snippet.encode())
        for site in parsed.sites():
            if site.kind in ("function", "method"):
                digests.add(parsed.facts(site).axes["body"])
    return frozenset(digests)


@dataclass(frozen=True)
class Relocation:
    ref: Reference
    how: str  # "moved" (same name, another file) or "renamed" (same body, another name)


def relocate(
    workspace: Workspace,
    observer: FileObserver,
    ref: Reference,
    locked: LockedAnchor | None,
) -> Relocation | None:
    assert ref.path is not None
    if ref.symbol is None:
        return _relocate_file(workspace, observer, ref, locked)
    same_file = observer.view(ref.path)
    if locked is not None and isinstance(same_file, FileView) and same_file.language is not None:
        renamed = _unique(_body_matches(same_file, locked, exclude=ref.symbol))
        if renamed is not None:
            return Relocation(Reference(ref.path, renamed, None), "renamed")
    others = list(_other_views(workspace, observer, ref.path))
    by_name = _unique(
        (view.rel, site.qname)
        for view in others
        for site in view.sites()
        if site.qname == ref.symbol
    )
    if by_name is not None:
        return Relocation(Reference(by_name[0], by_name[1], None), "moved")
    if locked is None:
        return None
    by_body = _unique(
        (view.rel, qname) for view in others for qname in _body_matches(view, locked, exclude=None)
    )
    if by_body is not None:
        return Relocation(Reference(by_body[0], by_body[1], None), "renamed")
    return None


_ALIAS = re.compile(
    r"\A\s*(?:export\s+)?(?:const\s+|let\s+|var\s+)?[\w$]+\s*=\s*([\w$.]+)\s*;?\s*\Z"
)


def alias_target(observer: FileObserver, found: Found, locked: LockedAnchor) -> Reference | None:
    """A definition that became `Old = New` after a rename (a compatibility alias) points
    at `New`: the memory's code was renamed, not rewritten into a constant."""
    if found.site is None or found.facts.kind == locked.kind:
        return None
    view = observer.view(found.path)
    if not isinstance(view, FileView):
        return None
    match = _ALIAS.match(view.source_text(found.site))
    if match is None:
        return None
    target = match.group(1)
    indexes = view.named(target)
    if len(indexes) == 1 and view.sites()[indexes[0]].kind == locked.kind:
        return Reference(found.path, target, None)
    return None


def _relocate_file(
    workspace: Workspace, observer: FileObserver, ref: Reference, locked: LockedAnchor | None
) -> Relocation | None:
    if locked is None or "text" not in locked.axes:
        return None
    assert ref.path is not None
    suffix = ref.path.rsplit(".", 1)[-1] if "." in ref.path else ""
    matches: list[str] = []
    for rel in workspace.code_paths:
        if rel == ref.path or (rel.rsplit(".", 1)[-1] if "." in rel else "") != suffix:
            continue
        view = observer.view(rel)
        if (
            isinstance(view, FileView)
            and view.whole_file_facts().axes.get("text") == locked.axes["text"]
        ):
            matches.append(rel)
    if len(matches) == 1:
        return Relocation(Reference(matches[0], None, None), "moved")
    return None


def _other_views(workspace: Workspace, observer: FileObserver, path: str) -> Iterator[FileView]:
    language = language_for_path(path)
    if language is None:
        return
    candidates = [
        rel for rel in workspace.code_paths if rel != path and language_for_path(rel) == language
    ]
    observer.preload(candidates)
    for rel in candidates:
        view = observer.view(rel)
        if isinstance(view, FileView):
            yield view


def _body_matches(view: FileView, locked: LockedAnchor, exclude: str | None) -> list[str]:
    body = locked.axes.get("body")
    if body is None:
        return []
    return [
        site.qname
        for index, site in enumerate(view.sites())
        if site.qname != exclude
        and body not in stub_bodies(view.language)
        and site.kind == locked.kind
        and not site.has_error
        and view.facts_at(index).axes.get("body") == body
    ]


def _unique(items: Iterable[_T]) -> _T | None:
    seen = list(dict.fromkeys(items))
    return seen[0] if len(seen) == 1 else None
