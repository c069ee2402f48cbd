"""Does the language server's memory stay flat under a flood of edits, and does it still answer?

A small workspace (one code file with two functions, one memory about each, bound) is built
in a temporary folder; the real server runs as a subprocess (`python -m moor lsp --stdio`,
debug log on stderr), driven by the stdio JSON-RPC client of `lsp_latency.py`. The editor
opens the memory and the code file, then:

1. *quiet*: after the first scan has settled, `--hovers` hovers on the memory's reference,
   one after the other — the quiet hover latency;
2. *warm-up*: a flood as in 4. of `--warmup` notifications, then settle — whatever is
   allocated once (documents, overlays, caches, allocator arenas) is allocated before the
   baseline — the first flood raises RSS once by ~2 MiB however long it is;
3. RSS (`VmRSS` of /proc/PID/status) — the baseline;
4. *flood*: `--count` `didChange` notifications, alternating between the memory and the code
   file (each a new full text), written as fast as the pipe takes them by one thread while
   the main thread sends a hover every `--hover-every` notifications and times its answer;
5. settle — the evaluation of the newest change is logged, the server is quiet, and a last
   hover is answered (every notification before it has been read and handled) — then RSS
   again.

The result is RSS growth per 100,000 notifications (goal: <= 10 MiB) and the hover p95
during the flood as a ratio of the quiet p95 measured in the same run. Nothing is asserted
here (`tests/lsp/test_soak.py` asserts a smaller run).

    python bench/lsp_soak.py [--count 100000] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_latency import Client, Session, capabilities, rss_kib, server_env, stats

GOAL_MIB_PER_100K = 10.0
DEFAULT_COUNT = 100_000
DEFAULT_WARMUP = 10_000
DEFAULT_HOVERS = 200
DEFAULT_HOVER_EVERY = 500
TIMEOUT_S = 120.0  # for any one wait (settling, one hover)

CODE = "def g():\n    return 2\n\n\ndef h():\n    return 2\n"
MEMORY = """---
about:
  - "src/a.py#g"
  - "src/a.py#h"
---
# retry

A decision about this code.

## When this changes, ask
- Does it still hold?
"""
HOVER_LINE, HOVER_CHARACTER = 2, 8  # inside `src/a.py#g`


def build_workspace(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "memories").mkdir()
    (root / "src" / "a.py").write_text(CODE, encoding="utf-8")
    (root / "memories" / "retry.md").write_text(MEMORY, encoding="utf-8")
    subprocess.run(
        [sys.executable, "-P", "-m", "moor", "bind"],
        cwd=root,
        env=server_env(),
        check=True,
        capture_output=True,
    )


@dataclass
class Soak:
    count: int
    warmup: int
    rss_before_kib: int
    rss_after_kib: int
    hwm_kib: int
    flood_seconds: float
    quiet_hover: dict[str, float]
    flood_hover: dict[str, float]
    flood_hovers: int

    @property
    def growth_mib_per_100k(self) -> float:
        return (self.rss_after_kib - self.rss_before_kib) / 1024 * 100_000 / self.count

    @property
    def hover_ratio(self) -> float:
        return self.flood_hover["p95"] / self.quiet_hover["p95"]


class Editor:
    """The server and the two documents it has open."""

    def __init__(self, root: Path, command: list[str]) -> None:
        self.root = root
        self.client = Client(command, root, server_env())
        self.session = Session(self.client)
        self.memory_uri = (root / "memories" / "retry.md").as_uri()
        self.code_uri = (root / "src" / "a.py").as_uri()
        self.versions = {self.memory_uri: 1, self.code_uri: 1}

    @property
    def pid(self) -> int:
        return self.client.pid

    def start(self) -> None:
        deadline = time.perf_counter() + TIMEOUT_S
        ident = self.client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": self.root.as_uri(),
                "workspaceFolders": [{"uri": self.root.as_uri(), "name": "soak"}],
                "capabilities": capabilities(),
            },
        )
        self.session.wait_message(lambda m: m.get("id") == ident, deadline)
        self.client.notify("initialized", {})
        for uri, language, text in (
            (self.memory_uri, "markdown", MEMORY),
            (self.code_uri, "python", CODE),
        ):
            self.client.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": language,
                        "version": 1,
                        "text": text,
                    }
                },
            )
        self.settle()

    def change(self, i: int) -> None:
        """Edit i: the memory (an extra line in its body) or the code (a changed body)."""
        if i % 2:
            uri, text = self.memory_uri, MEMORY + f"\nEdit {i}.\n"
        else:
            uri, text = self.code_uri, CODE.replace("return 2", f"return {i}", 1)
        self.versions[uri] += 1
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": [{"text": text}],
            },
        )

    def hover(self) -> float:
        """Seconds from sending a hover on the memory's reference to its answer."""
        started = time.perf_counter()
        ident = self.client.request(
            "textDocument/hover",
            {
                "textDocument": {"uri": self.memory_uri},
                "position": {"line": HOVER_LINE, "character": HOVER_CHARACTER},
            },
        )
        event = self.session.wait_message(
            lambda m: m.get("id") == ident and "method" not in m,
            time.perf_counter() + TIMEOUT_S,
        )
        answer = event.message
        if "error" in answer or not answer.get("result"):
            raise RuntimeError(f"hover was not answered with a hover: {answer}")
        return event.at - started

    def settle(self) -> None:
        """The newest change is evaluated, the server is quiet, and it answers a hover."""
        self.session.settle(time.perf_counter() + TIMEOUT_S)
        self.hover()

    def rss(self) -> dict[str, int]:
        return rss_kib(self.pid)

    def close(self) -> None:
        self.client.close()


