"""The built-in probes: observe a file or a symbol, with a persistent parse cache.

A file is read only when its stat changed, and parsed only when its bytes changed
(content hash); what was learnt is kept in the journal database's cache table, so a warm
check reads and parses nothing. Every way an observation can fail is a `Failure` with a
reason class and code (docs/memories.md, *Failures are never drift*) — never a guess that
the code changed.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import textwrap
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import moor_extractors as extractors_package
from moor_extractors.digest import digest_bytes, digest_json, digest_tokens
from moor_extractors.languages import language_for_path
from moor_extractors.model import DefinitionSite, Facts, Failure, Reason
from moor_extractors.reference import Reference, parse_reference
from moor_extractors.resolve import Ambiguous, Group, Named, group_of, member_symbol, resolve
from moor_extractors.symbols import (
    NORMALISER_VERSION,
    ErrorRegion,
    ParsedFile,
    file_facts,
    parse_source,
    spec_for,
    split_qualified,
)
from moor_store.inside import NotInside, read_inside, stat_inside
from moor_store.journal import CachedFile, Journal
from moor_store.own_files import read_own_sources

from moor_engine.workspace.filestat import RACY_WINDOW_NS, StatKey, stat_key, stored, unstatted

PROBE_VERSION = 1


@cache
def cache_derivation() -> str:
    """The parse cache's key: the probe and normaliser versions and a digest of the
    extractors' own source. A change to how definitions are listed or normalised (a query
    supplement, a dialect) then never serves facts or sites computed by the code before
    it, whether or not someone remembered to bump a version (`NORMALISER_VERSION` still
    decides what moor.lock re-baselines)."""
    package = Path(extractors_package.__file__ or "").parent
    source = read_own_sources(sorted(package.glob("*.py")))
    return f"parse/{PROBE_VERSION} norm/{NORMALISER_VERSION} src/{digest_bytes(source)[:16]}"


# A file that changed just now is observed once its last write is this old (`_settle`):
# the gaps between the writes of one save (truncate, then write; a write in chunks).
SETTLE_QUIET_NS = 50_000_000
SETTLE_STEP_NS = 10_000_000
# How long an observation waits for a changing file to settle before it gives up.
SETTLE_BUDGET_S = 0.5
# Addresses remembered by facts key, at most (then forgotten all at once).
_ADDRESS_MEMO = 200_000
# How much of a file is looked at for NUL bytes before calling it binary.
_BINARY_SNIFF = 8192


@dataclass(frozen=True, slots=True)
class Found:
    """Code a reference names, as observed now: its facts and their address."""

    path: str
    derivation: str
    facts: Facts
    address: str
    site: DefinitionSite | None  # None for a whole-file reference


@dataclass(frozen=True, slots=True)
class NotFound:
    """A reference whose code is not there now (its file is; the definition is not)."""

    path: str
    derivation: str
    address: str


Observation = Found | NotFound | Failure


def derivation_for(ref: Reference, language: str | None) -> str:
    probe = "symbol" if ref.symbol is not None else "file"
    return f"{probe}/{PROBE_VERSION} norm/{NORMALISER_VERSION} {language or 'text'}"


def found_address(derivation: str, facts: Facts) -> str:
    return digest_json(
        {
            "derivation": derivation,
            "found": True,
            "facts": {"kind": facts.kind, "axes": dict(facts.axes)},
        }
    )


def not_found_address(derivation: str) -> str:
    return digest_json({"derivation": derivation, "found": False})


class FileView:
    """One file as seen in this run: its definition sites and the facts computed so far."""

    def __init__(
        self,
        rel: str,
        root: Path,
        stat_key: StatKey,
        sha: str,
        language: str | None,
        payload: dict[str, object] | None,
        source: bytes | None,
        reuse: dict[str, Facts] | None = None,
    ) -> None:
        self.rel = rel
        self.root = root
        self.stat_key = stat_key
        self.sha = sha
        self.language = language
        self._source = source
        self._parsed: ParsedFile | None = None
        self._sites: tuple[DefinitionSite, ...] | None = None
        self._by_name: dict[str, list[int]] | None = None
        self._facts: dict[int, Facts] = {}
        # The cached facts as stored, made into `Facts` when first asked for: a warm check
        # of one definition in a file of thousands builds one.
        self._stored_facts: dict[str, list[object]] = {}
        self._keys: dict[int, str] = {}  # site index -> `ParsedFile.facts_key`
        self._reuse = reuse or {}  # facts_key -> facts, from an earlier version of the file
        self._earlier: ParsedFile | None = None  # a parse of that version, to re-parse from
        self._file_facts: Facts | None = None
        self._groups: dict[str, Group] = {}  # qualified name -> what its namesakes are
        self._regions: tuple[ErrorRegion, ...] | None = None  # `ParsedFile.error_regions`
        self.parse_count = 0
        self.normalised = 0  # definitions normalised here (not known from a cache)
        self.overlay = False  # made from an editor's unsaved buffer: never cached
        self.dirty = payload is None
        if payload is not None:
            self._load(payload)

    def _load(self, payload: dict[str, object]) -> None:
        sites = payload.get("sites")
        if isinstance(sites, list):
            self._sites = tuple(
                DefinitionSite(str(q), str(k), int(a), int(b), int(c), int(d), bool(e))
                for q, k, a, b, c, d, e in sites
            )
        facts = payload.get("facts")
        if isinstance(facts, dict):
            self._stored_facts = facts
        keys = payload.get("keys")
        if isinstance(keys, dict):
            self._keys = {int(index): str(key) for index, key in keys.items()}
        whole = payload.get("file")
        if isinstance(whole, list):
            self._file_facts = Facts(kind=whole[0], axes=whole[1])
        regions = payload.get("regions")
        if isinstance(regions, list):
            self._regions = tuple(
                ErrorRegion(int(a), int(b), int(c), int(d)) for a, b, c, d in regions
            )
        groups = payload.get("groups")
        if isinstance(groups, dict):
            self._groups = {
                str(qname): Group(
                    bool(entry[0]), tuple(entry[1]), tuple(entry[2]) if entry[2:] else None
                )
                for qname, entry in groups.items()
            }

    def payload(self) -> str:
        return json.dumps(
            {
                "sites": None
                if self._sites is None
                else [
                    [s.qname, s.kind, s.line, s.end_line, s.start_byte, s.end_byte, s.has_error]
                    for s in self._sites
                ],
                "facts": {str(i): [f.kind, dict(f.axes)] for i, f in self._every_fact().items()},
                "keys": {str(i): key for i, key in self._keys.items()},
                "file": None
                if self._file_facts is None
                else [self._file_facts.kind, dict(self._file_facts.axes)],
                "groups": {
                    qname: [
                        group.together,
                        list(group.spellings),
                        *([list(group.bare)] if group.bare is not None else []),
                    ]
                    for qname, group in self._groups.items()
                },
                **(
                    {"regions": [[r.start, r.end, r.line, r.error] for r in self._regions]}
                    if self._regions is not None
                    else {}
                ),
            },
            separators=(",", ":"),
        )

    def adopt(self, stat_key: StatKey, data: bytes) -> None:
        """The file was read again and its bytes are the ones this view describes."""
        self.stat_key = stat_key
        self._source = data
        self.overlay = False
        self.dirty = True  # remember the new stat

    def held_source(self) -> bytes | None:
        """The bytes this view was made from, when it still holds them (never read again:
        bytes read now may be newer than what the view describes)."""
        return self._source

    def source(self) -> bytes:
        """The file's bytes, read now if the view was made from the cache: inside the
        workspace only, never blocking (NotInside, an OSError, when that fails). A file
        now larger than the view's stat is not the file the view describes."""
        if self._source is None:
            try:
                self._source = read_inside(self.root, self.rel, limit=self.stat_key.size)
            except NotInside as error:
                if error.code != "too_large":
                    raise
                raise NotInside(
                    "changed_while_reading", f"{self.rel} changed while it was read", path=self.rel
                ) from error
        return self._source

    def parsed(self) -> ParsedFile:
        if self._parsed is None:
            if self.language is None:
                raise KeyError(self.rel)
            self._parsed = parse_source(self.language, self.source(), self._earlier)
            self._earlier = None
            self.parse_count += 1
        return self._parsed

    def sites(self) -> tuple[DefinitionSite, ...]:
        if self._sites is None:
            self._sites = self.parsed().sites()
            self.dirty = True
        return self._sites

    def error_regions(self) -> tuple[ErrorRegion, ...]:
        """What error recovery may have reshaped (`ParsedFile.error_regions`); empty when
        the file parses."""
        if self._regions is None:
            self._regions = self.parsed().error_regions()
            self.dirty = True
        return self._regions

    def error_reaching(self, site: DefinitionSite) -> ErrorRegion | None:
        """The first error region that can reshape a site (`ParsedFile.error_reaching`)."""
        if not self.error_regions():
            return None
        return self.parsed().error_reaching(site)

    def error_hiding(self, name: str) -> ErrorRegion | None:
        """The first error region that may hold a definition named `name` that recovery
        hid: one whose bytes spell the name, or one that runs to the end of the file (a
        file cut short — a save still being written — may be missing anything)."""
        source = self.source()
        word = re.compile(rb"(?<![\w$])" + re.escape(name.encode()) + rb"(?![\w$])")
        for region in self.error_regions():
            if region.end >= len(source.rstrip()) or word.search(source, region.start, region.end):
                return region
        return None

    def named(self, qname: str) -> list[int]:
        """Indexes of the sites with this qualified name (an index built once per file)."""
        if self._by_name is None:
            self._by_name = {}
            for index, site in enumerate(self.sites()):
                self._by_name.setdefault(site.qname, []).append(index)
        return self._by_name.get(qname, [])

    def _stored(self, index: int) -> Facts | None:
        stored = self._stored_facts.pop(str(index), None)
        if stored is None:
            return None
        kind, axes = stored
        # Interned: the lock holds the same digests for every current anchor (it interns
        # its own), and many axes share one (an empty docstring's).
        if isinstance(axes, dict):
            axes = {_interned(axis): _interned(digest) for axis, digest in axes.items()}
        facts = self._facts[index] = Facts(kind=_interned(kind), axes=axes)  # type: ignore[arg-type]
        return facts

    def _every_fact(self) -> dict[int, Facts]:
        for index in list(self._stored_facts):
            self._stored(int(index))
        return self._facts

    def facts_at(self, index: int) -> Facts:
        cached = self._facts.get(index) or self._stored(index)
        if cached is None:
            site = self.sites()[index]
            key = self.parsed().facts_key(site)
            cached = self._reuse.get(key)
            if cached is None:
                cached = self.parsed().facts(site)
                self.normalised += 1
            self._facts[index] = cached
            self._keys[index] = key
            self.dirty = True
        return cached

    def release_tree(self) -> None:
        """Forget the parse (a later edit re-parses from scratch); sites and facts stay."""
        if self._parsed is not None:
            self._sites = self.sites()
            self._parsed = None
        self._earlier = None

    def key_at(self, index: int) -> str | None:
        """The `facts_key` of a site whose facts are known."""
        return self._keys.get(index)

    def follows(self, earlier: FileView) -> None:
        """This view is a later version of `earlier`'s file: re-parse from its tree."""
        if earlier.language == self.language:
            self._earlier = earlier.latest_parse()

    def latest_parse(self) -> ParsedFile | None:
        return self._parsed or self._earlier

    def use_parse(self, parsed: ParsedFile, whole: Facts | None = None) -> None:
        """A parse of exactly this view's bytes, and maybe the whole file's facts, made ahead
        of time (`FileObserver.prepare`)."""
        if parsed.language == self.language:
            self._parsed, self._earlier = parsed, None
            self.parse_count += 1
        if whole is not None and self._file_facts is None:
            self._file_facts = whole
            self.dirty = True

    def known_facts(self) -> dict[str, Facts]:
        """The facts computed so far, by `facts_key`: what a later version of this file may
        reuse for definitions that did not change."""
        known = dict(self._reuse)
        facts = self._every_fact()
        known.update((key, facts[index]) for index, key in self._keys.items())
        return known

    def group(self, indexes: list[int]) -> Group:
        """What same-named definitions are (`moor_extractors.resolve.group_of`). Remembered
        in the cache so a warm check need not parse to know."""
        sites = self.sites()
        # Several names only for a Markdown breadcrumb suffix that more than one matches.
        qname = "\n".join(dict.fromkeys(sites[i].qname for i in indexes))
        found = self._groups.get(qname)
        if found is None or len(found.spellings) != len(indexes):
            assert self.language is not None
            found = group_of(spec_for(self.language), [sites[i] for i in indexes], self.parsed)
            self._groups[qname] = found
            self.dirty = True
        return found

    def together_facts(self, indexes: list[int]) -> tuple[DefinitionSite, Facts]:
        """One site spanning every definition of a symbol (its branches, accessors or
        overloads), and facts that move when any of them moves."""
        sites = [self.sites()[i] for i in indexes]
        facts = [self.facts_at(i) for i in indexes]
        first, last = sites[0], sites[-1]
        span = DefinitionSite(
            first.qname, first.kind, first.line, last.end_line, first.start_byte, last.end_byte
        )
        axes = {axis: digest_tokens(f.axes.get(axis, "") for f in facts) for axis in facts[0].axes}
        return span, Facts(kind=first.kind, axes=axes)

    def whole_file_facts(self) -> Facts:
        if self._file_facts is None:
            self._file_facts = file_facts(self.language, self.source(), self._parsed)
            self.dirty = True
        return self._file_facts

    def head(self, index: int) -> str:
        """The first line of a site's source (read only when a resolution needs it)."""
        site = self.sites()[index]
        source = self.source()
        end = source.find(b"\n", site.start_byte, site.end_byte)
        return source[site.start_byte : end if end >= 0 else site.end_byte].decode(
            "utf-8", "replace"
        )

    def source_text(self, site: DefinitionSite | None) -> str:
        """The definition's source, dedented as if it started its own file (for diffs)."""
        if site is None:
            return self.source().decode("utf-8")
        return definition_text(self.source(), site.start_byte, site.end_byte)


