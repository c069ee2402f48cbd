"""Prompt-hook latency: `moor hooks run prompt` as Claude Code runs it, a new process per
prompt, at N memories (process start included).

A temporary git workspace gets one Python file of N small functions and N memories, one
about each, bound, every mtime put 60 s back; the recall index and moor's caches are
warmed by one run. Then R prompts naming one function each are fed as hook JSON on stdin,
one process each, and the wall time of each is taken, in two settings:

* unserved (`MOOR_HOOK_SERVER=0`): every hook answers in its own process. First each
  prompt once (the engine answers: the code named was not asked about before), then the
  same prompts again (nothing moved: the kept answer, `moor_engine.agents.hook_answers`);
* served, as in a Claude Code session: the session-start hook runs first and starts the
  workspace's hook server (`moor hooks serve`), then R other prompts, each naming code
  not asked about before (the server's engine answers), then the same again.

Beside it, in the same run, the baselines: `python -c pass` (the interpreter's own
start-up) and `moor --version` (the CLI's). Ratios are what the README test gates.

With `--tools`, the edit loop's hooks instead (`measure_tools`): N memories spread over
N/10 files (ten functions each, one memory about each function), and R tool calls on R
different files, each fed as Claude Code's JSON: `pre-tool-use` for an Edit (the ten
memories about the file are shown), then — the file edited first, one function's body
changed, not timed — `post-tool-use` (its memory is listed drifted, with its repair);
unserved, then served by the workspace's hook server.

    python bench/hook_latency.py [--memories 1000] [--runs 40] [--json PATH] [--tools]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Bytecode is written and read as an installed moor's is: a set-up that turns it off would
# measure compiling every module on every prompt, not the hook.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"NO_COLOR": "1"}
UNSERVED = ENV | {"MOOR_HOOK_SERVER": "0"}
SERVED = ENV | {"MOOR_HOOK_SERVER": "1"}


def make_workspace(root: Path, count: int) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (root / "memories").mkdir()
    (root / "src").mkdir()
    code = "".join(f"def func_{i}(value):\n    return value + {i}\n\n\n" for i in range(count))
    (root / "src" / "many.py").write_text(code, encoding="utf-8")
    for i in range(count):
        (root / "memories" / f"m{i}.md").write_text(
            f'---\nabout:\n  - "src/many.py#func_{i}"\n---\n# Function {i} adds {i}\n\n'
            f"func_{i} adds {i} to its value.\n\n## When this changes, ask\n- Still {i}?\n",
            encoding="utf-8",
        )
    subprocess.run(
        [sys.executable, "-P", "-m", "moor", "bind"],
        cwd=root,
        check=True,
        env=ENV,
        capture_output=True,
    )


def timed(
    command: list[str], root: Path, stdin: str = "", env: dict[str, str] | None = None
) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        command, cwd=root, input=stdin, capture_output=True, text=True, env=env or UNSERVED
    )
    elapsed = (time.perf_counter() - started) * 1000
    if result.returncode != 0 or (stdin and "additionalContext" not in result.stdout):
        raise SystemExit(f"{' '.join(command)} gave no answer: {result.stdout}{result.stderr}")
    return elapsed


def wait_for_server(moor: str, root: Path) -> None:
    """Until the server the session-start hook started answers (an event, not a pause)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = subprocess.run(
            [moor, "hooks", "status"], cwd=root, capture_output=True, text=True, env=SERVED
        )
        if "server runs" in status.stdout:
            return
        time.sleep(0.1)
    raise SystemExit("the hook server did not start")


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def measure(count: int, runs: int) -> dict[str, float]:
    moor = str(Path(sys.executable).with_name("moor"))
    root = Path(tempfile.mkdtemp(prefix="moor-hooks-"))
    try:
        make_workspace(root, count)
        hook = [moor, "hooks", "run", "prompt"]
        # Files written just now never vouch for a kept answer nor a cache row (the racy
        # window, as in git): put every mtime back, as a workspace that was not edited
        # this second. Setting a time moves the ctime, a change to every stat key, so the
        # caches are warmed after it, as they are in a workspace moor has run in.
        past = time.time() - 60
        for folder, _dirs, files in os.walk(root):
            for name in [*files, "."]:
                os.utime(Path(folder) / name, (past, past))
        warm = json.dumps({"prompt": "why does func_1 add one?", "cwd": str(root)})
        timed(hook, root, warm)  # warms the recall index, the parse caches, the kept answer

        def prompts(offset: int) -> list[str]:
            # 37 is prime to the count: R < 1,000 distinct functions, none in both sets.
            return [
                json.dumps(
                    {"prompt": f"is func_{(i * 37 + offset) % count} safe?", "cwd": str(root)}
                )
                for i in range(runs)
            ]

        first: list[float] = []
        again: list[float] = []
        python: list[float] = []
        version: list[float] = []
        for prompt in prompts(0):
            first.append(timed(hook, root, prompt))
            python.append(timed([sys.executable, "-c", "pass"], root))
            version.append(timed([moor, "--version"], root))
        for prompt in prompts(0):
            again.append(timed(hook, root, prompt))
        start = json.dumps({"source": "startup", "cwd": str(root)})
        subprocess.run(
            [moor, "hooks", "run", "session-start"],
            cwd=root,
            input=start,
            env=SERVED,
            check=True,
            capture_output=True,
            text=True,
        )
        wait_for_server(moor, root)
        served_first = [timed(hook, root, prompt, SERVED) for prompt in prompts(count // 2)]
        served_again = [timed(hook, root, prompt, SERVED) for prompt in prompts(count // 2)]
        python_p50 = statistics.median(python)
        return {
            "memories": count,
            "load_average": os.getloadavg()[0],
            "hook_p50_ms": statistics.median(first),
            "hook_p95_ms": p95(first),
            "again_p50_ms": statistics.median(again),
            "again_p95_ms": p95(again),
            "served_p50_ms": statistics.median(served_first),
            "served_p95_ms": p95(served_first),
            "served_again_p50_ms": statistics.median(served_again),
            "served_again_p95_ms": p95(served_again),
            "python_p50_ms": python_p50,
            "moor_version_p50_ms": statistics.median(version),
            "hook_over_python": statistics.median(first) / python_p50,
            "hook_over_moor_version": statistics.median(first) / statistics.median(version),
            "again_over_python": statistics.median(again) / python_p50,
            "served_over_python": statistics.median(served_first) / python_p50,
            "served_again_over_python": statistics.median(served_again) / python_p50,
        }
    finally:
        subprocess.run([moor, "hooks", "stop"], cwd=root, env=SERVED, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


PER_FILE = 10  # memories per file in the tool hooks' workspace


def make_spread_workspace(root: Path, count: int) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (root / "memories").mkdir()
    (root / "src").mkdir()
    for j in range(count // PER_FILE):
        code = "".join(
            f"def func_{j}_{i}(value):\n    return value + {i}\n\n\n" for i in range(PER_FILE)
        )
        (root / "src" / f"mod_{j}.py").write_text(code, encoding="utf-8")
        for i in range(PER_FILE):
            (root / "memories" / f"m{j}_{i}.md").write_text(
                f'---\nabout:\n  - "src/mod_{j}.py#func_{j}_{i}"\n---\n# Function {j}.{i}\n\n'
                f"func_{j}_{i} adds {i} to its value.\n\n## When this changes, ask\n"
                f"- Still {i}?\n",
                encoding="utf-8",
            )
    subprocess.run(
        [sys.executable, "-P", "-m", "moor", "bind"],
        cwd=root,
        check=True,
        env=ENV,
        capture_output=True,
    )


def measure_tools(count: int, runs: int) -> dict[str, float]:
    """The edit loop's hooks at `count` memories: p50/p95 of `pre-tool-use` and
    `post-tool-use`, unserved and served, with `python -c pass` beside them."""
    moor = str(Path(sys.executable).with_name("moor"))
    root = Path(tempfile.mkdtemp(prefix="moor-tool-hooks-"))
    files = count // PER_FILE
    try:
        make_spread_workspace(root, count)
        past = time.time() - 60
        for folder, _dirs, names in os.walk(root):
            for name in [*names, "."]:
                os.utime(Path(folder) / name, (past, past))

        def call(j: int, tool: str = "Edit") -> str:
            path = str(root / "src" / f"mod_{j}.py")
            return json.dumps(
                {
                    "session_id": "bench",
                    "cwd": str(root),
                    "tool_name": tool,
                    "tool_input": {"file_path": path},
                }
            )

        def edit(j: int) -> None:
            path = root / "src" / f"mod_{j}.py"
            path.write_text(
                path.read_text(encoding="utf-8").replace("value + 0\n", "value * 2\n", 1),
                encoding="utf-8",
            )

        pre = [moor, "hooks", "run", "pre-tool-use"]
        post = [moor, "hooks", "run", "post-tool-use"]
        timed(pre, root, call(0))  # warms the recall index and the caches
        picks = [(i * 37) % files for i in range(1, 2 * runs + 1)]
        unserved, served = picks[:runs], picks[runs:]
        result: dict[str, float] = {"memories": count}
        python = [timed([sys.executable, "-c", "pass"], root) for _ in range(runs)]
        for label, chosen, env in (("unserved", unserved, UNSERVED), ("served", served, SERVED)):
            if label == "served":
                subprocess.run(
                    [moor, "hooks", "run", "session-start"],
                    cwd=root,
                    input=json.dumps({"source": "startup", "cwd": str(root)}),
                    env=SERVED,
                    check=True,
                    capture_output=True,
                    text=True,
                )
                wait_for_server(moor, root)
            before = [timed(pre, root, call(j), env) for j in chosen]
            after = []
            for j in chosen:
                edit(j)
                after.append(timed(post, root, call(j), env))
            result[f"pre_{label}_p50_ms"] = statistics.median(before)
            result[f"pre_{label}_p95_ms"] = p95(before)
            result[f"post_{label}_p50_ms"] = statistics.median(after)
            result[f"post_{label}_p95_ms"] = p95(after)
        result["python_p50_ms"] = statistics.median(python)
        result["post_served_over_python"] = result["post_served_p50_ms"] / result["python_p50_ms"]
        result["load_average"] = os.getloadavg()[0]
        return result
    finally:
        subprocess.run([moor, "hooks", "stop"], cwd=root, env=SERVED, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--tools", action="store_true", help="the edit loop's tool hooks")
    args = parser.parse_args()
    result = (measure_tools if args.tools else measure)(args.memories, args.runs)
    for key, value in result.items():
        print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
