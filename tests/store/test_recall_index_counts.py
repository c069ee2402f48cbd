"""The counts a recall index reads once per open (how many documents a reader may see) are
read again after its own update and after another connection's (another moor's) commit:
a kept index is asked on every search and never answers with a stale count."""

from __future__ import annotations

from pathlib import Path

import pytest
from moor_store import recall_index
from moor_store.recall_index import Document, RecallIndex

WEIGHTS = (1.0, 1.0, 1.0, 1.0)


def document(name: str, owner: str | None = None) -> Document:
    fields = (name, "", "", f"{name} body")
    return Document(
        f"{name}.md", f"hash-{name}", fields, frozenset(fields[3].split()), {}, owner=owner
    )


def test_document_counts_follow_own_updates_and_other_connections_commits(
    tmp_path: Path,
) -> None:
    path = tmp_path / "recall.sqlite"
    kept = RecallIndex(path, "test", WEIGHTS)
    kept.update([document("a"), document("b"), document("mine", "alpha")], [])
    assert kept.written_elsewhere() is False
    assert kept.documents([None]) == 2
    assert kept.documents([None, "alpha"]) == 3
    kept.update([document("c")], ["a.md"])  # its own update: one in, one out
    kept.update([document("d")], [])
    assert kept.documents([None]) == 3
    other = RecallIndex(path, "test", WEIGHTS)
    other.update([document("e"), document("theirs", "alpha")], [])
    other.close()
    assert kept.written_elsewhere() is True  # what a kept index asks before each search
    assert kept.documents([None]) == 4
    assert kept.documents([None, "alpha"]) == 6
    kept.close()


def titled(name: str, title: str) -> Document:
    fields = (title, "", "", f"{name} body")
    return Document(
        f"{name}.md", f"hash-{title}", fields, frozenset(fields[3].split()), {"title": title}
    )


def test_a_match_shows_the_metadata_of_its_document_as_it_is_after_any_commit(
    tmp_path: Path,
) -> None:
    path = tmp_path / "recall.sqlite"
    kept = RecallIndex(path, "test", WEIGHTS)
    kept.update([titled("a", "first"), titled("b", "second")], [])
    kept.written_elsewhere()
    [before] = kept.ranked(["b"], 5).matches
    assert before.meta["title"] == "second"  # the control: read, and kept from here
    # The last document replaced: SQLite gives its new row the same rowid, so metadata kept
    # by rowid would answer for it.
    kept.update([titled("b", "own edit")], [])
    [own] = kept.ranked(["b"], 5).matches
    assert own.rowid == before.rowid
    assert own.meta["title"] == "own edit"
    other = RecallIndex(path, "test", WEIGHTS)
    other.update([titled("b", "their edit")], [])
    other.close()
    assert kept.written_elsewhere() is True
    [theirs] = kept.ranked(["b"], 5).matches
    assert theirs.rowid == before.rowid
    assert theirs.meta["title"] == "their edit"
    kept.close()


def test_the_owners_of_a_kept_index_follow_its_updates_and_other_connections_commits(
    tmp_path: Path,
) -> None:
    path = tmp_path / "recall.sqlite"
    kept = RecallIndex(path, "test", WEIGHTS)
    kept.update([document("a")], [])
    kept.written_elsewhere()
    assert kept.owners() == [None]
    kept.update([document("mine", "alpha")], [])
    assert sorted(map(str, kept.owners())) == ["None", "alpha"]
    other = RecallIndex(path, "test", WEIGHTS)
    other.update([document("theirs", "beta")], [])
    other.close()
    assert sorted(map(str, kept.owners())) == ["None", "alpha"]  # not asked again yet
    assert kept.written_elsewhere() is True
    assert sorted(map(str, kept.owners())) == ["None", "alpha", "beta"]
    kept.close()


def test_a_ranking_that_overflows_the_kept_metadata_still_gives_every_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_index, "_KEPT_METAS", 2)
    kept = RecallIndex(tmp_path / "recall.sqlite", "test", WEIGHTS)
    kept.update([document("a"), document("b"), document("c")], [])
    assert [m.path for m in kept.ranked(["a"], 5).matches] == ["a.md"]  # kept: one
    # Two more than fit beside it: what was kept is forgotten, and read again with them.
    assert sorted(m.path for m in kept.ranked(["body"], 5).matches) == ["a.md", "b.md", "c.md"]
    kept.close()
