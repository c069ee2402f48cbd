"""Did you mean: the closest existing references to one that names nothing.

A reference that was never bound and names no code is almost always a typo, a stale
path or a name left unqualified (a spelling pasted from another tool, `Type::method`,
is moor's own already: `parse_reference`). Silence would leave the person to search; so
the closest references that do name code are offered, best first: the same spelling
with another case, a name that ends the same way (`send` for `Client.send`), then the
nearest by edit distance.
"""

from __future__ import annotations

import difflib

from moor_extractors.reference import Reference

from moor_engine.grounding.observe import FileObserver, FileView
from moor_engine.workspace.workspace import Workspace

MAX_SUGGESTIONS = 3
_CUTOFF = 0.6


def suggestions(workspace: Workspace, observer: FileObserver, ref: Reference) -> list[str]:
    if ref.path is None:
        return []
    view = observer.view(ref.path)
    if view is None:
        return _path_suggestions(workspace, observer, ref)
    if isinstance(view, FileView) and ref.symbol is not None and view.language is not None:
        return [
            Reference(ref.path, symbol, None).canonical()
            for symbol in _symbol_suggestions(view, ref.symbol)
        ]
    return []


def _symbol_suggestions(view: FileView, symbol: str) -> list[str]:
    names = list(dict.fromkeys(site.qname for site in view.sites()))
    found: list[str] = []
    # `symbol` is canonical: another tool's spelling is already moor's (`parse_reference`).
    folded = symbol.casefold()
    found += [name for name in names if name.casefold() == folded]
    found += [
        name for name in names if name.endswith("." + symbol) or name.endswith(" > " + symbol)
    ]
    found += difflib.get_close_matches(symbol, names, n=MAX_SUGGESTIONS, cutoff=_CUTOFF)
    return list(dict.fromkeys(found))[:MAX_SUGGESTIONS]


def _path_suggestions(workspace: Workspace, observer: FileObserver, ref: Reference) -> list[str]:
    assert ref.path is not None
    paths = workspace.code_paths
    folded = ref.path.casefold()
    close = [p for p in paths if p.casefold() == folded]
    basename = ref.path.rsplit("/", 1)[-1]
    close += [p for p in paths if p.rsplit("/", 1)[-1] == basename]
    close += difflib.get_close_matches(ref.path, paths, n=MAX_SUGGESTIONS, cutoff=_CUTOFF)
    found: list[str] = []
    for path in dict.fromkeys(close):
        if ref.symbol is None:
            found.append(Reference(path, None, None).canonical())
            continue
        view = observer.view(path)
        if isinstance(view, FileView) and view.language is not None and view.named(ref.symbol):
            found.append(Reference(path, ref.symbol, None).canonical())
    return found[:MAX_SUGGESTIONS]
