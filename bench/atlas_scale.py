"""The atlas at scale: the size of `moor atlas`'s page and its time to first render in
headless Chromium, at N memories and at N/10 (the ratio shows how it grows).

The workspace is check_speed.py's (N memories, each about one standard-library symbol),
with every tenth memory linking to the one before (`see-also`) and one file edited so its
memories drift. After an in-process `bind` and a warm-up check, the real CLI writes the page
(`moor atlas --output atlas.html`, timed: it checks every memory, recording nothing). Then
Chromium loads it from file:// with no network (`--dump-dom`), and the page reports, in its
root element, the milliseconds from navigation start to the end of its first render
(`data-first-render-ms`: reading the HTML, parsing the JSON, drawing) and of the drawing
alone (`data-render-ms`). Each figure is the best of ROUNDS. Nothing is asserted.

    python bench/atlas_scale.py [--n 10000] [--json PATH]

`bench/publish.py --only atlas` publishes `section` of a run at 1,000 and 10,000 memories;
tests/bench/test_atlas_scale.py reads it back with `published`.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_speed import bind_all, build_workspace, choose_symbols, moor

ROUNDS = 3
CHROMIUM = "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--proxy-server=127.0.0.1:9",
    "--window-size=1400,900",
)


@dataclass
class Scale:
    n: int
    page_bytes: int
    write_s: float  # `moor atlas --output atlas.html`, the whole command
    first_render_ms: int  # navigation start to the end of the first render, in the page
    draw_ms: int  # the drawing alone
    load_s: float  # Chromium started, page loaded and rendered, DOM dumped, Chromium exited
    nodes: int  # memory nodes in the rendered DOM


def render(page: Path) -> tuple[int, int, float, int]:
    with tempfile.TemporaryDirectory(prefix="moor-atlas-bench-") as profile:
        started = time.perf_counter()
        dom = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
            capture_output=True,
            check=True,
            timeout=600,
        ).stdout.decode("utf-8")
        seconds = time.perf_counter() - started
    first = re.search(r'data-first-render-ms="(\d+)"', dom)
    draw = re.search(r'data-render-ms="(\d+)"', dom)
    if first is None or draw is None:
        raise RuntimeError("the page did not finish its first render")
    return int(first.group(1)), int(draw.group(1)), seconds, dom.count(" data-memory=")


def measure(n: int) -> Scale:
    symbols, files = choose_symbols(n)
    with tempfile.TemporaryDirectory(prefix="moor-atlas-") as tmp:
        root = Path(tmp)
        build_workspace(root, symbols, files)
        for index in range(10, len(symbols), 10):
            memory = root / "memories" / f"m{index:05d}.md"
            text = memory.read_text(encoding="utf-8")
            memory.write_text(
                text.replace(
                    "---\n# ", f"links:\n  see-also: [memories/m{index - 1:05d}.md]\n---\n# ", 1
                ),
                encoding="utf-8",
            )
        _seconds, refused = bind_all(root)
        if refused:
            raise RuntimeError(f"bind refused {len(refused)}: {refused[:3]}")
        edited = root / symbols[0].path
        edited.write_text(edited.read_text(encoding="utf-8") + "\n\nX = 1\n", encoding="utf-8")
        moor(root, "check")  # warm: the page is written from a warm journal, as a user's
        writes, loads = [], []
        for _ in range(ROUNDS):
            seconds, result = moor(root, "atlas", "--output", "atlas.html")
            if result.returncode != 0:
                raise RuntimeError(f"moor atlas exited {result.returncode}: {result.stderr}")
            writes.append(seconds)
        page = root / "atlas.html"
        for _ in range(ROUNDS):
            loads.append(render(page))
        first, draw, _load, nodes = min(loads)
        return Scale(
            n, page.stat().st_size, min(writes), first, draw, min(row[2] for row in loads), nodes
        )


TABLE_HEAD = (
    "| memories | page | `moor atlas` | first render | drawing | Chromium load, all |",
    "|---:|---:|---:|---:|---:|---:|",
)
_ROW = re.compile(
    r"^\| ([\d,]+) \| (\d+\.\d) MiB \| (\d+\.\d\d) s \| ([\d,]+) ms \| ([\d,]+) ms \| "
    r"(\d+\.\d\d) s \|$"
)


def section(result: list[Scale]) -> str:
    """What docs/benchmarks.md publishes between its atlas markers: a row per size."""
    rows = [
        f"| {s.n:,} | {s.page_bytes / 2**20:.1f} MiB | {s.write_s:.2f} s | "
        f"{s.first_render_ms:,} ms | {s.draw_ms:,} ms | {s.load_s:.2f} s |"
        for s in sorted(result, key=lambda s: s.n)
    ]
    return "\n".join([*TABLE_HEAD, *rows])


@dataclass(frozen=True)
class Published:
    """One row of the published table, as `section` wrote it."""

    n: int
    page_mib: float
    write_s: float
    first_render_ms: int
    draw_ms: int
    load_s: float


def published(text: str) -> dict[int, Published]:
    """The rows of a published atlas table, by number of memories (`section`'s format)."""
    found = {}
    for line in text.splitlines():
        match = _ROW.match(line.strip())
        if match:
            n, page, write, first, draw, load = match.groups()
            found[int(n.replace(",", ""))] = Published(
                int(n.replace(",", "")),
                float(page),
                float(write),
                int(first.replace(",", "")),
                int(draw.replace(",", "")),
                float(load),
            )
    return found


def measure_checked(n: int) -> Scale:
    """`measure`, refusing a page that did not render a node per memory."""
    scale = measure(n)
    if scale.nodes != scale.n:
        raise RuntimeError(f"{scale.nodes} memory nodes rendered for {scale.n} memories")
    return scale


def print_table(big: Scale, small: Scale) -> None:
    print(section([small, big]))
    print(
        f"\n{big.n:,}/{small.n:,} memories: page {big.page_bytes / small.page_bytes:.1f}x, "
        f"first render {big.first_render_ms / max(small.first_render_ms, 1):.1f}x"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    small, big = measure_checked(args.n // 10), measure_checked(args.n)
    print_table(big, small)
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(small), asdict(big)], indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