def definition_text(source: bytes, start: int, end: int) -> str:
    """The definition between bytes `start` and `end` of a file's source, dedented as if it
    started its own file."""
    line_start = source.rfind(b"\n", 0, start) + 1
    indent = source[line_start:start].decode("utf-8", "replace")
    text = source[start:end].decode("utf-8", "replace")
    if indent.strip():
        return text  # the definition shares its line with other code: leave it be
    return textwrap.dedent(indent + text)


class FileObserver:
    """Observes references inside one workspace, caching what it learns."""

    def __init__(self, root: Path, max_file_size: int, journal: Journal | None) -> None:
        self.root = root
        self.max_file_size = max_file_size
        self.journal = journal
        self._views: dict[str, FileView | Failure | None] = {}
        self._cache: dict[str, CachedFile] = {}
        self.reread: set[str] = set()  # files whose bytes were read in this run
        self.changed: set[str] = set()  # files whose bytes differ from the cached ones
        # Unsaved editor buffers, by workspace-relative path: observed instead of the file.
        self.overlays: dict[str, bytes] = {}
        # Views of buffers made by an earlier observer of this workspace in this thread
        # (`carry_overlays`).
        self._carried: dict[str, FileView] = {}
        # Files known to have changed since their view was made (see `forget`): their
        # earlier view, whose facts the new one may reuse.
        self._previous: dict[str, FileView | None] = {}
        self._addresses: dict[tuple[str, str], str] = {}  # see `_address`
        # See `prepare`: a parse of a file's bytes, and its whole-file facts if wanted.
        self._prepared: dict[str, tuple[ParsedFile, Facts | None]] = {}
        self.racy_window_ns = RACY_WINDOW_NS  # see `moor_engine.workspace.filestat.stored`
        self.settle_budget_s = SETTLE_BUDGET_S  # see `_settle`
        # How an `anchor:NAME` reference is observed (moor_engine.anchors.observer), set by
        # the session: the grounding layer knows no commands.
        self.commands: Callable[[Reference], Observation] | None = None

    def carry_overlays(self, views: dict[str, FileView]) -> None:
        """Views of the unsaved buffers an earlier observer of this workspace made, in the
        same thread (an editor's reads each open a session): one of exactly a buffer's
        bytes now is observed as it is, parsed once for every read of that version;
        another is the earlier version the buffer's new view re-parses from."""
        self._carried = {rel: view for rel, view in views.items() if view.root == self.root}

    def overlay_views(self) -> dict[str, FileView]:
        """The views of unsaved buffers made here, to carry to the next observer."""
        return {
            rel: view
            for rel, view in self._views.items()
            if rel in self.overlays and isinstance(view, FileView) and view.overlay
        }

    def forget(self, rels: Iterable[str]) -> None:
        """Files that changed (an editor saw them change): observe them afresh, from their
        bytes — never from a cached stat — reusing what is known of unchanged definitions."""
        for rel in rels:
            old = self._views.pop(rel, None)
            self._cache.pop(rel, None)
            if rel not in self._previous:
                self._previous[rel] = old if isinstance(old, FileView) else None

    def prepare(self, rel: str, symbols: Iterable[str] = (), whole: bool = False) -> bool:
        """Parse and list the definitions of `rel` as it is now (its unsaved buffer, if it
        has one) ahead of its observation, and normalise those of the definitions named
        `symbols` whose bytes are new (and the whole file, with `whole`). An editor sees a
        change and waits for others before it checks: this is done while it waits, and the
        observation after it only compares bytes (`_make_view`). True when a parse was
        prepared."""
        language = language_for_path(rel)
        if language is None:
            return False
        buffer = self.overlays.get(rel)
        data: bytes | Failure
        if buffer is not None:
            data = _usable(rel, buffer, self.max_file_size)
        else:
            # What `_make_view` will read, refused as it refuses (it says why; this need not).
            absolute = self.root / rel
            info = self._regular_file(rel, absolute)
            if not isinstance(info, os.stat_result) or info.st_size > self.max_file_size:
                return False
            data = self._read(rel, absolute)
        if isinstance(data, Failure):
            return False
        earlier = self._latest_parse(rel)
        if earlier is not None and earlier.source == data:
            return False
        parsed = parse_source(language, data, earlier)
        wanted = set(symbols)
        known = self._latest_facts(rel)
        for site in parsed.sites():
            if site.qname in wanted and not site.has_error and parsed.facts_key(site) not in known:
                parsed.facts(site)
        self._prepared[rel] = (parsed, file_facts(language, data, parsed) if whole else None)
        return True

    def _latest_view(self, rel: str) -> FileView | None:
        """The view of the newest version of `rel` observed, current or forgotten."""
        view = self._views.get(rel) if rel in self._views else self._previous.get(rel)
        return view if isinstance(view, FileView) else None

    def _latest_facts(self, rel: str) -> dict[str, Facts]:
        view = self._latest_view(rel)
        return view.known_facts() if view is not None else {}

    def _latest_parse(self, rel: str) -> ParsedFile | None:
        """The newest parse of some version of `rel`, to re-parse a later one from."""
        if rel in self._prepared:
            return self._prepared[rel][0]
        view = self._latest_view(rel)
        return view.latest_parse() if view is not None else None

    def _adopt_prepared(self, view: FileView, previous: FileView | None) -> None:
        """Give a new view the parse `prepare` made of its bytes, or else the earlier
        version's tree to re-parse from."""
        prepared, whole = self._prepared.pop(view.rel, (None, None))
        if prepared is not None and prepared.source == view.source():
            view.use_parse(prepared, whole)
        elif previous is not None:
            view.follows(previous)

    def assume(self, rel: str, data: bytes) -> None:
        """Observe `rel` as `data` — bytes from elsewhere (a commit), whether or not the file
        exists now; never cached, like an editor's buffer."""
        usable = _usable(rel, data, self.max_file_size)
        if isinstance(usable, Failure):
            self._views[rel] = usable
            return
        view = FileView(
            rel,
            self.root / rel,
            unstatted(len(data)),
            digest_bytes(data),
            language_for_path(rel),
            None,
            data,
        )
        view.overlay = True
        self._views[rel] = view

    def knows(self, rel: str) -> bool:
        """Whether anything is known of the file beyond its name: a view, a cache row, an
        earlier version, an unsaved buffer."""
        return (
            rel in self._views
            or rel in self.overlays
            or rel in self._previous
            or self._cache.get(rel) is not None
        )

    def preload(self, rels: Iterable[str]) -> None:
        """Fetch the cache rows of many files in one query."""
        wanted = [r for r in set(rels) if r not in self._cache and r not in self._views]
        if self.journal is not None and wanted:
            self._cache.update(self.journal.cached_files(wanted))

    def view(self, rel: str) -> FileView | Failure | None:
        """The file's view, a failure, or None when the file does not exist."""
        if rel not in self._views:
            self._views[rel] = self._make_view(rel)
        return self._views[rel]

    def _make_view(self, rel: str) -> FileView | Failure | None:
        fresh = rel in self._previous  # known to have changed: never trust a stat for it
        previous = self._previous.pop(rel, None)
        absolute = self.root / rel
        info = self._regular_file(rel, absolute)
        if not isinstance(info, os.stat_result):
            return info
        language = language_for_path(rel)
        if rel in self.overlays:
            return self._overlay_view(rel, absolute, language, previous)
        if info.st_size > self.max_file_size:
            return Failure(
                Reason.UNUSABLE,
                "too_large",
                f"{rel} is {info.st_size} bytes, over the {self.max_file_size}-byte cap",
            )
        key = stat_key(info)
        # Taken, not kept: the view made now is what is known of the file from here on (a
        # long-lived observer would otherwise hold every row's text, ~4 MB at 10,000 memories).
        cached = self._cache.pop(rel, None)
        if cached is None and self.journal is not None:
            cached = self.journal.cached_file(rel)
        if cached is not None and cached.derivation != cache_derivation():
            cached = None
        if not fresh and cached is not None and _row_key(cached) == key:
            return FileView(rel, self.root, key, cached.sha, language, _loads(cached), None)
        data = self._read(rel, absolute)
        if isinstance(data, Failure):
            return data
        sha = digest_bytes(data)
        last_sha = previous.sha if previous is not None else None
        if last_sha is None and cached is not None:
            last_sha = cached.sha
        # Changed bytes written just now, or an empty file (the first step of a save that
        # truncates, then writes: a check from scratch must see it as a warm one does).
        if time.time_ns() - key.mtime_ns < RACY_WINDOW_NS and (
            (last_sha is not None and last_sha != sha) or not data
        ):
            settled = self._settle(rel, absolute, key, data)
            if isinstance(settled, Failure):
                return settled
            key, data = settled
            sha = digest_bytes(data)
        if previous is not None and previous.sha == sha:
            previous.adopt(key, data)  # touched, not changed: all it knew still holds
            self._prepared.pop(rel, None)
            return previous
        if cached is not None and cached.sha == sha:
            view = FileView(rel, self.root, key, sha, language, _loads(cached), data)
            view.dirty = True  # the stat moved: remember the new one
            self._adopt_prepared(view, None)
            return view
        if (previous is not None and previous.sha != sha) or (
            cached is not None and cached.sha != sha
        ):
            self.changed.add(rel)
        # What is known of the file's earlier version: its unchanged definitions' facts.
        if previous is not None:
            reuse = previous.known_facts()
        elif cached is not None:
            earlier = FileView(rel, self.root, key, cached.sha, language, _loads(cached), None)
            reuse = earlier.known_facts()
        else:
            reuse = None
        view = FileView(rel, self.root, key, sha, language, None, data, reuse)
        self._adopt_prepared(view, previous)
        return view

    def _settle(
        self, rel: str, absolute: Path, key: StatKey, data: bytes
    ) -> tuple[StatKey, bytes] | Failure:
        """The bytes of a file that changed just now, once its writer is done with them:
        its stat unchanged across the read and its last write `SETTLE_QUIET_NS` old — or,
        for an empty file (a save that truncates, then writes), the racy window. While the
        file holds still this only waits for that (at most 2 s); a file still being
        written when `settle_budget_s` is spent is a `file_changing` failure. A
        half-written save is never observed as drift or gone code (memory:
        half-written-saves-are-unverified)."""
        deadline = time.monotonic() + self.settle_budget_s
        while True:
            info = self._regular_file(rel, absolute)
            if isinstance(info, Failure):
                return info
            if isinstance(info, os.stat_result) and stat_key(info) == key:
                quiet = RACY_WINDOW_NS if key.size == 0 else SETTLE_QUIET_NS
                wait_ns = key.mtime_ns + quiet - time.time_ns()
                if wait_ns <= 0:
                    return key, data
                time.sleep(min(wait_ns, SETTLE_STEP_NS) / 1e9)
                continue
            if time.monotonic() > deadline:
                what = "is gone" if info is None else "is being written"
                return Failure(
                    Reason.UNREACHABLE,
                    "file_changing",
                    f"{rel} {what} while it is read and has not settled: it is observed "
                    "once its writer is done",
                )
            if isinstance(info, os.stat_result):
                again = self._read(rel, absolute)  # written meanwhile: read it again
                if isinstance(again, Failure):
                    return again
                key, data = stat_key(info), again
            else:  # gone for now (a save that deletes, then writes), or unreadable
                time.sleep(SETTLE_STEP_NS / 1e9)

    def _regular_file(self, rel: str, absolute: Path) -> os.stat_result | Failure | None:
        """The file's stat, if it is a regular file inside the workspace; None: no file.

        Links are walked inside the workspace only (moor_store.inside): one that leads
        outside (e.g. a tracked link met while searching for moved code) is never read."""
        try:
            info = stat_inside(self.root, rel)
        except FileNotFoundError:
            return None
        except NotInside as error:
            return _refusal(rel, error)
        except PermissionError as error:
            return Failure(
                Reason.UNREACHABLE, "file_missing_unreadable", f"{rel}: {error.strerror}"
            )
        except OSError as error:
            return Failure(Reason.UNREACHABLE, "io_error", f"{rel}: {error.strerror}")
        if not stat.S_ISREG(info.st_mode):
            what = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            return Failure(Reason.UNUSABLE, "not_a_file", f"{rel} is {what}")
        return info

    def _read(self, rel: str, absolute: Path) -> bytes | Failure:
        """A file's bytes, if they are text moor can observe (opened without following a
        link swapped in since it was looked at, never blocking on a FIFO)."""
        try:
            data = read_inside(self.root, rel, limit=self.max_file_size)
        except OSError as error:
            return _read_failure(rel, error)
        self.reread.add(rel)
        return _usable(rel, data, self.max_file_size)

    def _overlay_view(
        self, rel: str, absolute: Path, language: str | None, previous: FileView | None
    ) -> FileView | Failure:
        """A view of an editor's unsaved buffer of `rel`: observed, never cached."""
        data = _usable(rel, self.overlays[rel], self.max_file_size)
        if isinstance(data, Failure):
            return data
        carried = self._carried.pop(rel, None)
        if carried is not None and carried.language == language:
            if carried.held_source() == data:
                return carried
            previous = previous or carried
        reuse = previous.known_facts() if previous is not None else None
        view = FileView(
            rel, self.root, unstatted(len(data)), digest_bytes(data), language, None, data, reuse
        )
        self._adopt_prepared(view, previous)
        view.overlay = True
        return view

    def observe(self, ref: Reference, expect: Collection[str] = ()) -> Observation:
        """What `ref` names now. In a file with a syntax error that may reach the symbol
        (memory: parse-errors-reach-what-follows), only an observation of exactly an
        address in `expect` (what it is bound to) is believed: anything else — not found,
        or different — may be the error recovery's doing, and is a `Failure`."""
        if ref.path is None:
            return self._command(ref)
        language = language_for_path(ref.path)
        derivation = derivation_for(ref, language)
        view = self.view(ref.path)
        if isinstance(view, Failure):
            return view
        if view is None:
            return NotFound(ref.path, derivation, not_found_address(derivation))
        try:
            return self._observe_view(ref, view, language, derivation, expect)
        except OSError as error:  # a view from the cache whose file could not be read now
            return _read_failure(ref.path, error)

    def _observe_view(
        self,
        ref: Reference,
        view: FileView,
        language: str | None,
        derivation: str,
        expect: Collection[str],
    ) -> Observation:
        assert ref.path is not None
        if ref.symbol is None:
            facts = view.whole_file_facts()
            return Found(ref.path, derivation, facts, found_address(derivation, facts), None)
        if language is None:
            return Failure(
                Reason.UNEVALUABLE,
                "no_grammar",
                f"no grammar for {ref.path}: symbols can be named only in "
                "Python, JavaScript, TypeScript, Go, Rust, Java and Markdown files",
            )
        sites = view.sites()
        meaning = resolve(ref.symbol, sites, language, view.named, view.group, view.head)
        if meaning is None:
            hiding = view.error_hiding(_own_name(language, ref.symbol))
            if hiding is not None:
                return _near_error(ref, hiding, found=False)
            unlisted = view.parsed().unlisted(ref.symbol) if spec_for(language).unlists else None
            if unlisted is not None:
                container, what = unlisted
                return Failure(
                    Reason.UNEVALUABLE,
                    "no_longer_listed",
                    f"{ref.symbol} is {what}: {ref.path}#{container}",
                )
            return NotFound(ref.path, derivation, not_found_address(derivation))
        if isinstance(meaning, Ambiguous):
            return Failure(
                Reason.UNEVALUABLE, "ambiguous_symbol", ambiguity(ref, meaning.candidates)
            )
        matches = list(meaning.indexes)
        broken = [sites[i] for i in matches if sites[i].has_error]
        if broken:
            return Failure(
                Reason.UNEVALUABLE,
                "parse_error_in_symbol",
                f"the parser could not read {ref.symbol} in {ref.path} (line {broken[0].line})",
            )
        if len(matches) > 1:
            span, facts = view.together_facts(matches)
            found = Found(ref.path, derivation, facts, found_address(derivation, facts), span)
        else:
            site = sites[matches[0]]
            facts = view.facts_at(matches[0])
            address = self._address(derivation, view, matches[0])
            found = Found(ref.path, derivation, facts, address, site)
        assert found.site is not None
        if found.address not in expect and view.error_regions():
            reaching = next(filter(None, (view.error_reaching(sites[i]) for i in matches)), None)
            if reaching is not None:
                return _near_error(ref, reaching, found=True)
        return found

    def overloads(self, ref: Reference) -> list[str]:
        """When `ref` names several definitions watched together that a spelling each picks
        alone (overloads, not the branches of an `if`), the references that pick each, in
        document order; else none."""
        if ref.path is None or ref.symbol is None:
            return []
        language = language_for_path(ref.path)
        view = self.view(ref.path)
        if language is None or not isinstance(view, FileView):
            return []
        sites = view.sites()
        meaning = resolve(ref.symbol, sites, language, view.named, view.group, view.head)
        if not isinstance(meaning, Named) or len(meaning.indexes) < 2:
            return []
        qname = sites[meaning.indexes[0]].qname
        indexes = view.named(qname)
        if not set(meaning.indexes) <= set(indexes):
            return []
        spellings = view.group(indexes).spellings
        positions = [indexes.index(i) for i in meaning.indexes]
        if any(spellings[p] is None for p in positions):
            return []
        return [f"{ref.path}#{member_symbol(qname, spellings, p)}" for p in positions]

    def trim(self, keep: set[str]) -> None:
        """Let go of the syntax trees of every file but `keep` (a long-lived observer would
        otherwise hold the tree of every file it ever parsed)."""
        for rel, view in self._views.items():
            if rel not in keep and isinstance(view, FileView):
                view.release_tree()

    def _address(self, derivation: str, view: FileView, index: int) -> str:
        """`found_address` of a site, remembered by its facts key: an edit elsewhere in a
        large file leaves hundreds of definitions whose address need not be hashed again."""
        key = view.key_at(index)
        if key is None:
            return found_address(derivation, view.facts_at(index))
        memo = (derivation, key)
        address = self._addresses.get(memo)
        if address is None:
            address = found_address(derivation, view.facts_at(index))
            if len(self._addresses) > _ADDRESS_MEMO:
                self._addresses.clear()
            self._addresses[memo] = address
        return address

    @property
    def parse_count(self) -> int:
        """How many files this observer has tree-sitter-parsed so far."""
        return sum(v.parse_count for v in self._views.values() if isinstance(v, FileView))

    def observe_canonical(self, canonical: str) -> Observation:
        ref = parse_reference(canonical)
        if isinstance(ref, Failure):
            return ref
        return self.observe(ref)

    def _command(self, ref: Reference) -> Observation:
        if self.commands is None:
            return Failure(
                Reason.UNEVALUABLE,
                "command_probes_unavailable",
                f"{ref.canonical()}: custom anchors are observed only in a session",
            )
        return self.commands(ref)

    def flush(self) -> None:
        """Persist every view that learnt something, in one transaction."""
        if self.journal is None:
            return
        now = time.time_ns()
        rows = []
        flushed: list[FileView] = []
        for view in self._views.values():
            if isinstance(view, FileView) and view.dirty and not view.overlay:
                key = stored(view.stat_key, now, self.racy_window_ns)
                if key == view.stat_key:  # a racily fresh row is written again, once settled
                    flushed.append(view)
                rows.append(
                    CachedFile(
                        path=view.rel,
                        size=key.size,
                        mtime_ns=key.mtime_ns,
                        sha=view.sha,
                        derivation=cache_derivation(),
                        payload=view.payload(),
                        ctime_ns=key.ctime_ns,
                        inode=key.inode,
                        device=key.device,
                    )
                )
        if rows:
            self.journal.store_files(rows)
        # A long-lived observer (the editor's) flushes after every check: a view stored once
        # is not stored again until it learns something new.
        for view in flushed:
            view.dirty = False


