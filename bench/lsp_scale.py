"""The language server at scale: memory, first scan, saves and hovers at N and at N/10.

For N (default 10,000) and a baseline of N/10 measured in the same run, the workspace of
`check_speed.py` (copies of standard-library files, N memories each about one symbol) is
built and bound; one memory bound to a function is made drifted on disk before the real
server starts (`python -m moor lsp --stdio`, debug log, VS Code's capabilities for pushed
diagnostics), and the editor opens that memory right after `initialized`. Then:

* *open memory's diagnostics* — `initialized` → the opened memory's `drifted` diagnostic;
* *first scan settled* — `initialized` → the full first evaluation published;
* *RSS after the first scan* — once the server has settled its heap after that scan
  (`moor_lsp.heap`) and is quiet; *after 10 edits* — after five rounds of `lsp_latency.py`
  (a `pass` added to a bound function on disk, the drifted diagnostic awaited, the file
  restored, the diagnostic's clearing awaited: two edits a round);
* *save → diagnostic* — p95 of those rounds' write → drifted, minus the debounce (all
  `--rounds` of them), beside the floor: re-reading and parsing that file here;
* *hover* — p95 of `--hovers` hovers on the open memory's reference, quiet, and as many
  while a writer thread streams `didChange` notifications of that memory's buffer (every
  25th an edit of the code file it is about, drifting it in the buffer and back), a
  hover sent every `--hover-every` notifications written.

Each row is printed with its ratio to its baseline (N/10, the quiet hover, the first scan,
the re-parse). Nothing is asserted here (`tests/bench/test_readme_numbers.py` compares a
re-measurement with what docs/benchmarks.md publishes).

    python bench/lsp_scale.py [--n 10000] [--rounds 25] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lsp_latency
from check_speed import bind_all, build_workspace, choose_symbols
from lsp_latency import (
    Client,
    Session,
    Target,
    Timeout,
    capabilities,
    choose_targets,
    edit_round,
    published,
    rss_kib,
    server_env,
    stats,
)

DEFAULT_N = 10_000
DEFAULT_ROUNDS = 25
EDITS_FOR_RSS = 10  # RSS is read after this many edits (two a round)
DEFAULT_HOVERS = 30
DEFAULT_HOVER_EVERY = 200
CODE_EVERY = 25  # one didChange in this many edits the code buffer
TIMEOUT_S = 600.0
GOAL_RSS_MB = 150.0
GOAL_SAVE_P95_MS = 50.0
GOAL_HOVER_RATIO = 3.0
HOVER_LINE, HOVER_CHARACTER = 2, 6  # inside the one reference of a check_speed memory
_HEAP = "heap settled"
HEAP_WAIT_S = 30.0


@dataclass
class Scale:
    n: int
    files: int = 0
    rounds: int = 0
    debounce_s: float = math.nan
    open_first_s: float = math.nan  # initialized → the open memory's diagnostic
    first_scan_s: float = math.nan  # initialized → the full first evaluation published
    rss_first_mib: float = math.nan
    rss_edits_mib: float = math.nan
    drift_s: list[float] = field(default_factory=list)
    floor_s: list[float] = field(default_factory=list)
    hover_quiet_s: list[float] = field(default_factory=list)
    hover_flood_s: list[float] = field(default_factory=list)
    flood: int = 0
    error: str = ""

    def p95(self, values: list[float], minus: float = 0.0) -> float:
        return stats([v - minus for v in values])["p95"]

    @property
    def save_p95_s(self) -> float:
        return self.p95(self.drift_s, self.debounce_s)

    @property
    def hover_ratio(self) -> float:
        return self.p95(self.hover_flood_s) / self.p95(self.hover_quiet_s)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(
            save_p95_s=self.save_p95_s,
            hover_quiet_p95_s=self.p95(self.hover_quiet_s),
            hover_flood_p95_s=self.p95(self.hover_flood_s),
            hover_ratio=self.hover_ratio,
            floor_p95_s=self.p95(self.floor_s),
        )
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in data.items()}


class Editor:
    """The server, the memory it has open and the code file that memory is about."""

    def __init__(self, root: Path, opened: Target) -> None:
        self.root = root
        self.client = Client(
            [sys.executable, "-P", "-m", "moor", "lsp", "--stdio", "--log-level", "debug"],
            root,
            server_env(),
        )
        self.session = Session(self.client)
        self.opened = opened
        self.memory_uri = (root / opened.memory).as_uri()
        self.code_uri = (root / opened.path).as_uri()
        self.memory_text = (root / opened.memory).read_text(encoding="utf-8")
        self.versions = {self.memory_uri: 1, self.code_uri: 1}
        self.heap_settled = 0

    def observe(self, deadline: float) -> lsp_latency.Event:
        event = self.client.next_event(deadline)
        self.session.observe(event)
        if event.kind == "log" and _HEAP in event.line:
            self.heap_settled += 1
        return event

    def open(self, uri: str, language: str, text: str) -> None:
        self.client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}},
        )

    def change(self, i: int) -> None:
        if i % CODE_EVERY == CODE_EVERY - 1:
            uri = self.code_uri
            source = self.opened.changed if (i // CODE_EVERY) % 2 == 0 else self.opened.original
            text = source.decode("utf-8")
        else:
            uri, text = self.memory_uri, self.memory_text + f"\nEdit {i}.\n"
        self.versions[uri] += 1
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": [{"text": text}],
            },
        )

    def hover(self) -> float:
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
        if "error" in event.message or not event.message.get("result"):
            raise RuntimeError(f"hover was not answered with a hover: {event.message}")
        return event.at - started

    def settle(self, heaps: int = 0) -> None:
        """Quiet, with at least `heaps` heap settlings seen (a server that does not log
        them — an older one, measured for comparison — is given HEAP_WAIT_S)."""
        deadline = time.perf_counter() + TIMEOUT_S
        with contextlib.suppress(Timeout):
            waited = time.perf_counter() + HEAP_WAIT_S
            while self.heap_settled < heaps:
                self.observe(waited)
        self.session.settle(deadline)


def flood(editor: Editor, hovers: int, hover_every: int) -> tuple[list[float], int]:
    """`didChange` from a writer thread until `hovers` hovers, one sent every `hover_every`
    notifications written, have been answered; their latencies and the notifications
    written."""
    written = 0
    stop = threading.Event()
    failure: list[BaseException] = []

    def write() -> None:
        nonlocal written
        try:
            while not stop.is_set():
                editor.change(written)
                written += 1
        except BaseException as error:
            failure.append(error)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    latencies: list[float] = []
    next_hover = hover_every
    try:
        while len(latencies) < hovers and writer.is_alive():
            if written >= next_hover:
                latencies.append(editor.hover())
                next_hover = written + hover_every
            else:
                with contextlib.suppress(Timeout):
                    editor.observe(time.perf_counter() + 0.002)
    finally:
        stop.set()
        writer.join()
    if failure:
        raise RuntimeError(f"writing the flood failed: {failure[0]!r}")
    return latencies, written


def measure(n: int, rounds: int, hovers: int, hover_every: int) -> Scale:
    symbols, files = choose_symbols(n)
    scale = Scale(n=len(symbols), files=len(files), debounce_s=lsp_latency.debounce_seconds())
    with tempfile.TemporaryDirectory(prefix=f"moor-lsp-scale-{n}-") as scratch:
        root = Path(scratch).resolve()
        build_workspace(root, symbols, files)
        _seconds, refused = bind_all(root)
        if refused:
            print(f"  N={n}: {len(refused)} memories could not be bound, e.g. {refused[0]}")
        targets = choose_targets(root, symbols, rounds + 1)
        if len(targets) < 2:
            scale.error = "no memory is bound to a function that can be edited"
            return scale
        opened, rounds_targets = targets[0], targets[1:]
        (root / opened.path).write_bytes(opened.changed)  # drifted before the server starts
        editor = Editor(root, opened)
        try:
            serve(scale, editor, root, rounds_targets, hovers, hover_every)
        except (Timeout, RuntimeError) as failure:
            scale.error = f"{type(failure).__name__}: {failure}"
            print(f"  N={n}: {scale.error}")
        finally:
            editor.client.close()
            for target in targets:
                (root / target.path).write_bytes(target.original)
    return scale


def serve(
    scale: Scale,
    editor: Editor,
    root: Path,
    targets: list[Target],
    hovers: int,
    hover_every: int,
) -> None:
    client, session = editor.client, editor.session
    deadline = time.perf_counter() + TIMEOUT_S
    ident = client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": capabilities(),
            "initializationOptions": None,
        },
    )
    session.wait_message(lambda m: m.get("id") == ident and "method" not in m, deadline)
    client.notify("initialized", {})
    begun = time.perf_counter()
    editor.open(editor.memory_uri, "markdown", editor.memory_text)
    wanted = published(editor.memory_uri, drifted=True)
    full = f": {scale.n} memories in"
    while math.isnan(scale.open_first_s) or math.isnan(scale.first_scan_s):
        event = editor.observe(deadline)
        if event.kind == "message" and wanted(event.message) and math.isnan(scale.open_first_s):
            scale.open_first_s = event.at - begun
        if event.kind == "log" and full in event.line and "evaluation #" in event.line:
            scale.first_scan_s = event.at - begun
    editor.settle(heaps=1)
    scale.rss_first_mib = rss_kib(client.pid).get("VmRSS", 0) / 1024
    # The opened memory's code back as it was bound, then the rounds.
    opened = editor.opened
    (root / opened.path).write_bytes(opened.original)
    session.wait_message(published(editor.memory_uri, drifted=False), deadline)
    session.settle(deadline)
    run = lsp_latency.Run(n=scale.n, files=scale.files, rounds=0, debounce_s=scale.debounce_s)
    per_wait = max(10.0, 10 * scale.first_scan_s)
    for index, target in enumerate(targets):
        edit_round(run, session, root, target, index, per_wait, deadline)
        if 2 * run.rounds == EDITS_FOR_RSS:
            scale.rss_edits_mib = rss_kib(client.pid).get("VmRSS", 0) / 1024
    scale.rounds, scale.drift_s, scale.floor_s = run.rounds, run.drift_s, run.floor_s
    editor.open(editor.code_uri, "python", opened.original.decode("utf-8"))
    editor.settle()
    scale.hover_quiet_s = [editor.hover() for _ in range(hovers)]
    scale.hover_flood_s, scale.flood = flood(editor, hovers, hover_every)
    editor.settle()


# --------------------------------------------------------------------------------------------
# Output


def ratio(value: float, baseline: float) -> str:
    if math.isnan(value) or math.isnan(baseline) or baseline <= 0:
        return "-"
    return f"{value / baseline:.1f}x"


def rows(big: Scale, small: Scale) -> list[tuple[str, float, float, str, str]]:
    """(what, at N/10, at N, unit, the ratio N ÷ its baseline named)."""
    mib = 1.0
    ms = 1000.0
    return [
        (
            "RSS after the first scan",
            small.rss_first_mib * mib,
            big.rss_first_mib * mib,
            "MiB",
            f"{ratio(big.rss_first_mib, small.rss_first_mib)} N/10",
        ),
        (
            f"RSS after {EDITS_FOR_RSS} edits",
            small.rss_edits_mib,
            big.rss_edits_mib,
            "MiB",
            f"{ratio(big.rss_edits_mib, small.rss_edits_mib)} N/10",
        ),
        (
            "save → diagnostic p95 minus debounce",
            small.save_p95_s * ms,
            big.save_p95_s * ms,
            "ms",
            f"{ratio(big.save_p95_s, big.p95(big.floor_s))} re-parse",
        ),
        (
            "first scan settled",
            small.first_scan_s,
            big.first_scan_s,
            "s",
            f"{ratio(big.first_scan_s, small.first_scan_s)} N/10",
        ),
        (
            "open memory's diagnostics",
            small.open_first_s,
            big.open_first_s,
            "s",
            f"{ratio(big.open_first_s, big.first_scan_s)} first scan",
        ),
        (
            "hover p95, quiet",
            small.p95(small.hover_quiet_s) * ms,
            big.p95(big.hover_quiet_s) * ms,
            "ms",
            f"{ratio(big.p95(big.hover_quiet_s), small.p95(small.hover_quiet_s))} N/10",
        ),
        (
            "hover p95, during a didChange flood",
            small.p95(small.hover_flood_s) * ms,
            big.p95(big.hover_flood_s) * ms,
            "ms",
            f"{ratio(big.p95(big.hover_flood_s), big.p95(big.hover_quiet_s))} quiet",
        ),
    ]


def print_table(big: Scale, small: Scale) -> None:
    header = f"{'measure':<38} {'N=' + str(small.n):>10} {'N=' + str(big.n):>10}  unit  ratio"
    print(header)
    print("-" * len(header))
    for what, at_small, at_big, unit, against in rows(big, small):
        print(f"{what:<38} {at_small:>10.1f} {at_big:>10.1f}  {unit:<4}  {against}")
    for scale in (small, big):
        if scale.error:
            print(f"N={scale.n} error: {scale.error}")
    rss_mb = big.rss_first_mib * 2**20 / 1e6
    rss_edits_mb = big.rss_edits_mib * 2**20 / 1e6
    print(
        f"goals at N={big.n}: RSS ≤ {GOAL_RSS_MB:.0f} MB: {rss_mb:.0f} / {rss_edits_mb:.0f} MB; "
        f"save → diagnostic p95 ≤ {GOAL_SAVE_P95_MS:.0f} ms: {big.save_p95_s * 1000:.0f} ms; "
        f"hover during a flood ≤ {GOAL_HOVER_RATIO:.0f}x quiet: {big.hover_ratio:.1f}x"
    )


def measure_both(n: int, rounds: int, hovers: int, hover_every: int) -> tuple[Scale, Scale]:
    small = measure(max(n // 10, 100), rounds, hovers, hover_every)
    big = measure(n, rounds, hovers, hover_every)
    return big, small


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=DEFAULT_N)
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--hovers", type=int, default=DEFAULT_HOVERS)
    parser.add_argument("--hover-every", type=int, default=DEFAULT_HOVER_EVERY)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    print(
        f"moor lsp at scale — Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"N={args.n} against N/10, load average {os.getloadavg()[0]:.1f} at the start"
    )
    big, small = measure_both(args.n, args.rounds, args.hovers, args.hover_every)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    print()
    print_table(big, small)
    if args.json is not None:
        payload = {
            "python": platform.python_version(),
            "big": big.as_json(),
            "small": small.as_json(),
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 1 if big.error or small.error else 0


if __name__ == "__main__":
    sys.exit(main())
