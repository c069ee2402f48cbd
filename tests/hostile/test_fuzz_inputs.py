"""The fuzz benchmark's small budget, so CI keeps every parser free of internal errors."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def fuzz_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_inputs", ROOT / "bench/fuzz_inputs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def test_three_hundred_fuzzed_cases_of_each_kind_raise_no_internal_error(tmp_path: Path) -> None:
    tallies = fuzz_module().run(300, 20261202, tmp_path)
    assert set(tallies) == {"frontmatter", "references", "lock", "config"}
    for kind, tally in tallies.items():
        assert tally.cases == 300
        assert tally.internal == [], (kind, tally.internal[:3])
        # Control: the mutations reach both sides, inputs that parse and inputs refused.
        assert tally.accepted > 0 and tally.refused > 0, (kind, tally)


def test_the_fuzz_benchmark_prints_its_figures_and_a_summary(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench/fuzz_inputs.py"), "--cases", "50", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "config: 50 cases, 0 internal errors" in run.stdout
    assert '"internal_errors": 0' in run.stdout
