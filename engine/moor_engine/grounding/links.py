"""Links between memories (`links:` in frontmatter) and cobound memories (sharing an anchor).

Both are derived from the memories as read, never stored: a link is what a memory's
`links:` says, a cobound memory one bound to the very same anchor (canonical reference).
Neither propagates grounding: a memory's trust state is its own anchors' alone. What a link
adds is a finding beside the state (`LinkFinding`, on `MemoryReport.link_findings`): a
memory that `contradicts` a memory that is current (one of the two is wrong), and a link to
a memory that does not exist (with a did-you-mean). A finding never changes a state or the
exit status of `moor check`.

A retired memory is never named cobound (`named_cobound`): it is no longer knowledge about
the code, and the surfaces that show retired siblings show them apart, with why
(`moor about`'s count left out, a search hit's `retired_here`). Every view that lists
cobound memories asks here (memory: retired-memories-are-never-named-cobound).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from moor_extractors.memory import Memory
from moor_extractors.model import Failure
from moor_extractors.reference import parse_reference

from moor_engine.grounding.memories import LoadedMemory, load_memories
from moor_engine.grounding.trust import LinkFinding, MemoryReport, State
from moor_engine.memory import namespaces

if TYPE_CHECKING:
    from moor_engine.session import Session

CONTRADICTS = "contradicts"
TO, FROM = "to", "from"  # a link this memory writes; one another memory writes to it


@dataclass(frozen=True)
class Link:
    """One link of a memory: one it writes (TO), or one another memory writes to it (FROM)."""

    relation: str  # as written: `contradicts`, `elaborates`, `see-also`, any other kind
    path: str  # the other memory (as written, normalised; for FROM its path)
    direction: str  # TO or FROM
    exists: bool  # whether the other memory is a memory file of the workspace

    def as_json(self) -> dict[str, object]:
        return {
            "relation": self.relation,
            "path": self.path,
            "direction": self.direction,
            "exists": self.exists,
        }


@dataclass(frozen=True)
class Related:
    """A memory's one hop: its links both ways and the memories cobound with it."""

    links: tuple[Link, ...] = ()
    cobound: tuple[str, ...] = ()  # memories sharing one of its anchors, sorted

    def without(self, paths: Collection[str]) -> Related:
        """These relations with `paths` (e.g. retired memories) left out of the cobound."""
        return Related(self.links, tuple(p for p in self.cobound if p not in paths))

    def as_json(self) -> dict[str, object]:
        return {
            "links": [link.as_json() for link in self.links],
            "cobound": list(self.cobound),
        }


def target_path(written: str) -> str:
    """A link target as a workspace path: `./memories/x.md` is `memories/x.md`."""
    text = written.strip()
    return posixpath.normpath(text) if text else text


def own_links(memory: Memory, exists: Callable[[str], bool]) -> tuple[Link, ...]:
    """The links a memory's own `links:` writes (direction TO), relations in order."""
    return tuple(
        Link(relation, target, TO, exists(target))
        for relation, targets in sorted(memory.links.items())
        for target in (target_path(written) for written in targets)
    )


def named_cobound(report: MemoryReport) -> bool:
    """Whether a memory with this verdict may be named as cobound: not when retired."""
    return report.state is not State.RETIRED


def retired_among(reports: Iterable[MemoryReport]) -> set[str]:
    """The memories of `reports` never named as cobound (`Related.without` leaves them out)."""
    return {report.path for report in reports if not named_cobound(report)}


def cobound_with(canonical: str, path: str, reports: Iterable[MemoryReport]) -> list[str]:
    """The memories other than `path` bound to the anchor `canonical`, sorted, retired ones
    left out (for a view that has reports but not the loaded memories: the editor's hover
    on a reference)."""
    return sorted(
        report.path
        for report in reports
        if report.path != path
        and named_cobound(report)
        and any(a.canonical == canonical for a in report.anchors)
    )