def ambiguity(ref: Reference, candidates: tuple[tuple[str | None, int], ...]) -> str:
    """Why a symbol is ambiguous, with the spelling that picks each candidate."""
    lines = ", ".join(str(line) for _, line in candidates)
    text = f"{ref.symbol} is defined {len(candidates)} times in {ref.path}, at lines {lines}"
    picks = [f"{ref.path}#{symbol} (line {line})" for symbol, line in candidates if symbol]
    if picks:
        text += "; write " + " or ".join(picks)
    return text


def _near_error(ref: Reference, region: ErrorRegion, found: bool) -> Failure:
    what = "may be misread" if found else "is not found"
    return Failure(
        Reason.UNEVALUABLE,
        "parse_error_near_symbol",
        f"{ref.symbol} {what}: the parser could not read {ref.path} at line {region.line}, "
        "and what it made of the code around there can hide or reshape the symbol; moor "
        "checks it again once the file parses",
    )


def _own_name(language: str, symbol: str) -> str:
    """The name a definition of `symbol` spells in its own code: its last part, without
    an overload's parameter list or a receiver's type parameters."""
    own = split_qualified(language, symbol)[1]
    return re.split(r"[(\[<\s]", own, maxsplit=1)[0] or own


def _interned(value: object) -> Any:
    return sys.intern(value) if type(value) is str else value


