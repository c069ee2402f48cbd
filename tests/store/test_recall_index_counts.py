"""The counts a recall index reads once per open (how many documents a reader may see) are
read again after its own update and after another connection's (another moor's) commit:
a kept index is asked on every search and never answers with a stale count."""

from __future__ import annotations

from pathlib import Path

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
