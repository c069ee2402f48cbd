"""Contained reads and writes (moor_store.inside) against a real file system."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from moor_store.inside import (
    NotInside,
    read_inside,
    stat_inside,
    stat_many_inside,
    write_inside,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "a").mkdir(parents=True)
    (root / "a/f.txt").write_text("inside", encoding="utf-8")
    return root


def _code(call: object) -> str:
    with pytest.raises(NotInside) as caught:
        assert callable(call)
        call()
    return caught.value.code


def test_links_that_stay_inside_are_walked_and_links_leading_out_are_refused(
    root: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside", encoding="utf-8")
    os.symlink("a", root / "rel-dir")
    os.symlink(root / "a/f.txt", root / "abs-file")
    os.symlink(secret, root / "out-abs")
    os.symlink("../secret.txt", root / "out-rel")
    os.symlink("../../secret.txt", root / "a/out-deep")
    assert read_inside(root, "rel-dir/f.txt") == b"inside"  # control: inside links work
    assert read_inside(root, "abs-file") == b"inside"
    for rel in ("out-abs", "out-rel", "a/out-deep", "../secret.txt", "a/../../secret.txt"):
        assert _code(lambda rel=rel: read_inside(root, rel)) == "outside_workspace", rel


def test_a_link_loop_is_refused(root: Path) -> None:
    os.symlink("loop-b", root / "loop-a")
    os.symlink("loop-a", root / "loop-b")
    assert _code(lambda: read_inside(root, "loop-a")) == "link_loop"


def test_fifos_folders_and_oversize_files_are_refused_without_blocking(root: Path) -> None:
    os.mkfifo(root / "pipe")
    assert _code(lambda: read_inside(root, "pipe")) == "not_a_file"
    assert _code(lambda: read_inside(root, "a")) == "not_a_file"
    assert _code(lambda: read_inside(root, "a/f.txt", limit=3)) == "too_large"
    assert read_inside(root, "a/f.txt", limit=6) == b"inside"  # control: at the cap it reads


def test_a_write_replaces_a_planted_link_to_an_own_file_and_refuses_one_leading_out(
    root: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious", encoding="utf-8")
    os.symlink(victim, root / "a/diff")
    with pytest.raises(NotInside):
        write_inside(root, "a/diff", b"x")
    write_inside(root, "a/diff", b"mine", own=True)
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not (root / "a/diff").is_symlink() and (root / "a/diff").read_bytes() == b"mine"
    write_inside(root, "new/deep/file", b"made")  # control: folders are made inside
    assert (root / "new/deep/file").read_bytes() == b"made"
    assert stat_inside(root, "new/deep/file").st_size == 4


def test_an_exclusive_write_never_replaces_an_existing_file(root: Path) -> None:
    with pytest.raises(FileExistsError):
        write_inside(root, "a/f.txt", b"other", exclusive=True)
    assert read_inside(root, "a/f.txt") == b"inside"
    write_inside(root, "a/g.txt", b"new", exclusive=True)
    assert read_inside(root, "a/g.txt") == b"new"
    assert not [p for p in (root / "a").iterdir() if p.name.endswith(".tmp")]


def test_many_stats_at_once_answer_exactly_as_one_at_a_time(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside", encoding="utf-8")
    (root / "a/g.txt").write_text("inside", encoding="utf-8")
    (root / "b/c").mkdir(parents=True)
    (root / "b/c/h.txt").write_text("inside", encoding="utf-8")
    os.symlink("f.txt", root / "a/link-in")
    os.symlink(secret, root / "a/link-out")
    os.symlink(tmp_path, root / "folder-out")
    os.symlink("a", root / "folder-in")
    os.mkfifo(root / "a/fifo")
    (root / "top.txt").write_text("at the root", encoding="utf-8")
    os.symlink("top.txt", root / "top-link")
    os.symlink(secret, root / "top-out")
    rels = [
        "top.txt",
        "top-link",
        "top-out",
        "top-missing.txt",
        "a/f.txt",
        "a/g.txt",
        "b/c/h.txt",
        "a/link-in",
        "a/link-out",
        "folder-out/secret.txt",
        "folder-in/g.txt",
        "a/fifo",
        "a/missing.txt",
        "missing/f.txt",
        "a/f.txt/under-a-file",
        "a",
        "a//f.txt",
        "./a/f.txt",
        "a/../a/f.txt",
        "../secret.txt",
        "/etc/passwd",
        "a/" + "n" * 300,
    ]
    many = stat_many_inside(root, rels)
    assert set(many) == set(rels)
    plain = 0
    for rel in rels:
        try:
            one: os.stat_result | OSError = stat_inside(root, rel)
        except OSError as error:
            one = error
        got = many[rel]
        if isinstance(one, OSError):
            assert isinstance(got, OSError), rel
            assert (type(got), str(got), getattr(got, "code", None)) == (
                type(one),
                str(one),
                getattr(one, "code", None),
            ), rel
        else:
            assert isinstance(got, os.stat_result), (rel, got)
            assert (got.st_ino, got.st_mode, got.st_size) == (one.st_ino, one.st_mode, one.st_size)
            plain += rel in ("top.txt", "a/f.txt", "a/g.txt", "b/c/h.txt")
    assert plain == 4  # control: the plain files were answered, from their folders
    assert isinstance(many["a/link-out"], NotInside)  # and a link out is still refused
    assert isinstance(many["top-out"], NotInside)
