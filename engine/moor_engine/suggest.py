"""Did you mean: the closest existing references to one that names nothing.

A reference that was never bound and names no code is almost always a typo, a stale
path or a spelling pasted from another tool (`Type::method`, `(*T).Method`,
`Class/method`). Silence would leave the person to search; so the closest references
that do name code are offered, best first: the same spelling with another case, the
other tool's spelling in moor's, a name that ends the same way (`send` for
`Client.send`), then the nearest by edit distance.
"""

from __future__ import annotations

import difflib

from moor_extractors.reference import Reference
from moor_extractors.symbols import spec_for

from moor_engine.observe import FileObserver, FileView
from moor_engine.workspace import Workspace

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
            for symbol in _symbol_suggestions(view, view.language, ref.symbol)
        ]
    return []


def _symbol_suggestions(view: FileView, language: str, symbol: str) -> list[str]:
    names = list(dict.fromkeys(site.qname for site in view.sites()))
    found: list[str] = []
    # Another tool's spelling in moor's, as the language reads it (the resolver's rule).
    respelt = spec_for(language).pasted(symbol) or symbol
    folded = symbol.casefold()
    found += [name for name in names if name == respelt and name != symbol]
    found += [name for name in names if name.casefold() in (folded, respelt.casefold())]
    found += [
        name for name in names if name.endswith("." + respelt) or name.endswith(" > " + respelt)
    ]
    found += difflib.get_close_matches(respelt, names, n=MAX_SUGGESTIONS, cutoff=_CUTOFF)
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
