"""Observe every anchor of the chosen memories, compare with moor.lock, journal what moved.

One pass for the whole workspace: references are resolved and refused before any read,
each anchor (canonical reference) is observed once however many memories share it, and
trust states are derived from the lock — so a fresh clone with no journal gets them right.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from moor_extractors.languages import language_for_path
from moor_extractors.memory import Memory, effective_watch
from moor_extractors.model import Failure, Reason
from moor_extractors.reference import Reference
from moor_store.inside import stat_many_inside
from moor_store.journal import Journal, NewEntry
from moor_store.lockfile import Closure, Lock, LockedAnchor, LockedMemory

from moor_engine.anchors.attempts import attempt_entry, journals_attempt
from moor_engine.anchors.code_rules import generated
from moor_engine.anchors.machine import (
    closure_report,
    command_entries,
    command_report,
    is_custom,
    terminal_closure,
)
from moor_engine.anchors.transition import transition
from moor_engine.grounding.aliases import alias_target
from moor_engine.grounding.bound_code import bound_code
from moor_engine.grounding.dependents import Dependents
from moor_engine.grounding.derivation_standing import Standing, standing
from moor_engine.grounding.derivations import Translation, translate
from moor_engine.grounding.links import annotate
from moor_engine.grounding.memories import (
    LoadedMemory,
    ResolvedEntry,
    canonical_lock,
    load_memories,
    loaded_lock_content,
)
from moor_engine.grounding.observe import (
    FileObserver,
    FileView,
    Found,
    NotFound,
    Observation,
    found_address,
)
from moor_engine.grounding.relocation_result import Relocation, Search
from moor_engine.grounding.trust import AnchorReport, MemoryReport, Report, State, worst
from moor_engine.memory.latch import Event, Latches, declared, read_latches
from moor_engine.memory.retired_text import saying, superseded_values
from moor_engine.workspace.workspace import Workspace

if TYPE_CHECKING:
    from moor_engine.grounding.definition_index import Indexes
    from moor_engine.grounding.relocation_memo import RelocationMemo

Progress = Callable[[int, int], None]


@dataclass
class Evaluation:
    """Everything one check learnt, for reports and for the actions built on it."""

    report: Report
    loaded: dict[str, LoadedMemory]
    observations: dict[str, Observation]
    relocations: dict[str, Search] = field(default_factory=dict)
    # Anchors of an older derivation: their bound code under today's normaliser, the
    # baseline they were compared with and the one a re-baseline writes.
    translations: dict[str, Translation] = field(default_factory=dict)

    def dependents(self) -> Dependents:
        """Which memories depend on which files, by this evaluation's memories."""
        return Dependents.of(self.loaded)


def locked_anchor_from(ref: Reference, found: Found) -> LockedAnchor:
    return LockedAnchor(
        ref=ref.canonical(),
        address=found.address,
        derivation=found.derivation,
        kind=found.facts.kind,
        axes=dict(found.facts.axes),
    )


