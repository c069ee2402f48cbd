"""ARCHITECTURE.md, the README and docs/ cite moor's code as it is: every cited file exists,
every cited name is a definition there (by moor's own listing), every cited function is
called."""

from __future__ import annotations

from pathlib import Path

from tests.architecture.citations import ROOT, citations, names_moor, problems


def manuals() -> list[Path]:
    docs = ROOT / "docs"
    return [ROOT / "README.md", *(sorted(docs.rglob("*.md")) if docs.is_dir() else [])]


def test_every_citation_in_the_architecture_names_code_that_exists_and_is_used() -> None:
    document = ROOT / "ARCHITECTURE.md"
    cited = list(citations(document, document.read_text(encoding="utf-8")))
    assert len(cited) > 100  # the map cites its code throughout: the parser found it
    assert problems(cited) == []


def test_every_citation_of_moors_code_in_the_manuals_names_code_that_exists() -> None:
    cited = [
        citation
        for document in manuals()
        for citation in citations(document, document.read_text(encoding="utf-8"))
        if names_moor(citation)
    ]
    assert problems(cited) == []


def test_a_citation_of_a_missing_file_name_or_an_uncalled_function_is_flagged(
    tmp_path: Path,
) -> None:
    (tmp_path / "engine" / "moor_engine").mkdir(parents=True)
    (tmp_path / "engine" / "moor_engine" / "check.py").write_text(
        "def decide():\n    return 1\n\n\ndef unused():\n    return 2\n\n\nVALUE = decide()\n"
    )
    document = tmp_path / "MAP.md"
    document.write_text(
        "| decision | `engine/moor_engine/check.py#decide` |\n"
        "| planted | `engine/check.py#missing` and `#unused` |\n"
        "| gone | `engine/moor_engine/nowhere.py` |\n"
        "| modules | `moor_engine.check` and `moor_engine.elsewhere` |\n"
    )
    cited = list(citations(document.relative_to(tmp_path), document.read_text()))
    found = problems(cited, tmp_path)
    assert found == [
        "MAP.md:2: engine/check.py#missing: no definition of missing in "
        "engine/moor_engine/check.py",
        "MAP.md:2: engine/check.py#unused: unused is defined but nothing in moor calls it",
        "MAP.md:3: engine/moor_engine/nowhere.py: no such file",
        "MAP.md:4: engine/moor_engine/elsewhere.py: no such file",
    ]
