"""Drift cases about members of types (issue 23.2): Go struct fields and interface methods,
Rust enum variants and struct fields, TypeScript properties and method signatures of
interfaces and aliased object types, made from real code on this machine that nobody here
wrote (the relocation benchmark's sources: Debian's ``golang-1.19-src``, the fixed Debian
crates, pmndrs/zustand's git directory).

A member is picked with moor's extractor in a type (unique in its file) that has another
member on a line of its own; every mutated file must parse without error nodes. Categories,
with the trust state a memory bound to the member should then have:

* ``unchanged`` — a sibling member's type changed (Go: ``[]`` before a field's type, a
  parameter added to an interface method; Rust: a field's type wrapped in ``Vec<…>``, a
  ``u8`` added to a variant): ``current`` (a member is its own anchor);
* ``semantic`` — the same change to the member itself: ``drifted``;
* ``moved`` — the whole type cut into a new file, unchanged: ``moved`` to the member there;
* ``deleted`` — the member's lines removed: ``gone``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import relocation

if TYPE_CHECKING:
    from moor_extractors.model import DefinitionSite
    from moor_extractors.symbols import ParsedFile
    from tree_sitter import Node

LANGUAGES = ("go", "rust", "typescript")
CATEGORIES = ("unchanged", "semantic", "moved", "deleted")
EXPECTED = {"unchanged": "current", "semantic": "drifted", "moved": "moved", "deleted": "gone"}
PER_CATEGORY = 40
CONTAINER_KINDS = {
    "go": {"struct", "interface"},
    "rust": {"struct", "enum"},
    "typescript": {"interface", "type"},
}
MEMBER_NODES = {
    "go": {"field_declaration", "method_elem"},
    "rust": {"field_declaration", "enum_variant"},
    "typescript": {"property_signature", "method_signature"},
}


@dataclass(frozen=True)
class MemberCase:
    category: str
    detail: str
    rel: str
    qname: str
    before: str
    after: dict[str, str | None]
    moved_to: str | None


@dataclass(frozen=True)
class Member:
    site: DefinitionSite
    node: Node
    container: DefinitionSite


def source_identity(language: str) -> str | None:
    source = relocation.find_source(language)
    return None if source is None else source.identity


def cases(language: str, per_category: int, seed: int) -> list[MemberCase]:
    """Up to `per_category` cases per category, at most one per file and category, files
    visited in a seeded shuffle (a smaller `per_category` gives the first cases of a larger)."""
    source = relocation.find_source(language)
    if source is None:
        return []
    files = source.files()[: relocation.MAX_FILES_SCANNED * 4]
    random.Random(seed).shuffle(files)
    chosen: dict[str, list[MemberCase]] = {category: [] for category in CATEGORIES}
    for rel, read in files:
        if all(len(found) >= per_category for found in chosen.values()):
            break
        unit = relocation.parse_unit(language, rel, read())
        if unit is None:
            continue
        members = _members(unit.parsed, language)
        if not members:
            continue
        for category in CATEGORIES:
            if len(chosen[category]) >= per_category:
                continue
            rng = random.Random(f"{seed}/{rel}/{category}")
            made = _case(unit, members, category, rng)
            if made is not None:
                chosen[category].append(made)
    return [case for category in CATEGORIES for case in chosen[category]]


def _members(parsed: ParsedFile, language: str) -> list[Member]:
    sites = parsed.sites()
    counts: dict[str, int] = {}
    for site in sites:
        counts[site.qname] = counts.get(site.qname, 0) + 1
    containers = {
        site.qname: site
        for site in sites
        if site.kind in CONTAINER_KINDS[language]
        and counts[site.qname] == 1
        and "." not in site.qname
    }
    found = []
    for site in sites:
        owner, _, _ = site.qname.rpartition(".")
        if owner not in containers or counts[site.qname] != 1 or site.has_error:
            continue
        node, _span = parsed.definition(site)
        if node.type in MEMBER_NODES[language]:
            found.append(Member(site, node, containers[owner]))
    return found


def _case(
    unit: relocation.Unit, members: list[Member], category: str, rng: random.Random
) -> MemberCase | None:
    candidates = list(members)
    rng.shuffle(candidates)
    for member in candidates[:5]:
        made = MUTATORS[category](unit, member, members, rng)
        if made is None:
            continue
        detail, after, moved_to = made
        return MemberCase(category, detail, unit.rel, member.site.qname, unit.text, after, moved_to)
    return None


Made = tuple[str, dict[str, str | None], str | None]


def _type_edit(unit: relocation.Unit, member: Member) -> tuple[list[relocation.Edit], str] | None:
    """The member's type changed (see the module's docstring), or None."""
    node = member.node
    if node.type == "field_declaration":
        type_node = node.child_by_field_name("type")
        if type_node is None or node.child_by_field_name("name") is None:
            return None  # an embedded Go field: its type is its name
        if unit.language == "go":
            return [relocation.Edit(type_node.start_byte, type_node.start_byte, "[]")], "type"
        return [
            relocation.Edit(type_node.start_byte, type_node.start_byte, "Vec<"),
            relocation.Edit(type_node.end_byte, type_node.end_byte, ">"),
        ], "type"
    if node.type == "method_elem":
        parameters = node.child_by_field_name("parameters")
        if parameters is None:
            return None
        empty = parameters.named_child_count == 0
        insert = "moorExtra int" if empty else "moorExtra int, "
        return [relocation.Edit(parameters.start_byte + 1, parameters.start_byte + 1, insert)], (
            "parameter"
        )
    if node.type == "property_signature":
        annotation = node.child_by_field_name("type")
        written = annotation.named_children[0] if annotation is not None else None
        if written is None:
            return None
        return [
            relocation.Edit(written.start_byte, written.start_byte, "Array<"),
            relocation.Edit(written.end_byte, written.end_byte, ">"),
        ], "type"
    if node.type == "method_signature":
        parameters = node.child_by_field_name("parameters")
        if parameters is None:
            return None
        empty = parameters.named_child_count == 0
        insert = "moorExtra: number" if empty else "moorExtra: number, "
        return [relocation.Edit(parameters.start_byte + 1, parameters.start_byte + 1, insert)], (
            "parameter"
        )
    if node.type == "enum_variant":
        if node.child_by_field_name("value") is not None:
            return None
        body = node.child_by_field_name("body")
        name = node.child_by_field_name("name")
        if body is None and name is not None:
            return [relocation.Edit(name.end_byte, name.end_byte, "(u8)")], "payload"
        if body is not None and body.type == "ordered_field_declaration_list":
            return [relocation.Edit(body.start_byte + 1, body.start_byte + 1, "u8, ")], "payload"
        return None
    return None


def _changed(unit: relocation.Unit, member: Member) -> tuple[str, str] | None:
    """The file with the member's type changed, if it parses cleanly."""
    edit = _type_edit(unit, member)
    if edit is None:
        return None
    edits, what = edit
    text = relocation.apply_edits(unit.source, edits)
    parsed = relocation.clean_parse(unit.language, text)
    if parsed is None or not relocation._present(parsed, member.site.qname):
        return None
    return text, what