class Relations:
    """Links and cobound memories among `loaded` (every memory of the workspace, for
    incoming links and cobound ones to be complete)."""

    def __init__(self, loaded: Mapping[str, LoadedMemory]) -> None:
        self._out: dict[str, list[Link]] = {}
        self._in: dict[str, list[Link]] = {}
        self._by_anchor: dict[str, set[str]] = {}
        self._anchors: dict[str, set[str]] = {}
        for path in sorted(loaded):
            memory = loaded[path].memory
            if memory is None:
                continue
            for link in own_links(memory, loaded.__contains__):
                self._out.setdefault(path, []).append(link)
                self._in.setdefault(link.path, []).append(Link(link.relation, path, FROM, True))
            canonicals = {
                item.ref.canonical() for item in loaded[path].entries if item.ref is not None
            }
            self._anchors[path] = canonicals
            for canonical in canonicals:
                self._by_anchor.setdefault(canonical, set()).add(path)

    def of(self, path: str) -> Related:
        cobound: set[str] = set()
        for canonical in self._anchors.get(path, ()):
            cobound |= self._by_anchor[canonical]
        cobound.discard(path)
        links = (*self._out.get(path, ()), *self._in.get(path, ()))
        return Related(tuple(links), tuple(sorted(cobound)))

    def edges(self) -> Iterable[tuple[str, Link]]:
        """Every link once, as (the memory whose `links:` it is, the link)."""
        for path in sorted(self._out):
            for link in self._out[path]:
                yield path, link


def visible_relations(
    loaded: Mapping[str, LoadedMemory], agent: str | None, *, everyone: bool = False
) -> Relations:
    """The relations among the memories reader `agent` sees (`namespaces.visible`; all of
    them with `everyone`): an agent's own memory is never named to another agent, as a
    link or as cobound."""
    return Relations(
        {
            path: memory
            for path, memory in loaded.items()
            if memory.memory is not None
            and (everyone or namespaces.visible(memory.memory.agent, agent))
        }
    )


def hits_relations(
    session: Session,
    hits: Mapping[str, LoadedMemory],
    references: Mapping[str, Sequence[str]],
    declaring: Sequence[str],
    agent: str | None,
) -> dict[str, Related]:
    """The one hop of a few recall hits without reading every memory (a warm server's
    search stats none: memory warm-servers-sync-recall-by-a-watch): each hit's own links,
    and the memories cobound with it among those whose indexed references (`references`,
    the recall index's) name one of its anchors, but for retired ones: those few are
    checked (nothing journalled) beside the memories that declare `supersedes:`
    (`declaring`), so the verdict sees every retirement. Links *to* a hit are not known
    here (`moor about` and `memories_about` list them). `hits`: as `load_memories` read
    them (the caller shows them too)."""
    workspace, journal = session.workspace, session.journal
    loaded = dict(hits)
    refs = [item.ref for memory in loaded.values() for item in memory.entries if item.ref]
    named = _named(references)
    nearby = sorted(
        {
            path
            for ref in refs
            if ref.path is not None
            for path in named.bound_to(ref.path, ref.canonical())
            if path not in loaded
        }
    )
    # The hits' link targets are read too: whether one exists (as a memory its reader sees).
    targets = {
        target_path(written)
        for memory in loaded.values()
        if memory.memory is not None
        for written in (w for ws in memory.memory.links.values() for w in ws)
    }
    nearby += sorted(t for t in targets if t in references and t not in loaded)
    loaded.update(load_memories(workspace, nearby, journal))
    relations = visible_relations(loaded, agent)
    related = {path: relations.of(path) for path in hits}
    others = sorted({p for one in related.values() for p in one.cobound} - set(hits))
    retired: set[str] = set()
    if others:
        evaluation = session.evaluate(list(dict.fromkeys([*others, *declaring])))
        retired = retired_among(r for r in evaluation.report.memories if r.path in others)
    return {path: _outgoing(related[path].without(retired)) for path in hits}