def flood(editor: Editor, count: int, hover_every: int) -> tuple[list[float], float]:
    """`count` didChange from a writer thread; a hover every `hover_every` of them."""
    written = 0
    failure: list[BaseException] = []

    def write() -> None:
        nonlocal written
        try:
            for i in range(count):
                editor.change(i)
                written = i + 1
        except BaseException as error:  # reported by the main thread
            failure.append(error)

    started = time.perf_counter()
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    latencies: list[float] = []
    next_hover = hover_every
    while writer.is_alive():
        if written >= next_hover:
            latencies.append(editor.hover())
            next_hover = written + hover_every
        else:
            # Drain what the server says meanwhile (its log of each change) so that the
            # queue stays small; a short wait, the writer is the one making progress.
            try:
                editor.session.observe(editor.client.next_event(time.perf_counter() + 0.005))
            except Exception as error:
                if type(error).__name__ != "Timeout":
                    raise
    writer.join()
    seconds = time.perf_counter() - started
    if failure:
        raise RuntimeError(f"writing the flood failed: {failure[0]!r}")
    return latencies, seconds


def soak(
    count: int,
    *,
    warmup: int = DEFAULT_WARMUP,
    hovers: int = DEFAULT_HOVERS,
    hover_every: int = DEFAULT_HOVER_EVERY,
    command: list[str] | None = None,
) -> Soak:
    """One run on a fresh workspace; `command` starts the server (default: `moor lsp`)."""
    with tempfile.TemporaryDirectory(prefix="moor-soak-") as folder:
        root = Path(folder).resolve()
        build_workspace(root)
        editor = Editor(
            root, command or [sys.executable, "-P", "-m", "moor", "lsp", "--log-level", "debug"]
        )
        try:
            editor.start()
            quiet = [editor.hover() for _ in range(hovers)]
            flood(editor, warmup, hover_every)  # the same work as measured, once
            editor.settle()
            before = editor.rss()
            latencies, seconds = flood(editor, count, hover_every)
            editor.settle()
            after = editor.rss()
        finally:
            editor.close()
    return Soak(
        count=count,
        warmup=warmup,
        rss_before_kib=before["VmRSS"],
        rss_after_kib=after["VmRSS"],
        hwm_kib=after.get("VmHWM", 0),
        flood_seconds=seconds,
        quiet_hover=stats(quiet),
        flood_hover=stats(latencies),
        flood_hovers=len(latencies),
    )


def report(run: Soak) -> dict[str, Any]:
    return {
        **asdict(run),
        "growth_mib_per_100k": run.growth_mib_per_100k,
        "goal_mib_per_100k": GOAL_MIB_PER_100K,
        "hover_ratio_flood_to_quiet_p95": run.hover_ratio,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    parser.add_argument("--warmup", type=int, default=DEFAULT_WARMUP)
    parser.add_argument("--hovers", type=int, default=DEFAULT_HOVERS)
    parser.add_argument("--hover-every", type=int, default=DEFAULT_HOVER_EVERY)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    options = parser.parse_args(argv)
    run = soak(
        options.count,
        warmup=options.warmup,
        hovers=options.hovers,
        hover_every=options.hover_every,
    )
    ms = 1000.0
    print(f"notifications: {run.count:,} didChange in {run.flood_seconds:.1f} s")
    print(
        f"RSS: {run.rss_before_kib / 1024:.1f} MiB before, {run.rss_after_kib / 1024:.1f} MiB "
        f"after (peak {run.hwm_kib / 1024:.1f} MiB)"
    )
    print(
        f"RSS growth: {run.growth_mib_per_100k:.2f} MiB per 100,000 notifications "
        f"(goal <= {GOAL_MIB_PER_100K:.0f} MiB)"
    )
    print(
        f"hover p95: {run.flood_hover['p95'] * ms:.1f} ms during the flood "
        f"({run.flood_hovers} hovers) vs {run.quiet_hover['p95'] * ms:.1f} ms quiet: "
        f"ratio {run.hover_ratio:.1f}x"
    )
    if options.json:
        options.json.write_text(json.dumps(report(run), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