def mutate_unchanged(
    unit: relocation.Unit, member: Member, members: list[Member], rng: random.Random
) -> Made | None:
    siblings = [
        m
        for m in members
        if m.container == member.container
        and m.site != member.site
        and m.node.id != member.node.id
        and m.site.line != member.site.line
    ]
    rng.shuffle(siblings)
    for sibling in siblings[:3]:
        changed = _changed(unit, sibling)
        if changed is not None:
            return f"sibling {sibling.site.qname}: {changed[1]}", {unit.rel: changed[0]}, None
    return None


def mutate_semantic(
    unit: relocation.Unit, member: Member, members: list[Member], rng: random.Random
) -> Made | None:
    changed = _changed(unit, member)
    return None if changed is None else (changed[1], {unit.rel: changed[0]}, None)


def mutate_deleted(
    unit: relocation.Unit, member: Member, members: list[Member], rng: random.Random
) -> Made | None:
    if any(m.node.id == member.node.id and m.site != member.site for m in members):
        return None  # `A, B int`: one line holds two
    span = _own_lines(unit, member.site)
    if span is None:
        return None
    text = (unit.source[: span[0]] + unit.source[span[1] :]).decode("utf-8")
    parsed = relocation.clean_parse(unit.language, text)
    if parsed is None or relocation._present(parsed, member.site.qname):
        return None
    return "member removed", {unit.rel: text}, None


def _own_lines(unit: relocation.Unit, site: DefinitionSite) -> tuple[int, int] | None:
    """The whole lines a member occupies alone, its separating comma included (Rust)."""
    source = unit.source
    start = source.rfind(b"\n", 0, site.start_byte) + 1
    end = source.find(b"\n", site.end_byte)
    end = len(source) if end < 0 else end + 1
    if source[start : site.start_byte].strip() or source[site.end_byte : end].strip() not in (
        b"",
        b",",
    ):
        return None
    return start, end


def mutate_moved(
    unit: relocation.Unit, member: Member, members: list[Member], rng: random.Random
) -> Made | None:
    span = relocation.line_span(unit, member.container)
    if span is None:
        return None
    head = ""
    if unit.language == "go":
        package = next(
            (c for c in unit.parsed.tree.root_node.named_children if c.type == "package_clause"),
            None,
        )
        head = relocation._text(package) + "\n\n" if package is not None else ""
    cut = unit.source[span[0] : span[1]].decode("utf-8")
    old_text = (unit.source[: span[0]] + unit.source[span[1] :]).decode("utf-8")
    new_text = head + cut
    old = relocation.clean_parse(unit.language, old_text)
    new = relocation.clean_parse(unit.language, new_text)
    if old is None or new is None or relocation._present(old, member.container.qname):
        return None
    if relocation._site_text(new, member.site.qname) != unit.parsed.source_text(member.site):
        return None
    new_rel = relocation.moved_path(unit.rel)
    return (
        "its type cut into a new file",
        {unit.rel: old_text, new_rel: new_text},
        f"{new_rel}#{member.site.qname}",
    )


MUTATORS: dict[str, Callable[..., Made | None]] = {
    "unchanged": mutate_unchanged,
    "semantic": mutate_semantic,
    "moved": mutate_moved,
    "deleted": mutate_deleted,
}