class _Named:
    """Which memories' indexed references spell each anchor, worked out per file on first
    use: a file only narrows (a module of the standard library has hundreds of memories),
    each written reference's parsed spelling decides."""

    def __init__(self, references: Mapping[str, Sequence[str]]) -> None:
        self.references = references
        self._by_file: dict[str, list[str]] = {}
        for path, refs in references.items():
            for file in {ref.partition("#")[0].strip() for ref in refs}:
                self._by_file.setdefault(file, []).append(path)
        self._anchors: dict[str, dict[str, set[str]]] = {}

    def bound_to(self, file: str, canonical: str) -> set[str]:
        anchors = self._anchors.get(file)
        if anchors is None:
            anchors = {}
            for path in self._by_file.get(file, ()):
                for written in self.references[path]:
                    parsed = parse_reference(written)
                    if not isinstance(parsed, Failure):
                        anchors.setdefault(parsed.canonical(), set()).add(path)
            self._anchors[file] = anchors
        return anchors.get(canonical, set())


# The last `references` seen, worked out: a kept index hands the same mapping to every
# search until a memory changes.
_last: _Named | None = None


def _named(references: Mapping[str, Sequence[str]]) -> _Named:
    global _last
    named = _last
    if named is None or named.references is not references:
        named = _last = _Named(references)
    return named


def _outgoing(related: Related) -> Related:
    return Related(tuple(link for link in related.links if link.direction == TO), related.cobound)


def did_you_mean(target: str, known: Collection[str]) -> str | None:
    """The existing memory a mistyped link most likely meant: the same file name in
    another folder, the name without `.md`, else the closest spelling."""
    if target + ".md" in known:
        return target + ".md"
    name = posixpath.basename(target)
    same_name = sorted(p for p in known if posixpath.basename(p) in (name, name + ".md"))
    if len(same_name) == 1:
        return same_name[0]
    import difflib  # only for a link to no memory

    close = difflib.get_close_matches(target, sorted(known), n=1, cutoff=0.6)
    return close[0] if close else None


def findings(
    memory: LoadedMemory,
    reports: Mapping[str, MemoryReport],
    is_memory: Callable[[str], bool],
    known: Callable[[], Collection[str]],
) -> list[LinkFinding]:
    """What a memory's links call for: each `contradicts` of a memory whose state is
    current (known only when that memory was evaluated beside it: in `reports`), each link
    to a memory that is not one (`is_memory`, asked only of a target not evaluated;
    `known()`, every memory path, only for the did-you-mean of one that is not)."""
    own = reports.get(memory.path)
    if memory.memory is None or (own is not None and own.state == State.RETIRED):
        return []
    found: list[LinkFinding] = []
    for relation, written, line, column in memory.memory.link_places:
        target = target_path(written)
        other = reports.get(target)
        if other is not None:
            if relation == CONTRADICTS and other.state == State.CURRENT:
                found.append(
                    LinkFinding(
                        "contradicts_current",
                        relation,
                        target,
                        f"contradicts {target}, which is current: one of the two is wrong — "
                        f"settle it (edit one, `moor supersede` the wrong one) or drop the link",
                        line,
                        column,
                    )
                )
            continue
        if is_memory(target):
            continue
        suggestion = did_you_mean(target, known())
        hint = f" — did you mean {suggestion}?" if suggestion else ""
        found.append(
            LinkFinding(
                "missing_link",
                relation,
                target,
                f"links ({relation}) to {target}, which is not a memory{hint}",
                line,
                column,
                suggestion,
            )
        )
    return found


def annotate(
    reports: Mapping[str, MemoryReport],
    loaded: Mapping[str, LoadedMemory],
    is_memory: Callable[[str], bool],
    known: Callable[[], Collection[str]],
) -> dict[str, MemoryReport]:
    """The reports (by path) whose link findings changed, each replaced by a copy carrying
    the new ones (reports are shared with earlier snapshots, so none is changed in place).
    Only memories that write `links:` can have findings: the rest are not looked at, so the
    editor pays for this per refresh in proportion to the links, not the memories."""
    paths: list[Collection[str]] = []

    def known_once() -> Collection[str]:
        if not paths:
            paths.append(frozenset(known()))
        return paths[0]

    changed: dict[str, MemoryReport] = {}
    for path, memory in loaded.items():
        report = reports.get(path)
        if report is None or memory.memory is None or not memory.memory.link_places:
            continue
        new = findings(memory, reports, is_memory, known_once)
        if new != report.link_findings:
            changed[path] = replace(report, link_findings=new)
    return changed
