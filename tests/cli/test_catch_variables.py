"""A renamed catch variable is not drift, through the real CLI (issue 23; memory:
a-renamed-catch-variable-is-not-drift)."""

from __future__ import annotations

import json
import re

import pytest
from moor.main import main

from tests.conftest import Workspace

# The shape the real-history trial met on zustand: an unused catch variable renamed `_e`.
STORAGE = """export function createStorage(getStorage: () => Storage) {
  let storage: Storage | undefined
  try {
    storage = getStorage()
  } catch (e) {
    console.warn('storage unavailable', e, fallback)
    return undefined
  }
  return storage
}
"""
RENAMED = STORAGE.replace("catch (e)", "catch (_e)").replace("', e,", "', _e,")


def check(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """The one memory's first anchor, from an in-process `moor check --format json`."""
    capsys.readouterr()
    code = main(["-C", str(ws.root), "check", "--format", "json", "--no-progress"])
    assert code in (0, 1), capsys.readouterr().err
    anchor: dict[str, object] = json.loads(capsys.readouterr().out)["memories"][0]["anchors"][0]
    return anchor


def bound(
    ws: Workspace, source: str, path: str = "src/storage.ts", name: str = "createStorage"
) -> None:
    ws.write(path, source)
    ws.memory("storage", f"{path}#{name}")
    assert main(["-C", str(ws.root), "bind"]) == 0


LOADER_PY = """def load(path, fallback):
    try:
        return read(path)
    except OSError as error:
        log("unreadable", error, fallback)
        return None
"""
LOADER_JAVA = """class Loader {
  Object load(String path, Object fallback) {
    try {
      return read(path);
    } catch (IOException error) {
      log("unreadable", error, fallback);
      return null;
    }
  }
}
"""
CASES = [
    ("src/storage.ts", "createStorage", STORAGE, "e", "_e"),
    ("src/loader.py", "load", LOADER_PY, "error", "err"),
    ("src/Loader.java", "Loader.load", LOADER_JAVA, "error", "ex"),
]


@pytest.mark.parametrize(
    ("path", "name", "source", "old", "new"), CASES, ids=[case[0] for case in CASES]
)
def test_a_renamed_catch_variable_is_current_and_a_capturing_rename_drifts(
    ws: Workspace,
    capsys: pytest.CaptureFixture[str],
    path: str,
    name: str,
    source: str,
    old: str,
    new: str,
) -> None:
    bound(ws, source, path, name)
    ws.write(path, re.sub(rf"\b{old}\b", new, source))
    assert check(ws, capsys)["state"] == "current"
    # Control: renamed to `fallback`, a name the clause reads, `fallback` now means the
    # caught error: the body drifted.
    ws.write(path, re.sub(rf"\b{old}\b", "fallback", source))
    anchor = check(ws, capsys)
    assert (anchor["state"], anchor["axes"]) == ("drifted", ["body"])


def _as_previous_normaliser(ws: Workspace, lock: str) -> None:
    """moor.lock as normaliser 4 wrote it: its derivation, digests it alone computed."""
    lock = re.sub(r"norm/\d+", "norm/4", lock)
    ws.write("moor.lock", re.sub(r'body = "[0-9a-f]+"', 'body = "' + "4" * 32 + '"', lock))


def test_a_lock_of_the_previous_normaliser_is_rebaselined_across_the_rename(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    bound(ws, STORAGE)
    lock = ws.read("moor.lock")
    _as_previous_normaliser(ws, lock)
    ws.write("src/storage.ts", RENAMED)
    assert check(ws, capsys)["state"] == "current"
    assert "norm/4" not in ws.read("moor.lock")  # re-baselined through the bound code
    assert check(ws, capsys)["state"] == "current"
    # Control: the same old lock over a real change since binding is drift.
    _as_previous_normaliser(ws, lock)
    ws.write("src/storage.ts", RENAMED.replace("return undefined", "return null"))
    anchor = check(ws, capsys)
    assert (anchor["state"], anchor["axes"]) == ("drifted", ["body"])
