"""What a recall costs its callers: one MCP `memory_search` tool call to a warm server (in
process over the SDK's in-memory transport, and over stdio to a real `moor mcp` process),
one-shot `moor recall` (a new process per query), beside the ranking alone; and start-up
(`moor --version`, a prompt hook answered in its own process) beside `python -c pass`.

The workspace is `recall_quality`'s: memories made offline from the docstrings of the
standard library, each `about:` its function, bound (`moor bind`), every mtime put 60 s back
(a workspace not edited this second), the index and caches warmed by one query. Baselines
are measured in the same run: ratios are what the tests gate.

    python bench/recall_latency.py [--sizes 1000,10000] [--queries N] [--json PATH]
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import recall_quality
from mcp.client._memory import InMemoryTransport
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

DEFAULT_SIZES = (1000, 10000)
DEFAULT_QUERIES = 60
ONE_SHOT_QUERIES = 15
# Bytecode is written and read as an installed moor's is.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {
    "NO_COLOR": "1",
    "MOOR_HOOK_SERVER": "0",
}


def moor_command() -> str:
    return str(Path(sys.executable).with_name("moor"))


def make_workspace(root: Path, size: int) -> list[str]:
    """`size` bound memories in `root`; the query texts (held out of the memories)."""
    functions = recall_quality.corpus(size)
    built = recall_quality.build_workspace(root, functions)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([moor_command(), "bind"], cwd=root, env=ENV, check=True, capture_output=True)
    past = time.time() - 60
    for folder, _dirs, files in os.walk(root):
        for name in [*files, "."]:
            os.utime(Path(folder) / name, (past, past))
    asked = recall_quality.queries(functions, built.paths, DEFAULT_QUERIES)
    return [query.text for query in asked]


def p50(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def p95(values: Sequence[float]) -> float:
    return recall_quality.percentile(values, 95)


async def _tool_calls(
    session: ClientSession, queries: Sequence[str]
) -> tuple[list[float], list[float]]:
    """Each query's `memory_search` time, and beside each a `tools/list` round trip (the
    protocol's own cost on this transport, in the same moment)."""
    for query in queries[:5]:  # warm: the index synced, caches read
        await session.call_tool("memory_search", {"query": query, "limit": 10})
    times: list[float] = []
    floor: list[float] = []
    for query in queries:
        started = time.perf_counter()
        result = await session.call_tool("memory_search", {"query": query, "limit": 10})
        times.append((time.perf_counter() - started) * 1000)
        if result.is_error:
            raise SystemExit(f"memory_search failed: {result.content}")
        started = time.perf_counter()
        await session.list_tools()
        floor.append((time.perf_counter() - started) * 1000)
    return times, floor


