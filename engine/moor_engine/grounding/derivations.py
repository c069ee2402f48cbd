"""Trust of a bound anchor's derivation: which lock digests moor may compare, translate or
must refuse (issue 9.7; ARCHITECTURE.md, "Where each decision lives").

A derivation (`symbol/1 norm/3 python`) names the function that computed an anchor's
digests. Digests of another derivation cannot be compared with today's, and adopting
today's in their place would swallow any change made since binding. So:

* the lock's derivation is moor's own: compare;
* it is an *older* one of the same shape: an upgrade moor knows how to translate — the
  bound code itself (the journal's sealed snapshot, else the file at the commit that wrote
  the address into moor.lock) is normalised again by today's normaliser, and that is the
  baseline the code is compared with; drift since binding stays drift;
* the bound code cannot be recovered: nothing can be compared — `unverified`, and only a
  person who re-read the code (`reaffirm --why`) can accept it;
* it is newer than moor's, or of a shape moor does not know (a newer moor wrote the lock, or
  a teammate's): `unverified`, never re-baselined — upgrade moor.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from moor_extractors.model import Facts, Failure
from moor_extractors.reference import parse_reference
from moor_store.journal import Journal
from moor_store.lockfile import LockedAnchor

from moor_engine.grounding.bound_code import commits_writing, refs_with_address
from moor_engine.grounding.observe import FileObserver, Found
from moor_engine.workspace.git import git
from moor_engine.workspace.workspace import Workspace


@dataclass(frozen=True)
class Translation:
    """The bound code's facts recomputed by today's normaliser, and where it was read."""

    facts: Facts  # the bound code's facts under today's normaliser
    origin: str  # "journal" or "git <commit>"


def translate(
    workspace: Workspace,
    journal: Journal | None,
    canonical: str,
    locked: LockedAnchor,
    found: Found,
    source: bytes,
) -> Translation | None:
    """The bound code of an anchor of an older derivation, normalised by today's moor.

    `found` and `source`: the anchor's code now and its file's bytes — the context the
    journal's sealed snapshot (the definition's own text) is put back into, so it is
    normalised where it lives (a method stays a method of its class).
    """
    ref = parse_reference(canonical)
    if isinstance(ref, Failure) or ref.path is None:
        return None
    for commit, data, then in _committed_versions(workspace, canonical, locked.address):
        facts = _observed(workspace, then, data)
        if facts is not None:
            return Translation(facts, f"git {commit[:12]}")
    text = journal.snapshot(locked.address) if journal is not None else None
    if text is None:
        return None
    if found.site is None:
        bound = text.encode("utf-8")
    else:
        start, end = found.site.start_byte, found.site.end_byte
        line_start = source.rfind(b"\n", 0, start) + 1
        indent = source[line_start:start].decode("utf-8", "replace")
        if indent.strip():
            return None  # shares its line with other code: the snapshot was not dedented
        bound = source[:line_start] + textwrap.indent(text, indent).encode("utf-8") + source[end:]
    facts = _observed(workspace, canonical, bound)
    return Translation(facts, "journal") if facts is not None else None


def _observed(workspace: Workspace, canonical: str, data: bytes) -> Facts | None:
    """The facts of `canonical` when its file holds `data` (today's normaliser)."""
    ref = parse_reference(canonical)
    if isinstance(ref, Failure) or ref.path is None:
        return None
    observer = FileObserver(workspace.root, workspace.config.max_file_size, None)
    observer.assume(ref.path, data)
    observation = observer.observe(ref)
    return observation.facts if isinstance(observation, Found) else None


def _committed_versions(
    workspace: Workspace, canonical: str, address: str
) -> list[tuple[str, bytes, str]]:
    """The file at the newest commit that wrote `address` into moor.lock, and the anchor as
    it was named there: the code as it was bound (moor.lock is committed with the code it
    was bound to; a follow since then keeps the address under the new name)."""
    for commit in commits_writing(workspace, address):
        versions = []
        for then in dict.fromkeys([canonical, *refs_with_address(workspace, commit, address)]):
            ref = parse_reference(then)
            if isinstance(ref, Failure) or ref.path is None:
                continue
            data = git(workspace.root, "show", "--no-textconv", f"{commit}:./{ref.path}")
            if data is not None:
                versions.append((commit, data, then))
        if versions:
            return versions
    return []
