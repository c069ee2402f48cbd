"""Where bound code sat in its file: evidence for a rename in place (`relocate.py`).

A one-line definition renamed where it stands (`_or_inf` -> `none_as_inf`, same signature,
same body) says too little by its body to be told from a twin (stub-bodies-are-no-evidence-
of-a-rename). Its place does: the definition that now sits between the same surviving
neighbours, new to the file, with the bound kind, signature and body. So when code is
bound, the file's outline (every definition's qualified name, in file order) is sealed in
the journal beside the code; a clone without `.moor/` reads it from the file at the commit
that bound the anchor (`bound_code.commits_writing`).
"""

from __future__ import annotations

from moor_extractors.digest import digest_bytes
from moor_extractors.model import Failure
from moor_store.journal import Journal
from moor_store.lockfile import LockedAnchor

from moor_engine.grounding.bound_code import bound_view
from moor_engine.grounding.observe import FileView, Found
from moor_engine.workspace.workspace import Workspace

_PREFIX = "place:"
_OUTLINE = "outline:"


def place_key(canonical: str, address: str) -> str:
    """The sealed snapshot's key for the place of `canonical` bound at `address` (code
    snapshots are keyed by the bare address, so the two never meet). It holds the digest
    of the file's outline, sealed once under `outline:DIGEST`: every anchor bound in one
    version of a file shares it, so 10,000 anchors cost 10,000 short rows, not 10,000
    copies of their files' outlines."""
    return f"{_PREFIX}{address}\n{canonical}"


def outline(view: FileView) -> list[str]:
    return [site.qname for site in view.sites()]


def place_seal(
    view: FileView | Failure | None, found: Found, canonical: str
) -> list[tuple[str, str]]:
    """The seal that keeps the place of an anchor bound now (none for a whole file)."""
    if view is None or isinstance(view, Failure) or found.site is None:
        return []
    text = "\n".join(outline(view))
    digest = digest_bytes(text.encode("utf-8"))
    return [(_OUTLINE + digest, text), (place_key(canonical, found.address), digest)]


def bound_outline(
    workspace: Workspace, journal: Journal | None, canonical: str, locked: LockedAnchor
) -> list[str] | None:
    """The outline of the anchor's file when it was bound as `locked`; None when neither
    the journal nor git history has it."""
    address = locked.address
    if journal is not None:
        digest = journal.snapshot(place_key(canonical, address))
        text = journal.snapshot(_OUTLINE + digest) if digest is not None else None
        if text is not None:
            return text.split("\n")
    view = bound_view(workspace, canonical, locked)
    return outline(view) if view is not None else None
