"""A found definition that is now a compatibility alias of another: asked of every found
anchor whose kind changed, so it lives apart from the search for vanished code."""

from __future__ import annotations

from moor_extractors.reference import Reference
from moor_extractors.symbols import alias_of
from moor_store.lockfile import LockedAnchor

from moor_engine.grounding.observe import FileObserver, FileView, Found


def alias_target(observer: FileObserver, found: Found, locked: LockedAnchor) -> Reference | None:
    """A definition that became `Old = New` after a rename (a compatibility alias) points
    at `New`: the memory's code was renamed, not rewritten into a constant."""
    if found.site is None or found.facts.kind == locked.kind:
        return None
    view = observer.view(found.path)
    if not isinstance(view, FileView) or view.language is None:
        return None
    target = alias_of(view.language, view.source_text(found.site))
    if target is None:
        return None
    indexes = view.named(target)
    if len(indexes) == 1 and view.sites()[indexes[0]].kind == locked.kind:
        return Reference(found.path, target, None)
    return None
