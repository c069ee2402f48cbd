"""Which CEL library custom anchors' rules should use (issue 25, item 3), by measurement:
import cost (a fresh process each time), compile and evaluation time of the issue's rule
over a 1,000-line roster, and what each says for every failure code moor must give.
moor depends on cel-expr-python (the choice this measured, docs/dependencies.md); run it
in a scratch environment that has both (`pip install cel-python cel-expr-python`).

    python bench/cel_candidates.py

Measured on the shared 2-core machine (issue 25, `anchors` branch; two runs, cold then
warm file cache): cel-expr-python 0.1.3 imports in 34 / 3 ms, compiles in 38 µs and
evaluates in 0.77 / 0.15 ms; cel-python 0.5.0 imports in 663 / 120 ms, compiles in
940 / 206 µs and evaluates in 13.8 / 7.7 ms. Errors: cel-expr-python returns an
evaluation error as a value (`divide by zero`, `NOT_FOUND: Key not found`: check its
type, it is not raised) and raises compile errors with their column (`<input>:1:6: Syntax
error`, `no matching overload for '_<_'`); cel-python raises Python-flavoured exceptions
without a column for evaluation errors. Neither refuses a non-boolean guard: moor must.
cel-expr-python's wheel is native and ~50 MB; cel-python is pure Python (~2 MB with lark).
"""

from __future__ import annotations

import importlib
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

RULE = "size(obs.lines) < size(state.lines)"
# moor's failure codes (DESIGN §5) and an expression that must give each.
FAILURES = {
    "divided_by_zero": "1 / 0 == 1",
    "no_such_field": "obs.nope == 1",
    "not_comparable": "'a' < 1",
    "unparseable": "size(",
    "guard_not_boolean": "size(obs.lines)",
}


def import_ms(statement: str) -> float:
    runs = []
    for _ in range(5):
        code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        out.check_returncode()
        runs.append(float(out.stdout))
    return statistics.median(runs) * 1000


def measure(name: str, compile_: Callable[[str], Any], run: Callable[[Any], Any]) -> None:
    program = compile_(RULE)
    started = time.perf_counter()
    for _ in range(200):
        result = run(program)
    evaluated = (time.perf_counter() - started) / 200
    started = time.perf_counter()
    for _ in range(50):
        compile_(RULE)
    compiled = (time.perf_counter() - started) / 50
    print(
        f"{name}: compile {compiled * 1e6:.0f} µs, evaluate {evaluated * 1e3:.2f} ms ({result!r})"
    )
    for code, expression in FAILURES.items():
        try:
            said: object = run(compile_(expression))
        except Exception as error:  # what each library raises is what is measured
            said = f"raises {type(error).__name__}: {error}"
        print(f"  {code}: {str(said)[:120]}")


def main() -> None:
    obs = {"lines": [f"test_{i}" for i in range(1000)]}
    state = {"lines": [f"test_{i}" for i in range(1001)]}
    print(f"import celpy: {import_ms('import celpy'):.1f} ms")
    print(f"import cel_expr_python: {import_ms('from cel_expr_python import cel'):.1f} ms")
    celpy = importlib.import_module("celpy")
    env = celpy.Environment()
    measure(
        "cel-python",
        lambda text: env.program(env.compile(text)),
        lambda program: program.evaluate(
            {"obs": celpy.json_to_cel(obs), "state": celpy.json_to_cel(state)}
        ),
    )
    cel = importlib.import_module("cel_expr_python.cel")
    native = cel.NewEnv(variables={"obs": cel.Type.DYN, "state": cel.Type.DYN})
    measure(
        "cel-expr-python",
        native.compile,
        lambda program: program.eval(data={"obs": obs, "state": state}).plain_value(),
    )


if __name__ == "__main__":
    main()
