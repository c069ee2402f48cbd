"""One refusal class (`moor_store.refusal.RefusalError`): every error of the store and the
engine that carries a `code` for a program derives from it, so the surfaces catch one class
and none of them can miss a refusal another renders; and the engine's own refusal is raised
without importing the session."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

from moor_store.refusal import RefusalError

ROOT = Path(__file__).resolve().parents[2]
LOWER = {"store/moor_store": "moor_store", "engine/moor_engine": "moor_engine"}


def coded_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in the store and the engine that has a `code`."""
    found: dict[str, type[BaseException]] = {}
    for folder, package in LOWER.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            module = importlib.import_module(name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ != name or not issubclass(cls, BaseException):
                    continue
                if hasattr(cls, "code") or "self.code" in inspect.getsource(cls):
                    found[f"{name}.{cls.__qualname__}"] = cls
    return found


def test_every_coded_error_of_the_store_and_the_engine_is_a_refusal() -> None:
    found = coded_exceptions()
    # The scan finds what it must judge: one of the store's and the engine's own.
    assert {"moor_store.lockfile.LockError", "moor_engine.usage.UsageError"} <= set(found)
    not_refusals = [name for name, cls in found.items() if not issubclass(cls, RefusalError)]
    assert not_refusals == []
    # Positive control: a coded error that does not derive is what the check reports.
    stray = type("Stray", (Exception,), {"code": "stray"})
    assert not issubclass(stray, RefusalError)


def test_an_invalid_agent_name_is_refused_without_importing_the_session() -> None:
    script = (
        "import sys\n"
        "from moor_engine.memory import namespaces\n"
        "from moor_store.refusal import RefusalError\n"
        "try:\n"
        "    namespaces.reader('Not A Name')\n"
        "except RefusalError as error:\n"
        "    print(error.code, 'moor_engine.session' in sys.modules)\n"
        "namespaces.reader('claude')\n"
        "import moor_engine.session\n"
        "print('moor_engine.session' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    # The second line is the control: the check would see the session once imported.
    assert done.stdout.split("\n")[:2] == ["agent_invalid False", "True"]