def _row_key(row: CachedFile) -> StatKey:
    return StatKey(row.size, row.mtime_ns, row.ctime_ns, row.inode, row.device)


def _loads(cached: CachedFile) -> dict[str, object] | None:
    try:
        value = json.loads(cached.payload)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _usable(rel: str, data: bytes, max_file_size: int) -> bytes | Failure:
    if len(data) > max_file_size:
        return Failure(Reason.UNUSABLE, "too_large", f"{rel} grew over the size cap")
    if b"\0" in data[:_BINARY_SNIFF]:
        return Failure(Reason.UNUSABLE, "binary", f"{rel} holds NUL bytes: not text")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        return Failure(Reason.UNUSABLE, "invalid_utf8", f"{rel}: invalid UTF-8 at line {line}")
    return data


def _read_failure(rel: str, error: OSError) -> Failure:
    """A file that could not be read, as an observation failure (never drift)."""
    if isinstance(error, NotInside):
        return _refusal(rel, error)
    if isinstance(error, FileNotFoundError | PermissionError):
        return Failure(Reason.UNREACHABLE, "file_missing_unreadable", f"{rel}: {error.strerror}")
    return Failure(Reason.UNREACHABLE, "io_error", f"{rel}: {error.strerror}")


def _refusal(rel: str, error: NotInside) -> Failure:
    """A path moor will not read, as an observation failure (never drift)."""
    if error.code == "too_large":
        return Failure(Reason.UNUSABLE, "too_large", error.message)
    if error.code == "not_a_file":
        return Failure(Reason.UNUSABLE, "not_a_file", error.message)
    if error.code == "changed_while_reading":
        return Failure(Reason.UNREACHABLE, "changed_while_reading", error.message)
    if error.code == "path_too_long":
        return Failure(Reason.UNEVALUABLE, "path_too_long", error.message)
    return Failure(Reason.UNEVALUABLE, "outside_workspace", error.message)


def file_exists(root: Path, rel: str) -> bool:
    return os.path.isfile(root / rel)
