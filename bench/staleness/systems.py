"""The systems the staleness benchmark asks, each over the same memory files: what each
serves for a question (its top hits, each presented as current or flagged) and the text it
injects into an agent's context.

* ``moor`` — the engine's recall (`session_recall`) after a real bind at the first commit;
  a hit is flagged when moor's check judged it stale; the text is what moor's agent
  surfaces inject (`framing.frame_one` of the hit with its verdict).
* ``grep`` — a plain Markdown folder: each query word searched case-insensitively in each
  memory file (as `grep -il WORD memories/*`), ranked by how many words a file holds, then
  by path. Nothing is ever flagged; the text is the whole file.
* ``timestamp`` — grep's ranking, flagged by the rule file-level tools use: a memory is
  stale when the file it is about changed (git's diff) since the memory was written.
* ``basic-memory`` — installed from the package registry into its own virtual environment
  (it needs Python 3.12 or later: skipped, saying so, without one), keyword mode.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from moor_engine.agents.agent_context import tokens
from moor_engine.agents.framing import frame_one, framed
from moor_engine.memory.recall_index import session_recall
from moor_engine.session import Session
from moor_extractors.memory import parse_memory

TOP = 5
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Served:
    """One hit as a system serves it."""

    path: str
    flagged: bool  # presented as possibly stale


@dataclass(frozen=True)
class Answer:
    hits: tuple[Served, ...]
    tokens: int  # of the text the system injects for these hits


class Moor:
    name = "moor"

    def __init__(self, session: Session) -> None:
        self.session = session

    def ask(self, query: str) -> Answer:
        result, _status = session_recall(self.session, query, limit=TOP)
        hits: list[Served] = []
        text: list[str] = []
        root = self.session.workspace.root
        for hit in result.hits:
            hits.append(Served(hit.path, hit.flagged))
            memory = parse_memory(hit.path, (root / hit.path).read_bytes()).memory
            if memory is not None:
                text.append(frame_one(framed(hit.report, memory)))
        return Answer(tuple(hits), tokens("\n\n".join(text)))


class Grep:
    name = "grep"

    def __init__(self, texts: Mapping[str, str]) -> None:
        self.texts = dict(texts)
        self.lowered = {path: text.lower() for path, text in texts.items()}

    def ranked(self, query: str) -> list[str]:
        words = sorted(set(_WORD.findall(query.lower())))
        counted = [
            (sum(1 for w in words if w in text), path) for path, text in self.lowered.items()
        ]
        return [path for n, path in sorted(counted, key=lambda c: (-c[0], c[1])) if n > 0][:TOP]

    def flagged(self, path: str) -> bool:
        return False

    def ask(self, query: str) -> Answer:
        paths = self.ranked(query)
        hits = tuple(Served(p, self.flagged(p)) for p in paths)
        return Answer(hits, tokens("\n\n".join(self.texts[p] for p in paths)))


class Timestamp(Grep):
    name = "timestamp"

    def __init__(self, texts: Mapping[str, str], stale_by_date: Sequence[str]) -> None:
        super().__init__(texts)
        self.stale = set(stale_by_date)

    def flagged(self, path: str) -> bool:
        return path in self.stale

    def ask(self, query: str) -> Answer:
        paths = self.ranked(query)
        hits = tuple(Served(p, self.flagged(p)) for p in paths)
        text = [
            ("(stale: its file changed since it was written)\n" if self.flagged(p) else "")
            + self.texts[p]
            for p in paths
        ]
        return Answer(hits, tokens("\n\n".join(text)))


class BasicMemory:
    """basic-memory over the same memory files: a project of its own (its state in a
    scratch HOME), indexed once, asked through its own MCP server over stdio (one process
    for every question), keyword mode (`search_type: text`). Nothing is flagged: it knows
    nothing of the code. The text is its search tool's answer as an agent receives it."""

    name = "basic-memory"
    _PERMALINK = re.compile(r"^- permalink: [^/]+/(.+)$", re.MULTILINE)

    def __init__(self, command: Path, folder: Path, home: Path) -> None:
        self.command, self.folder, self.home = command, folder, home
        self.env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
        self.answers: dict[str, Answer] = {}

    def prepare(self, queries: Sequence[str]) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        for args in (
            ("project", "add", "bench", str(self.folder)),
            ("reindex", "--project", "bench"),
        ):
            subprocess.run(
                [str(self.command), *args],
                env=self.env,
                check=True,
                capture_output=True,
                stdin=subprocess.DEVNULL,
                timeout=600,
            )
        anyio.run(self._ask_all, list(dict.fromkeys(queries)))

    async def _ask_all(self, queries: list[str]) -> None:
        from mcp.client.stdio import stdio_client

        from mcp import ClientSession, StdioServerParameters

        server = StdioServerParameters(
            command=str(self.command),
            args=["mcp", "--transport", "stdio", "--project", "bench"],
            env=self.env,
            cwd=str(self.home),
        )
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(server, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for query in queries:
                    result = await session.call_tool(
                        "search_notes",
                        {"query": query, "page_size": TOP, "search_type": "text"},
                    )
                    text = "\n".join(b.text for b in result.content if b.type == "text")
                    stems = self._PERMALINK.findall(text)[:TOP]
                    hits = tuple(Served(f"memories/{stem}.md", False) for stem in stems)
                    self.answers[query] = Answer(hits, tokens(text))

    def ask(self, query: str) -> Answer:
        return self.answers[query]


def basic_memory_command(choice: str, cache: Path) -> Path | str:
    """The basic-memory executable to run (`choice`: a path to it, `auto` to install it
    from the package registry into its own virtual environment under `cache` with the
    newest interpreter of 3.12 or later found here), or why it is skipped."""
    if choice == "off":
        return "basic-memory: skipped (--basic-memory off)"
    if choice != "auto":
        given = Path(choice)
        return given if given.is_file() else f"basic-memory: skipped: no executable at {given}"
    venv = cache / "basic-memory"
    command = venv / "bin" / "basic-memory"
    if command.is_file():
        return command
    python = _python_312()
    if python is None:
        found = f"{sys.version_info.major}.{sys.version_info.minor}"
        return (
            "basic-memory: skipped: every release needs Python >= 3.12 and this machine has "
            f"{found} only (none is fetched for it)"
        )
    made = subprocess.run(
        [python, "-m", "venv", str(venv)], capture_output=True, text=True, check=False
    )
    if made.returncode == 0:
        made = subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "basic-memory"],
            capture_output=True,
            text=True,
            check=False,
            timeout=1800,
        )
    if made.returncode != 0 or not command.is_file():
        shutil.rmtree(venv, ignore_errors=True)
        last = (made.stderr.strip().splitlines() or ["no output"])[-1]
        return f"basic-memory: skipped: it did not install ({last})"
    return command


def _python_312() -> str | None:
    """An interpreter of Python 3.12 or later: on PATH, else one pyenv installed."""
    for name in ("python3.14", "python3.13", "python3.12"):
        found = shutil.which(name)
        if (
            found
            and subprocess.run([found, "-V"], capture_output=True, check=False).returncode == 0
        ):
            return found
    versions = Path.home() / ".pyenv" / "versions"
    for folder in sorted(versions.glob("3.1[2-9]*"), reverse=True) if versions.is_dir() else []:
        python = folder / "bin" / "python3"
        if python.is_file():
            return str(python)
    return None


def memory_texts(root: Path, paths: Sequence[str]) -> dict[str, str]:
    return {p: (root / p).read_text(encoding="utf-8") for p in paths}
