"""Read-only sources: notes other tools keep (`[[sources]]` in moor.toml), listed with
whether moor binds each through a sidecar memory of its own. Their files are never written:
everything here only lists and stats them, contained (`moor_store.inside`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from moor_store.inside import NotInside, exists_inside, open_inside_dir

from moor_engine.config import SourceConfig
from moor_engine.session import Session

SIDECAR_FOLDER = "sources"  # under the first memory root: memories/sources/KIND/NAME.md


@dataclass
class SourceNotes:
    kind: str
    path: str
    notes: list[str] = field(default_factory=list)  # note names (file stems), sorted
    bound: list[str] = field(default_factory=list)  # those with a sidecar memory
    problem: str | None = None  # why the folder could not be listed

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "path": self.path,
            "notes": [{"name": n, "bound": n in self.bound} for n in self.notes],
            "problem": self.problem,
        }


def sidecar_path(session: Session, kind: str, name: str) -> str:
    root = session.workspace.config.memory_roots[0].rstrip("/")
    return f"{root}/{SIDECAR_FOLDER}/{kind}/{name}.md"


def list_sources(session: Session) -> list[SourceNotes]:
    return [_notes(session, spec) for spec in session.workspace.config.sources]


def _notes(session: Session, spec: SourceConfig) -> SourceNotes:
    found = SourceNotes(spec.kind, spec.path)
    root = session.workspace.root
    try:
        with open_inside_dir(root, spec.path, create=False) as folder:
            names = sorted(os.listdir(folder))
    except FileNotFoundError:
        found.problem = f"{spec.path}: no such folder"
        return found
    except (NotInside, OSError) as error:
        found.problem = f"{spec.path}: not listed: {error}"
        return found
    for entry in names:
        if not entry.endswith(".md") or entry.startswith("."):
            continue
        name = entry.removesuffix(".md")
        found.notes.append(name)
        if exists_inside(root, sidecar_path(session, spec.kind, name)):
            found.bound.append(name)
    return found