class Checker:
    def __init__(
        self,
        workspace: Workspace,
        lock: Lock,
        journal: Journal | None,
        observer: FileObserver,
    ) -> None:
        self.workspace = workspace
        self.lock = lock
        self.journal = journal
        self.observer = observer
        self.snapshots = journal  # where the bound code's sealed source is looked up
        self._relocations: dict[str, Search] = {}
        self._translations: dict[str, Translation | None] = {}
        self._bound: dict[str, set[str]] = {}
        self._bound_of: Lock | None = None  # the lock `_bound` was read from
        self._indexes: Indexes | None = None
        self.latch_journal = journal  # where this clone's latch events are read
        # What each memory read declares it supersedes (by declaring memory's path).
        self.supersedes: dict[str, tuple[str, ...]] = {}
        self._declared: tuple[dict[str, tuple[str, ...]], dict[str, Event]] | None = None
        self._latches: Latches | None = None
        self._latches_of: Lock | None = None
        self._superseded: tuple[Latches, dict[str, list[Event]]] | None = None
        self._memo: RelocationMemo | None = None

    # The search for vanished code (its index, its memo, relocate, suggest, change) is
    # imported and built when a check first needs it: a check or recall where every anchor
    # is found never pays for it (memories/lazy-imports-keep-startup-cheap.md).
    @property
    def indexes(self) -> Indexes:
        """Where vanished code may be."""
        if self._indexes is None:
            from moor_engine.grounding.definition_index import Indexes

            self._indexes = Indexes(self.workspace, self.observer)
        return self._indexes

    @property
    def memo(self) -> RelocationMemo:
        if self._memo is None:
            from moor_engine.grounding.relocation_memo import RelocationMemo

            self._memo = RelocationMemo(self.observer, self.indexes, repr(self.workspace.config))
        return self._memo

    @property
    def lock(self) -> Lock:
        return self._lock

    @lock.setter
    def lock(self, lock: Lock) -> None:
        self._lock = canonical_lock(lock)

    def latches(self) -> Latches:
        """The latches in force (moor_engine.memory.latch), read once per lock and refresh."""
        if self._latches is None or self._latches_of is not self.lock:
            self._latches = read_latches(self.lock, self.latch_journal)
            self._latches_of = self.lock
        return self._latches

    def refresh_latches(self, loaded: Iterable[LoadedMemory] | None = None) -> None:
        """Read the latches again (the journal may hold new events); with `loaded`, what
        those memories declare replaces what was known."""
        self._latches = None
        if loaded is not None:
            self.supersedes = {m.path: m.memory.supersedes for m in loaded if m.memory}

    def retirement(self, path: str) -> Event | None:
        """Why the memory at `path` is retired (None: it is not)."""
        return self.latches().retired.get(path) or self.declared().get(path)

    def superseded_text(self, path: str, memory: Memory) -> Event | None:
        """The retirement of a superseded memory whose text `memory` says again (written
        by hand: a write through moor is refused, `retired_text.py`); read once per state
        of the latches."""
        latches = self.latches()
        if not latches.retired or not memory.value:
            return None
        if self._superseded is None or self._superseded[0] is not latches:
            values = superseded_values(self.workspace, self.latch_journal, latches)
            self._superseded = (latches, values)
        return saying(self._superseded[1], path, memory)

    def declared(self) -> dict[str, Event]:
        """What the loaded memories declare (`latch.declared`), derived once per map: asked
        for every memory, deriving it each time made a check quadratic in the memories."""
        if self._declared is None or self._declared[0] is not self.supersedes:
            self._declared = (self.supersedes, declared(self.supersedes))
        return self._declared[1]

    def evaluate(self, paths: Iterable[str], progress: Progress | None = None) -> Evaluation:
        paths = list(paths)
        loaded = load_memories(self.workspace, paths, self.journal)
        self.refresh_latches(loaded.values())
        if progress is not None:
            progress(len(paths), 2 * len(paths))
        refs: dict[str, Reference] = {}
        for memory in loaded.values():
            for item in memory.entries:
                if item.ref is not None:
                    refs.setdefault(item.ref.canonical(), item.ref)
        self.observer.preload(ref.path for ref in refs.values() if ref.path is not None)
        observations: dict[str, Observation] = {}
        for index, (canonical, ref) in enumerate(refs.items()):
            observations[canonical] = self.observe(ref)
            if progress is not None and index % 64 == 0:
                progress(len(paths) + index * len(paths) // max(len(refs), 1), 2 * len(paths))
        reports = [self.memory_report(loaded[path], observations) for path in paths]
        by_path = {report.path: report for report in reports}
        annotated = annotate(by_path, loaded, self.is_memory, self.workspace.memory_paths)
        reports = [annotated.get(report.path, report) for report in reports]
        translations = {k: t for k, t in self._translations.items() if t is not None}
        return Evaluation(Report(reports), loaded, observations, self._relocations, translations)

    def is_memory(self, path: str) -> bool:
        """Whether `path` is a memory file of the workspace (a link's target not evaluated
        with the rest: a stat of it alone, never a walk of every memory)."""
        if not path or "\0" in path or not self.workspace.is_memory_path(path):
            return False  # a NUL names no file (and the OS refuses it with ValueError)
        found = stat_many_inside(self.workspace.root, [path])[path]
        return not isinstance(found, OSError) and stat.S_ISREG(found.st_mode)

    def observe(self, ref: Reference) -> Observation:
        if ref.path is None:
            closure = self.closure(ref.canonical())
            if closure is not None:  # closed for good: its command runs no more
                return Failure(Reason.UNEVALUABLE, *closure_report(closure))
            return self.observer.observe(ref)  # a custom anchor (moor_engine.anchors)
        return self.observer.observe(ref, self._bound_addresses().get(ref.canonical(), ()))

    def closure(self, canonical: str) -> Closure | None:
        """How a custom anchor was closed: in moor.lock, or by a terminal state this
        clone's journal saw (anchors.machine.terminal_closure)."""
        closed = self.lock.closed.get(canonical)
        return closed if closed is not None else terminal_closure(self.journal, canonical)

    def _bound_addresses(self) -> dict[str, set[str]]:
        """Every address moor.lock binds each anchor to (in any memory): what an observation
        near a syntax error is believed for (`FileObserver.observe`)."""
        if self._bound_of is not self.lock:
            self._bound, self._bound_of = bound_addresses(self.lock), self.lock
        return self._bound

    def forget_relocation(self, canonical: str) -> None:
        """Look for this anchor's code elsewhere again on the next report (code changed)."""
        self._relocations.pop(canonical, None)
        if self._indexes is not None:
            self._indexes.stale()

    def relocation(self, ref: Reference, locked: LockedAnchor) -> Search:
        key = ref.canonical()
        if key not in self._relocations:
            from moor_engine.grounding.places import bound_outline
            from moor_engine.grounding.relocate import relocate

            def snapshot() -> str | None:
                found = bound_code(self.workspace, self.snapshots, key, locked)
                return found.text if found is not None else None

            def outline() -> list[str] | None:
                return bound_outline(self.workspace, self.snapshots, key, locked)

            search = self.memo.recall(ref, locked)
            if search is None:
                search = relocate(
                    self.workspace, self.observer, ref, locked, snapshot, self.indexes, outline
                )
                self.memo.keep(ref, locked, search)
            self._relocations[key] = search
        return self._relocations[key]

    def memory_report(
        self, loaded: LoadedMemory, observations: dict[str, Observation]
    ) -> MemoryReport:
        if loaded.memory is None:
            first = loaded.problems[0] if loaded.problems else None
            return MemoryReport(
                path=loaded.path,
                state=State.INVALID,
                notes=[loaded.read_error]
                if loaded.read_error
                else [p.message for p in loaded.problems],
                line=first.line if first else 1,
                column=first.column if first else 1,
                code=first.code if first else (loaded.read_code or "unreadable"),
            )
        memory = loaded.memory
        locked_memory = self.lock.memories.get(loaded.path)
        report = MemoryReport(path=loaded.path, state=State.CURRENT, title=memory.title)
        report.line = max(memory.about_line, 1)
        states: list[State] = []
        if not memory.about:
            states.append(State.UNGROUNDED)
            report.code = "ungrounded"
            report.notes.append("no `about:` references: nothing ties this memory to code")
        for item in loaded.entries:
            anchor = self._anchor_report(
                item, memory_watch(loaded, item), locked_memory, observations
            )
            report.anchors.append(anchor)
            states.append(anchor.state)
        retirement = self.retirement(loaded.path)
        tombstone = self.latches().tombstone(memory.value)
        said = self.superseded_text(loaded.path, memory) if retirement is None else None
        if tombstone is not None:
            said = None
        if (
            locked_memory is None
            and memory.about
            and retirement is None
            and tombstone is None
            and said is None
        ):
            # Not for retired text: binding it would not bring it back, `restore` does.
            report.notes.append("not in moor.lock yet: run `moor bind`")
        elif locked_memory is not None and locked_memory.content != loaded_lock_content(
            self.workspace, loaded, locked_memory.anchors
        ):
            states.append(State.REWRITTEN)
            report.code = "rewritten"
            report.notes.append(
                "the memory's text changed since it was bound: re-read it, then "
                f"`moor reaffirm {loaded.path} --why ...`"
            )
        if retirement is not None:
            states.append(State.RETIRED)
            report.code = "retired"
            report.notes.insert(
                0,
                f"retired: {retirement.describe()}; only `moor restore {loaded.path} --why "
                "...` brings it back",
            )
        if tombstone is not None:
            states.append(State.RETIRED)
            report.code = "tombstoned"
            report.notes.insert(
                0,
                f"this text was {tombstone.describe()}: it is kept out of recall; delete "
                f"this file, or `moor restore {tombstone.path} --why ...` to bring it back",
            )
        if said is not None:
            states.append(State.RETIRED)
            report.code = "superseded_text"
            report.notes.insert(
                0,
                f"this text is what {said.path} said, {said.describe()}: it is kept out of "
                f"recall; delete this file, or `moor restore {said.path} --why ...` to bring "
                "it back",
            )
        report.state = worst(states)
        return report

    def _anchor_report(
        self,
        item: ResolvedEntry,
        watch: tuple[str, ...],
        locked_memory: LockedMemory | None,
        observations: dict[str, Observation],
    ) -> AnchorReport:
        entry = item.entry
        report = AnchorReport(
            ref=entry.raw,
            state=State.CURRENT,
            line=entry.line,
            column=entry.column,
            end_line=entry.end_line,
            end_column=entry.end_column,
        )
        if item.ref is None:
            problem = item.problem
            report.state = State.INVALID
            if problem is not None:
                report.reason, report.code, report.detail = (
                    problem.reason.value,
                    problem.code,
                    problem.detail,
                )
            return report
        canonical = item.ref.canonical()
        report.canonical = canonical
        observation = observations[canonical]
        locked = locked_memory.anchors.get(canonical) if locked_memory is not None else None
        report.bound_address = locked.address if locked else None
        closure = self.closure(canonical) if item.ref.anchor is not None else None
        if closure is not None:
            report.state = State.RETIRED
            report.code, report.detail = closure_report(closure)
            return report
        if isinstance(observation, Failure):
            report.state = State.UNVERIFIED
            report.reason = observation.reason.value
            report.code = observation.code
            report.detail = observation.detail
            return report
        if item.ref.anchor is not None:
            declaration = self.workspace.config.anchors.get(item.ref.anchor)
            return command_report(report, declaration, observation, locked, self.journal)
        report.address = observation.address
        if isinstance(observation, NotFound):
            search = self.relocation(item.ref, locked) if locked is not None else Search()
            relocation = search.relocation
            if relocation is None:
                report.state = State.GONE
                report.code = "not_found"
                what = item.ref.symbol or "the file"
                report.detail = f"{what} no longer exists in {item.ref.path} or anywhere else"
                if locked is None:
                    report.detail = f"{canonical} does not exist"
                    from moor_engine.grounding.suggest import suggestions

                    report.suggestions = suggestions(self.workspace, self.observer, item.ref)
                    if report.suggestions:
                        report.detail += f"; did you mean {', '.join(report.suggestions)}?"
                if search.candidates:
                    report.candidates = list(search.candidates)
                    perhaps = ", ".join(c.describe() for c in search.candidates)
                    report.detail = (
                        f"{what} no longer exists in {item.ref.path}; perhaps now {perhaps}"
                    )
                    if search.why:
                        report.detail += f" ({search.why})"
                return report
            report.state = State.MOVED
            report.code = relocation.how
            report.moved_to = relocation.ref.canonical()
            report.axes, note = self._moved_axes(relocation, locked, watch)
            report.detail = f"{relocation.how}: now {report.moved_to}{_also(report.axes)}{note}"
            return report
        if locked is None:
            report.state = State.UNBOUND
            report.code = "unbound"
            report.detail = "not bound yet: run `moor bind`"
            return report
        bound = locked
        if locked.derivation != observation.derivation:
            baseline = self._baseline(canonical, locked, observation, report)
            if baseline is None:
                return report
            locked = baseline
        alias = alias_target(self.observer, observation, locked)
        if alias is not None:
            report.state = State.MOVED
            report.code = "renamed"
            report.moved_to = alias.canonical()
            report.axes, note = self._moved_axes(Relocation(alias, "renamed"), locked, watch)
            report.detail = (
                f"renamed: now {report.moved_to} ({item.ref.symbol} is an alias of it)"
                f"{_also(report.axes)}{note}"
            )
            return report
        # What is code-specific was settled above (relocation, re-baseline, alias): the
        # facts now go through the one transition every anchor takes.
        moved = transition(generated(watch), observation.facts.axes, locked.axes)
        if moved is not None:
            report.state = State.DRIFTED
            report.axes = moved.axes
            report.code = "drifted"
            what = item.ref.symbol or item.ref.path or canonical
            report.detail = f"{', '.join(moved.axes)} changed in {what} since it was bound"
            change = self._what_changed(canonical, bound, observation)
            if change is not None:
                report.change = change
                report.detail += f": {change}"
        return report

    def _what_changed(self, canonical: str, locked: LockedAnchor, found: Found) -> str | None:
        """A drift said in a line (`Optional[Scope]` → `Scope | None`), so a reviewer can
        reaffirm at a glance; None when the bound code is not recoverable here."""
        language = language_for_path(found.path)
        if language is None:
            return None
        before = bound_code(self.workspace, self.snapshots, canonical, locked)
        view = self.observer.view(found.path)
        if before is None or not isinstance(view, FileView):
            return None
        try:
            after = view.source_text(found.site)
        except (OSError, UnicodeDecodeError):
            return None
        from moor_extractors.change import change_summary

        return change_summary(language, before.text, after)

    def _baseline(
        self, canonical: str, locked: LockedAnchor, found: Found, report: AnchorReport
    ) -> LockedAnchor | None:
        """What an anchor bound by another derivation is compared with (derivations.py):
        its bound code under today's normaliser; None when nothing can be compared (the
        report then says why)."""
        how = standing(locked.derivation, found.derivation)
        if how in (Standing.NEWER, Standing.UNKNOWN):
            report.state = State.UNVERIFIED
            report.code = "lock_from_newer_moor" if how == Standing.NEWER else "unknown_derivation"
            report.detail = (
                f"bound by {locked.derivation!r}, which this moor ({found.derivation!r}) "
                + (
                    "does not have: a newer moor wrote moor.lock; upgrade moor"
                    if how == Standing.NEWER
                    else "does not know: nothing is compared and nothing re-baselined"
                )
            )
            return None
        translation = self.translation(canonical, locked, found)
        if translation is None:
            report.state = State.UNVERIFIED
            report.code = "older_derivation_unverifiable"
            report.detail = (
                f"bound by an older normaliser ({locked.derivation!r}) and the bound code is "
                "neither in this clone's journal nor in git history, so whether it changed "
                "cannot be told: read the code, then `moor reaffirm --why`"
            )
            return None
        report.code = "rebaselined"
        report.detail = (
            f"re-baselined: derivation {locked.derivation!r} -> {found.derivation!r} "
            f"(bound code from {translation.origin})"
        )
        return replace(
            locked,
            derivation=found.derivation,
            kind=translation.facts.kind,
            axes=dict(translation.facts.axes),
        )

    def translation(self, canonical: str, locked: LockedAnchor, found: Found) -> Translation | None:
        """The bound code of `locked` (an older derivation) under today's normaliser, put
        in the context of `found` (its code now, wherever it is); cached per anchor."""
        if standing(locked.derivation, found.derivation) != Standing.OLDER:
            return None
        if canonical not in self._translations:
            view = self.observer.view(found.path)
            self._translations[canonical] = (
                translate(self.workspace, self.snapshots, canonical, locked, found, view.source())
                if isinstance(view, FileView)
                else None
            )
        return self._translations[canonical]

    def _moved_axes(
        self, relocation: Relocation, locked: LockedAnchor | None, watch: tuple[str, ...]
    ) -> tuple[list[str], str]:
        """The watched axes that differ between the bound code and its new place — every
        one of them: the name is no axis (a signature leaves it out), so a rename with a
        changed default, or a move with a changed body, shows what changed. Also a note
        when the two cannot be compared."""
        if locked is None:
            return [], ""
        observation = self.observer.observe(relocation.ref)
        if not isinstance(observation, Found):
            return [], ""
        bound = locked.axes
        if observation.derivation != locked.derivation:
            translation = self.translation(locked.ref, locked, observation)
            if translation is None:
                return [], (
                    f"; bound by another normaliser ({locked.derivation}) and its bound code "
                    "is not recoverable, so what changed on the way cannot be compared: "
                    "`moor diff` shows the code"
                )
            bound = translation.facts.axes
        moved = transition(generated(watch), observation.facts.axes, bound)
        return (moved.axes if moved is not None else []), ""


def bound_addresses(lock: Lock) -> dict[str, set[str]]:
    """`Checker._bound_addresses` of `lock`, made once per lock: a lock parsed once is read
    by every session while moor.lock's bytes are the same (`session._parse_lock`), and this
    walk of every anchor was most of a recall's check at 10,000 memories. Read-only."""
    global _last_bound
    last = _last_bound
    if last is not None and last[0] is lock:
        return last[1]
    addresses: dict[str, set[str]] = {}
    for memory in lock.memories.values():
        for canonical, locked in memory.anchors.items():
            addresses.setdefault(canonical, set()).add(locked.address)
    _last_bound = (lock, addresses)
    return addresses


_last_bound: tuple[Lock, dict[str, set[str]]] | None = None


def _also(axes: list[str]) -> str:
    """What changed on the way, for a moved anchor's detail: the move and the change are
    both news to a reader, and `moved` alone reads as "same code, new place"."""
    return f", and its {' and '.join(axes)} changed" if axes else ""


def memory_watch(loaded: LoadedMemory, item: ResolvedEntry) -> tuple[str, ...]:
    assert loaded.memory is not None
    return effective_watch(loaded.memory, item.entry)


def observation_entries(
    journal: Journal,
    evaluation: Evaluation,
    lock: Lock,
    changed: set[str],
    fresh_commands: set[str] | None = None,
) -> list[NewEntry]:
    """What this check saw, as journal entries (not yet appended); `fresh_commands`: the
    command anchors looked at anew (None: every one observed)."""
    bound: dict[str, LockedAnchor] = {}
    for memory in canonical_lock(lock).memories.values():
        for canonical, locked in memory.anchors.items():
            bound.setdefault(canonical, locked)
    states: dict[str, AnchorReport] = {}
    for memory_report in evaluation.report.memories:
        for anchor in memory_report.anchors:
            if anchor.canonical is not None:
                states.setdefault(anchor.canonical, anchor)
    keys = [key for key in evaluation.observations if key in bound and not is_custom(key)]
    looks = journal.last_looks(keys)
    # A closed anchor is not looked at any more: nothing of it to journal.
    looked = {
        k: v
        for k, v in evaluation.observations.items()
        if k not in lock.closed and (fresh_commands is None or k in fresh_commands)
    }
    entries = command_entries(journal, looked, bound, states)
    for key in keys:
        observation = evaluation.observations[key]
        previous = looks.get(key)
        last_address = previous.address if previous is not None else None
        if previous is None:
            entries.append(
                NewEntry(
                    "open",
                    key,
                    address=bound[key].address,
                    code="lock",
                    detail="first seen in this clone: bound state taken from moor.lock",
                )
            )
            last_address = bound[key].address
        if isinstance(observation, Failure):
            if journals_attempt(key, observation.code, previous):
                entries.append(
                    attempt_entry(
                        key, observation.reason.value, observation.code, observation.detail
                    )
                )
            continue
        seen = states.get(key)
        translation = evaluation.translations.get(key)
        if translation is not None and isinstance(observation, Found):
            # Bound by an older normaliser: the baseline it is compared with from now on.
            translated = found_address(observation.derivation, translation.facts)
            entries.append(
                NewEntry(
                    "revise",
                    key,
                    address=translated,
                    previous=bound[key].address,
                    code="reprobe",
                    detail=seen.detail if seen else None,
                    data={"old_derivation": bound[key].derivation, "origin": translation.origin},
                )
            )
            last_address = translated
        if observation.address != last_address:
            entries.append(
                NewEntry(
                    "transition",
                    key,
                    address=observation.address,
                    previous=last_address,
                    code=seen.state.value if seen else None,
                    detail=seen.detail if seen else None,
                    data={"axes": seen.axes, "moved_to": seen.moved_to} if seen else None,
                )
            )
        elif (isinstance(observation, Found) and observation.path in changed) or (
            previous is not None and previous.kind == "attempt"
        ):
            # The file's bytes changed (or the last look failed) and the anchor held.
            entries.append(NewEntry("still", key, address=observation.address))
    return entries


def translated_anchor(old: LockedAnchor, derivation: str, translation: Translation) -> LockedAnchor:
    facts = translation.facts
    return replace(
        old,
        address=found_address(derivation, facts),
        derivation=derivation,
        kind=facts.kind,
        axes=dict(facts.axes),
    )


def rebaseline(lock: Lock, evaluation: Evaluation) -> tuple[Lock, int]:
    """Adopt new derivations for anchors whose normaliser changed (never reported as drift)."""
    lock = canonical_lock(lock)
    memories = dict(lock.memories)
    count = 0
    for memory_report in evaluation.report.memories:
        locked_memory = memories.get(memory_report.path)
        if locked_memory is None:
            continue
        rebased = [a for a in memory_report.anchors if a.canonical in evaluation.translations]
        if not rebased:
            continue
        anchors = dict(locked_memory.anchors)
        for anchor in rebased:
            assert anchor.canonical is not None
            observation = evaluation.observations.get(anchor.canonical)
            if isinstance(observation, Found) and anchor.canonical in anchors:
                # The bound code under today's normaliser, not the code as it is now: drift
                # since binding stays drift after the upgrade.
                anchors[anchor.canonical] = translated_anchor(
                    anchors[anchor.canonical],
                    observation.derivation,
                    evaluation.translations[anchor.canonical],
                )
                count += 1
        memories[memory_report.path] = replace(locked_memory, anchors=anchors)
    return replace(lock, memories=memories), count
