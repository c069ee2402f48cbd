"""How long the language server takes from a code edit on disk to the diagnostic on the memory.

For each N, the workspace of `check_speed.py` (copies of standard-library files and N memories,
each about one symbol) is built and bound; then the real server runs as a subprocess
(`python -m moor lsp --stdio`), driven over stdio by a small JSON-RPC client in this file with
VS Code-like capabilities, taking diagnostics in one of three shapes (`--shapes`): *push* (no
`textDocument.diagnostic`: the server publishes), *pull+refresh* (the client has the memories
open, pulls them, and pulls again whenever the server sends `workspace/diagnostic/refresh`,
as VS Code's language client does), and *pull-no-refresh* (the client can pull but cannot be
asked to, as Neovim 0.11: the server publishes to it). After `initialize` / `initialized`
and the first scan has settled, each round:

* picks a memory bound to a function (deterministically, spread over all memories);
* rewrites that function's file on disk with one statement (`pass`) added at the end of the
  function's body — valid Python that moves the body digest — and notes the time;
* waits for `textDocument/publishDiagnostics` on that memory's URI with code `drifted`
  (the *drift* latency), lets the server settle, restores the file, and waits for the
  diagnostic to clear (the *clear* latency), then lets it settle again.

Nothing but the server's own file watcher tells it about the edits (no `didSave`, no
`didChangeWatchedFiles`), as when a formatter, `git checkout` or an agent writes the file.
Each latency is also shown minus the server's debounce window (`DEBOUNCE_SECONDS`), beside
the floor: re-reading and tree-sitter-parsing that one file in this process (best of 5).
The server runs with `--log-level debug`, whose stderr tells when each change was scheduled
and how long each evaluation took. Nothing is asserted: this is a measurement.

    python bench/lsp_latency.py [--sizes 1000,10000] [--rounds 50] [--shapes push,...] [--json PATH]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import math
import os
import platform
import queue
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_speed import Symbol, bind_all, build_workspace, choose_symbols

DEFAULT_SIZES = (1000,)
DEFAULT_ROUNDS = 50
DEFAULT_TIMEOUT_S = 600.0  # per N, from the server's start (building the workspace not counted)
TARGET_P95_S = 0.050  # drift latency, excluding the debounce
QUIET_S = 0.4  # no server activity for this long (after its last evaluation): settled
FLOOR_ROUNDS = 5

_CHANGE = re.compile(r"change #(\d+):")
_EVALUATED = re.compile(r"evaluation #(\d+): (\d+) memories in ([0-9.]+) s")
_DROPPED = re.compile(r"evaluation #(\d+) dropped")


def debounce_seconds() -> float:
    from moor_lsp.server import DEBOUNCE_SECONDS

    return DEBOUNCE_SECONDS


# --------------------------------------------------------------------------------------------
# A minimal LSP client over the server's stdio


class Timeout(Exception):
    pass


@dataclass
class Event:
    at: float  # time.perf_counter() when it arrived
    kind: str  # "message" (stdout JSON-RPC) or "log" (a stderr line) or "eof"
    message: dict[str, Any] = field(default_factory=dict)
    line: str = ""


class Client:
    """Writes requests and notifications; two threads read stdout and stderr into one queue.

    Requests from the server are answered in the reader thread at once (null, or one null
    per item for `workspace/configuration`), so the server never waits on this process."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.events: queue.Queue[Event] = queue.Queue()
        self._write_lock = threading.Lock()
        self._next_id = 0
        self.log_tail: list[str] = []
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _send(self, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode("utf-8")
        stdin = self.process.stdin
        assert stdin is not None
        with self._write_lock:
            stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            stdin.flush()

    def request(self, method: str, params: object) -> int:
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def notify(self, method: str, params: object) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _answer(self, message: dict[str, Any]) -> None:
        result: object = None
        if message["method"] == "workspace/configuration":
            result = [None for _ in message.get("params", {}).get("items", [])]
        with contextlib.suppress(OSError, ValueError):
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _read_stdout(self) -> None:
        stream: IO[bytes] | None = self.process.stdout
        assert stream is not None
        try:
            while True:
                length = None
                while True:
                    header = stream.readline()
                    if not header:
                        return
                    header = header.strip()
                    if not header:
                        break
                    name, _, value = header.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    continue
                body = stream.read(length)
                if len(body) < length:
                    return
                arrived = time.perf_counter()
                message = json.loads(body)
                if "method" in message and "id" in message:
                    self._answer(message)
                self.events.put(Event(arrived, "message", message=message))
        finally:
            self.events.put(Event(time.perf_counter(), "eof"))

    def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip()
            self.log_tail = [*self.log_tail[-40:], line]
            self.events.put(Event(time.perf_counter(), "log", line=line))

    def next_event(self, deadline: float) -> Event:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            raise Timeout
        try:
            return self.events.get(timeout=remaining)
        except queue.Empty:
            raise Timeout from None

    def close(self, grace: float = 5.0) -> None:
        """`shutdown`, `exit`, then kill whatever is left."""
        process = self.process
        try:
            if process.poll() is None:
                ident = self.request("shutdown", None)
                deadline = time.perf_counter() + grace
                with contextlib.suppress(Timeout):
                    while True:
                        event = self.next_event(deadline)
                        if event.kind == "eof" or event.message.get("id") == ident:
                            break
                self.notify("exit", None)
        except (OSError, ValueError):
            pass
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=grace)
        for stream in (process.stdin, process.stdout, process.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()


# How a client takes diagnostics (issue 10): the server decides by these capabilities.
PUSH = "push"  # no pull support (eglot, Helix; VS Code without its pull feature)
PULL_REFRESH = "pull+refresh"  # pulls, and re-pulls when asked (VS Code's language client)
PULL_NO_REFRESH = "pull-no-refresh"  # pulls on its own edits only (Neovim 0.11)
SHAPES = (PUSH, PULL_REFRESH, PULL_NO_REFRESH)
REFRESH = "workspace/diagnostic/refresh"


def capabilities(shape: str = PUSH) -> dict[str, Any]:
    """What VS Code announces, as far as moor looks, with diagnostics taken in `shape`."""
    found = _capabilities()
    if shape != PUSH:
        found["textDocument"]["diagnostic"] = {
            "dynamicRegistration": False,
            "relatedDocumentSupport": False,
        }
    if shape == PULL_REFRESH:
        found["workspace"]["diagnostics"] = {"refreshSupport": True}
    return found


def _capabilities() -> dict[str, Any]:
    return {
        "general": {"positionEncodings": ["utf-16"]},
        "window": {"workDoneProgress": True, "showMessage": {}},
        "workspace": {
            "configuration": True,
            "workspaceFolders": True,
            "didChangeConfiguration": {"dynamicRegistration": True},
            "didChangeWatchedFiles": {"dynamicRegistration": True, "relativePatternSupport": True},
            "executeCommand": {"dynamicRegistration": True},
            "codeLens": {"refreshSupport": True},
        },
        "textDocument": {
            "synchronization": {"dynamicRegistration": True, "didSave": True},
            "publishDiagnostics": {
                "relatedInformation": True,
                "versionSupport": False,
                "tagSupport": {"valueSet": [1, 2]},
                "codeDescriptionSupport": True,
                "dataSupport": True,
            },
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "codeAction": {"dataSupport": True, "resolveSupport": {"properties": ["edit"]}},
            "codeLens": {},
            "definition": {"linkSupport": True},
        },
    }


class Session:
    """The server under test, and what its stderr says about its evaluations."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.last_change = 0  # the newest scheduled change
        self.last_done = 0  # the newest evaluation that ended (published or dropped)
        self.last_activity = time.perf_counter()
        self.evaluations: list[tuple[float, int, float]] = []  # (arrived, generation, s)
        self.changes: list[float] = []  # when each "change #g" line arrived
        self.refreshes = 0  # `workspace/diagnostic/refresh` requests from the server

    def observe(self, event: Event) -> None:
        if event.kind == "eof":
            tail = "\n".join(self.client.log_tail[-15:])
            raise RuntimeError(f"the server exited ({self.client.process.poll()}):\n{tail}")
        self.last_activity = event.at
        if event.kind == "message" and event.message.get("method") == REFRESH:
            self.refreshes += 1
        if event.kind != "log":
            return
        if found := _CHANGE.search(event.line):
            self.last_change = max(self.last_change, int(found.group(1)))
            self.changes.append(event.at)
        elif found := _EVALUATED.search(event.line):
            generation = int(found.group(1))
            self.last_done = max(self.last_done, generation)
            self.evaluations.append((event.at, generation, float(found.group(3))))
        elif found := _DROPPED.search(event.line):
            self.last_done = max(self.last_done, int(found.group(1)))

    def wait_message(self, wanted: Any, deadline: float) -> Event:
        while True:
            event = self.client.next_event(deadline)
            self.observe(event)
            if event.kind == "message" and wanted(event.message):
                return event

    def settle(self, deadline: float, quiet: float = QUIET_S) -> None:
        """Until the newest change is evaluated and nothing has happened for `quiet` s."""
        while True:
            now = time.perf_counter()
            idle = now - self.last_activity
            if self.last_done >= self.last_change and self.last_done > 0 and idle >= quiet:
                return
            wait_until = min(deadline, now + max(quiet - idle, 0.01))
            try:
                self.observe(self.client.next_event(wait_until))
            except Timeout:
                if time.perf_counter() >= deadline:
                    raise


def rss_kib(pid: int) -> dict[str, int]:
    found: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0])
    return found


# --------------------------------------------------------------------------------------------
# The edits


@dataclass(frozen=True)
class Target:
    memory: str  # workspace-relative memory file
    path: str  # workspace-relative code file
    qname: str
    original: bytes
    changed: bytes


def function_node(tree: ast.Module, qname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    head, _, tail = qname.partition(".")
    for node in tree.body:
        if getattr(node, "name", None) != head:
            continue
        if not tail:
            return node if isinstance(node, functions) else None
        if isinstance(node, ast.ClassDef):
            for child in node.body:
                if isinstance(child, functions) and child.name == tail:
                    return child
    return None


def edited(
    source: bytes, qname: str, tree: ast.Module | None = None, validate: bool = True
) -> bytes | None:
    """`source` with `pass` added at the end of the body of function `qname`, or None when
    the function cannot be edited so simply (one-line bodies, not a function). `tree`:
    `source` parsed already (choosing targets in a large file parses it once)."""
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return None
    node = function_node(tree, qname)
    if node is None or node.end_lineno is None:
        return None
    first = node.body[0]
    if first.lineno == node.lineno or any(s.lineno == node.lineno for s in node.body):
        return None
    lines = source.splitlines(keepends=True)
    indent = lines[first.lineno - 1][: first.col_offset]
    if indent.strip() or first.col_offset == 0:
        return None
    newline = b"\r\n" if lines[0].endswith(b"\r\n") else b"\n"
    end = node.end_lineno
    changed = b"".join([*lines[:end], indent + b"pass" + newline, *lines[end:]])
    return changed if not validate or _parses(changed) else None


def _parses(source: bytes) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def choose_targets(root: Path, symbols: list[Symbol], rounds: int) -> list[Target]:
    """`rounds` memories bound to functions, spread evenly over all memories."""
    candidates: list[Target] = []
    sources: dict[str, tuple[bytes, ast.Module]] = {}
    for index, symbol in enumerate(symbols):
        if symbol.path not in sources:
            data = (root / symbol.path).read_bytes()
            sources[symbol.path] = (data, ast.parse(data))
        source, tree = sources[symbol.path]
        changed = edited(source, symbol.qname, tree, validate=False)
        if changed is not None:
            memory = f"memories/m{index:05d}.md"
            candidates.append(Target(memory, symbol.path, symbol.qname, source, changed))
    if not candidates:
        return []
    step = max(1, len(candidates) // rounds)
    chosen = [candidates[(i * step) % len(candidates)] for i in range(rounds)]
    # Validated only once chosen: parsing every candidate's edit took a minute at N=1000.
    return [target for target in chosen if _parses(target.changed)]


def parse_floor(path: Path) -> float:
    import tree_sitter_python
    from tree_sitter import Language, Parser

    parser = Parser(Language(tree_sitter_python.language()))
    best = math.inf
    for _ in range(FLOOR_ROUNDS):
        started = time.perf_counter()
        parser.parse(path.read_bytes())
        best = min(best, time.perf_counter() - started)
    return best


# --------------------------------------------------------------------------------------------
# One size


@dataclass
class Run:
    n: int
    files: int
    rounds: int
    debounce_s: float
    shape: str = PUSH
    setup_s: float = math.nan  # choosing symbols, building the workspace, binding
    startup_s: float = math.nan  # initialize → first scan settled
    first_scan_s: float = math.nan  # the server's own figure for its first evaluation
    rss_mib: float = math.nan  # after the first scan
    hwm_mib: float = math.nan  # peak RSS by then
    rss_end_mib: float = math.nan  # after all rounds
    drift_s: list[float] = field(default_factory=list)
    clear_s: list[float] = field(default_factory=list)
    evaluation_s: list[float] = field(default_factory=list)  # the server's, per evaluation
    floor_s: list[float] = field(default_factory=list)  # per drift round
    notice_s: list[float] = field(default_factory=list)  # write → the server schedules
    transitions: int = 0  # edits written (two per round)
    timed_out: list[str] = field(default_factory=list)  # transitions never seen in time
    out_of_time: bool = False  # --timeout ended the rounds early
    error: str = ""
    wall_s: float = 0.0

    def as_json(self) -> dict[str, object]:
        def summary(values: list[float]) -> dict[str, float]:
            return {k: round(v, 6) for k, v in stats(values).items()}

        data: dict[str, Any] = asdict(self)
        data["summary"] = {
            "drift_s": summary(self.drift_s),
            "drift_minus_debounce_s": summary([v - self.debounce_s for v in self.drift_s]),
            "clear_s": summary(self.clear_s),
            "clear_minus_debounce_s": summary([v - self.debounce_s for v in self.clear_s]),
            "evaluation_s": summary(self.evaluation_s),
            "floor_s": summary(self.floor_s),
            "notice_s": summary(self.notice_s),
        }
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in data.items()}


def stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": math.nan, "p95": math.nan, "max": math.nan}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {"p50": statistics.median(ordered), "p95": p95, "max": ordered[-1]}


def server_env() -> dict[str, str]:
    # As a user runs it: with Python's byte-code cache (see check_speed.moor).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    return env


def published(uri: str, drifted: bool) -> Any:
    """Whether a message publishes diagnostics for `uri`, with (or without) `drifted`."""

    def wanted(message: dict[str, Any]) -> bool:
        if message.get("method") != "textDocument/publishDiagnostics":
            return False
        params = message["params"]
        if params["uri"] != uri:
            return False
        codes = {str(d.get("code")) for d in params["diagnostics"]}
        return ("drifted" in codes) == drifted

    return wanted


def pull_until(session: Session, uri: str, drifted: bool, limit: float) -> Event:
    """As a pulling client with refresh support: pull the memory, and pull again each
    time the server asks, until the answer has (or has no longer) `drifted`."""
    client = session.client
    while True:
        asked = session.refreshes
        ident = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        event = session.wait_message(
            lambda m, ident=ident: m.get("id") == ident and "method" not in m, limit
        )
        result = event.message.get("result") or {}
        codes = {str(d.get("code")) for d in result.get("items", [])}
        if ("drifted" in codes) == drifted:
            return event
        if session.refreshes == asked:
            session.wait_message(lambda m: m.get("method") == REFRESH, limit)


def measure(n: int, rounds: int, timeout: float, shape: str = PUSH) -> Run:
    return measure_shapes(n, rounds, timeout, (shape,))[0]


def measure_shapes(n: int, rounds: int, timeout: float, shapes: tuple[str, ...]) -> list[Run]:
    """One workspace of N memories, and one server per delivery shape in turn."""
    started = time.perf_counter()
    symbols, files = choose_symbols(n)
    debounce = debounce_seconds()
    runs = [
        Run(n=len(symbols), files=len(files), rounds=0, debounce_s=debounce, shape=shape)
        for shape in shapes
    ]
    with tempfile.TemporaryDirectory(prefix=f"moor-lsp-{n}-") as scratch:
        root = Path(scratch).resolve()
        build_workspace(root, symbols, files)
        _bind_s, refused = bind_all(root)
        if refused:
            print(f"  N={n}: {len(refused)} memories could not be bound, e.g. {refused[0]}")
        targets = choose_targets(root, symbols, rounds)
        setup_s = time.perf_counter() - started
        for run in runs:
            begun = time.perf_counter()
            run.setup_s = setup_s
            if not targets:
                run.error = "no memory is bound to a function that can be edited"
                continue
            serve(run, root, targets, timeout)
            run.wall_s = time.perf_counter() - begun
    return runs


def serve(run: Run, root: Path, targets: list[Target], timeout: float) -> None:
    deadline = time.perf_counter() + timeout
    client = Client(
        [sys.executable, "-P", "-m", "moor", "lsp", "--stdio", "--log-level", "debug"],
        root,
        server_env(),
    )
    session = Session(client)
    try:
        run_rounds(run, session, root, targets, deadline)
    except (Timeout, RuntimeError) as failure:
        run.error = f"{type(failure).__name__}: {failure}"
        print(f"  N={run.n} {run.shape}: {run.error}")
    finally:
        client.close()
        for target in targets:  # never leave an edit behind
            with contextlib.suppress(OSError):
                (root / target.path).write_bytes(target.original)
    run.evaluation_s = [seconds for _at, _generation, seconds in session.evaluations[1:]]


def run_rounds(
    run: Run, session: Session, root: Path, targets: list[Target], deadline: float
) -> None:
    client = session.client
    begun = time.perf_counter()
    ident = client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "clientInfo": {"name": "moor-bench"},
            "rootUri": root.as_uri(),
            "rootPath": str(root),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": capabilities(run.shape),
            "initializationOptions": None,
        },
    )
    response = session.wait_message(lambda m: m.get("id") == ident and "method" not in m, deadline)
    if "error" in response.message:
        raise RuntimeError(f"initialize failed: {response.message['error']}")
    client.notify("initialized", {})
    if run.shape == PULL_REFRESH:  # such a client pulls the documents it has open
        for opened in dict.fromkeys(target.memory for target in targets):
            text = (root / opened).read_text(encoding="utf-8")
            client.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": (root / opened).as_uri(),
                        "languageId": "markdown",
                        "version": 1,
                        "text": text,
                    }
                },
            )
    session.settle(deadline)
    run.startup_s = session.last_activity - begun
    if session.evaluations:
        run.first_scan_s = session.evaluations[0][2]
    memory = rss_kib(client.pid)
    run.rss_mib = memory.get("VmRSS", 0) / 1024
    run.hwm_mib = memory.get("VmHWM", 0) / 1024
    # One transition waits at most this long: generous, from what the first scan took.
    per_wait = max(10.0, 10 * (run.first_scan_s if not math.isnan(run.first_scan_s) else 1.0))
    try:
        for index, target in enumerate(targets):
            edit_round(run, session, root, target, index, per_wait, deadline)
    except Timeout:
        if time.perf_counter() < deadline:
            raise
        run.out_of_time = True
        print(f"  N={run.n}: out of time after {run.rounds} rounds (--timeout)")
    memory = rss_kib(client.pid)
    run.rss_end_mib = memory.get("VmRSS", 0) / 1024


def edit_round(
    run: Run,
    session: Session,
    root: Path,
    target: Target,
    index: int,
    per_wait: float,
    deadline: float,
) -> None:
    """One edit and its undo; `Timeout` only once the whole run is out of time."""
    if time.perf_counter() >= deadline:
        raise Timeout("out of time")
    path = root / target.path
    uri = (root / target.memory).as_uri()
    for phase, content in (("drift", target.changed), ("clear", target.original)):
        path.write_bytes(content)
        written = time.perf_counter()
        run.transitions += 1
        limit = min(deadline, written + per_wait)
        seen = len(session.changes)
        try:
            if run.shape == PULL_REFRESH:
                event = pull_until(session, uri, phase == "drift", limit)
            else:
                event = session.wait_message(published(uri, phase == "drift"), limit)
            (run.drift_s if phase == "drift" else run.clear_s).append(event.at - written)
            if len(session.changes) > seen:
                run.notice_s.append(session.changes[seen] - written)
        except Timeout:
            if time.perf_counter() >= deadline:
                raise
            run.timed_out.append(f"{phase} {target.memory} ({target.path}#{target.qname})")
            print(f"  N={run.n}: round {index} {phase} timed out: {target.qname}")
        session.settle(deadline)
    run.floor_s.append(parse_floor(path))
    run.rounds += 1


# --------------------------------------------------------------------------------------------
# Output


def ms(value: float) -> str:
    return "-" if math.isnan(value) else f"{value * 1000:.1f}"


def print_table(runs: list[Run]) -> None:
    header = (
        f"{'N':>6} {'what':<24} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}  "
        f"{'rounds':>6} {'timeouts':>8}"
    )
    print(header)
    print("-" * len(header))
    for run in runs:
        rows = [
            ("write → drifted", run.drift_s),
            ("  minus debounce", [v - run.debounce_s for v in run.drift_s]),
            ("write → cleared", run.clear_s),
            ("  minus debounce", [v - run.debounce_s for v in run.clear_s]),
            ("write → change noticed", run.notice_s),
            ("server evaluation", run.evaluation_s),
            ("floor: read+parse file", run.floor_s),
        ]
        print(f"{run.n:>6} diagnostics {run.shape}")
        for label, values in rows:
            s = stats(values)
            print(
                f"{run.n:>6} {label:<24} {ms(s['p50']):>8} {ms(s['p95']):>8} {ms(s['max']):>8}  "
                f"{run.rounds:>6} {len(run.timed_out):>8}"
            )
        print(
            f"{run.n:>6} files {run.files}, debounce {run.debounce_s * 1000:.0f} ms, "
            f"workspace built and bound in {run.setup_s:.1f} s, "
            f"initialize → first scan settled {run.startup_s:.2f} s "
            f"(server's scan {run.first_scan_s:.2f} s), "
            f"RSS after first scan {run.rss_mib:.0f} MiB (peak {run.hwm_mib:.0f}), "
            f"after rounds {run.rss_end_mib:.0f} MiB, "
            f"{len(run.evaluation_s)} evaluations for {run.transitions} edits, "
            f"measured in {run.wall_s:.0f} s"
        )
        if run.out_of_time:
            print(f"{run.n:>6} stopped by --timeout after {run.rounds} rounds")
        if run.error:
            print(f"{run.n:>6} error: {run.error}")
        print()
    for run in runs:
        p95 = stats([v - run.debounce_s for v in run.drift_s])["p95"]
        verdict = "met" if p95 <= TARGET_P95_S and not run.timed_out else "MISSED"
        print(
            f"target: p95 write → drifted minus debounce <= {TARGET_P95_S * 1000:.0f} ms "
            f"at N={run.n} ({run.shape}): {ms(p95)} ms {verdict}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, DEFAULT_SIZES)),
        help="comma-separated numbers of memories (default: %(default)s)",
    )
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help="edits per size")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help="seconds per size with the server running, at most (default: %(default)s)",
    )
    parser.add_argument(
        "--shapes",
        default=PUSH,
        help=f"comma-separated delivery shapes, of {', '.join(SHAPES)} (default: %(default)s)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the numbers here")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",") if size.strip()]
    shapes = tuple(shape.strip() for shape in args.shapes.split(",") if shape.strip())
    if unknown := [shape for shape in shapes if shape not in SHAPES]:
        parser.error(f"unknown shape {unknown[0]!r}: choose from {', '.join(SHAPES)}")
    print(
        f"moor lsp edit → diagnostic latency — Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {args.rounds} rounds per size, diagnostics "
        f"{', '.join(shapes)}, edits seen by the server's own file watcher"
    )
    runs = []
    for n in sizes:
        for run in measure_shapes(n, args.rounds, args.timeout, shapes):
            runs.append(run)
            print(f"  N={n} {run.shape}: measured in {run.wall_s:.1f} s", flush=True)
    print()
    print_table(runs)
    if args.json is not None:
        payload = {"python": platform.python_version(), "runs": [r.as_json() for r in runs]}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 1 if any(run.error for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