async def _in_memory(root: Path, queries: Sequence[str]) -> tuple[list[float], list[float]]:
    from moor_mcp.server import build

    async with (
        InMemoryTransport(build(root)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await _tool_calls(session, queries)


async def _over_stdio(root: Path, queries: Sequence[str]) -> tuple[list[float], list[float]]:
    server = StdioServerParameters(command=moor_command(), args=["mcp"], cwd=root, env=ENV)
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await _tool_calls(session, queries)


async def _tool_only(root: Path, queries: Sequence[str]) -> tuple[list[float], list[float]]:
    """Each `memory_search`'s CPU time in the server alone (`call_tool`: no protocol, no
    client), and the same call's CPU through the SDK's client over the in-memory transport
    (its JSON-schema validation of the result included)."""
    from moor_mcp.server import build

    server = build(root)
    arguments = [{"query": query, "limit": 10} for query in queries]
    for warm in arguments[:5]:
        await server.call_tool("memory_search", warm)
    alone: list[float] = []
    for each in arguments:
        started = time.process_time()
        await server.call_tool("memory_search", each)
        alone.append((time.process_time() - started) * 1000)
    client: list[float] = []
    async with (
        InMemoryTransport(build(root)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for warm in arguments[:5]:
            await session.call_tool("memory_search", warm)
        for each in arguments:
            started = time.process_time()
            await session.call_tool("memory_search", each)
            client.append((time.process_time() - started) * 1000)
    return alone, client


def tool_cpu(root: Path, queries: Sequence[str]) -> tuple[list[float], list[float]]:
    here = os.getcwd()
    os.chdir(root)
    try:
        result: tuple[list[float], list[float]] = anyio.run(_tool_only, root, queries)
        return result
    finally:
        os.chdir(here)


def in_process(root: Path, queries: Sequence[str]) -> tuple[list[float], list[float]]:
    here = os.getcwd()
    os.chdir(root)
    try:
        result: tuple[list[float], list[float]] = anyio.run(_in_memory, root, queries)
        return result
    finally:
        os.chdir(here)


def over_stdio(root: Path, queries: Sequence[str]) -> tuple[list[float], list[float]]:
    result: tuple[list[float], list[float]] = anyio.run(_over_stdio, root, queries)
    return result


def ranking(root: Path, queries: Sequence[str]) -> list[float]:
    """The ranking alone, trust states given (what `recall_quality` times as moor's)."""
    moor = recall_quality.Moor(root)
    moor.open()
    try:
        for query in queries[:5]:
            moor(query)
        times = []
        for query in queries:
            started = time.perf_counter()
            moor(query)
            times.append((time.perf_counter() - started) * 1000)
        return times
    finally:
        moor.close()


def timed(command: list[str], root: Path, stdin: str = "") -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=ENV, capture_output=True, text=True, input=stdin)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed: {done.stdout}{done.stderr}")
    return elapsed


def one_shot(root: Path, queries: Sequence[str]) -> dict[str, float]:
    """`moor recall` as a new process per query, beside `python -c pass` in the same run."""
    moor = moor_command()
    timed([moor, "recall", queries[0]], root)
    recall_ms: list[float] = []
    python_ms: list[float] = []
    for query in queries[:ONE_SHOT_QUERIES]:
        recall_ms.append(timed([moor, "recall", query], root))
        python_ms.append(timed([sys.executable, "-c", "pass"], root))
    return {
        "recall_p50_ms": p50(recall_ms),
        "recall_p95_ms": p95(recall_ms),
        "python_p50_ms": p50(python_ms),
    }


def start_up(root: Path, runs: int = 15) -> dict[str, float]:
    """`moor --version` and an unserved prompt hook asked again (its kept answer) beside
    `python -c pass`, interleaved so that load hits each alike."""
    moor = moor_command()
    prompt = json.dumps({"prompt": "what does this workspace remember?", "cwd": str(root)})
    timed([moor, "hooks", "run", "prompt"], root, prompt)
    version: list[float] = []
    hook: list[float] = []
    python: list[float] = []
    for _ in range(runs):
        python.append(timed([sys.executable, "-c", "pass"], root))
        version.append(timed([moor, "--version"], root))
        hook.append(timed([moor, "hooks", "run", "prompt"], root, prompt))
    base = p50(python)
    return {
        "python_p50_ms": base,
        "version_p50_ms": p50(version),
        "hook_p50_ms": p50(hook),
        "version_over_python": p50(version) / base,
        "hook_over_python": p50(hook) / base,
    }


def measure(sizes: Sequence[int], count: int, work: Path) -> dict[str, Any]:
    rows: list[dict[str, float]] = []
    startup: dict[str, float] = {}
    for size in sizes:
        root = work / f"latency-{size}"
        root.mkdir()
        queries = make_workspace(root, size)[:count]
        ranked = ranking(root, queries)
        tool, tool_floor = in_process(root, queries)
        stdio, stdio_floor = over_stdio(root, queries)
        alone, client = tool_cpu(root, queries)
        row = {
            "memories": float(size),
            "ranking_p50_ms": p50(ranked),
            "ranking_p95_ms": p95(ranked),
            "tool_p50_ms": p50(tool),
            "tool_p95_ms": p95(tool),
            "list_tools_p50_ms": p50(tool_floor),
            "stdio_p50_ms": p50(stdio),
            "stdio_p95_ms": p95(stdio),
            "stdio_list_tools_p50_ms": p50(stdio_floor),
            "tool_only_cpu_p50_ms": p50(alone),
            "tool_client_cpu_p50_ms": p50(client),
        }
        row["tool_over_ranking"] = row["tool_p50_ms"] / max(row["ranking_p50_ms"], 1e-6)
        if size == min(sizes):
            shot = one_shot(root, queries)
            row.update({f"one_shot_{k}": v for k, v in shot.items()})
            startup = start_up(root)
        rows.append(row)
        shutil.rmtree(root, ignore_errors=True)
    return {"sizes": rows, "start_up": startup, "load_average": os.getloadavg()[0]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    with tempfile.TemporaryDirectory(prefix="moor-recall-latency-") as folder:
        result = measure(sizes, args.queries, Path(folder))
    print(json.dumps(result, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
