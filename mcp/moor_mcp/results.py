"""The shapes of the MCP tools' results: one pydantic model per answer, from which the SDK
publishes each tool's output schema. Fields only. A model whose fields are named as the
engine's answer reads it straight from its attributes (`from_attributes`), so no tool
copies an answer field by field.

Every field that carries words a person or an agent wrote (a title, a question, a reason,
a reference, a checkpoint's summary, a message quoting them) is `Untrusted`: its delimiters
are broken by `framing.neutralise` when the result is built, as the framed `text` of a
memory is, so no field of a result can close a frame or speak as moor (issue 11.8)."""

from __future__ import annotations

from typing import Annotated

from moor_engine.agents.framing import neutralise
from pydantic import AfterValidator, BaseModel, ConfigDict

ENGINE_ANSWER = ConfigDict(from_attributes=True)
Untrusted = Annotated[str, AfterValidator(neutralise)]


class Linked(BaseModel):
    """One link of a memory (its own `links:`, direction "to", or another's naming it,
    "from"): the relation and the path are a writer's words."""

    relation: Untrusted
    path: Untrusted
    direction: str
    exists: bool


class Signal(BaseModel):
    signal: str  # bm25 | trust | confidence | pinned | recency
    factor: float  # what the score was multiplied by (bm25: the relevance itself)
    contribution: float  # how much the score moved by it
    why: str


class Explanation(BaseModel):
    """Why a hit scored as it did (as `moor recall --explain`)."""

    score: float
    matched: list[Untrusted]  # the query's terms this memory holds
    signals: list[Signal]


class Hit(BaseModel):
    path: str
    title: Untrusted
    state: str
    flagged: bool
    why: list[Untrusted]
    about: list[Untrusted]
    questions: list[Untrusted]
    content_hash: str | None  # what memory_edit's based_on names
    sections: list[Untrusted]  # the headings memory_edit can replace, as shown
    text: str  # the memory, framed as untrusted data
    # Said in every hit, as results are handed on without the server's instructions.
    notice: str
    explain: Explanation | None = None  # only when asked for
    links: list[Linked] = []  # its own `links:` (memories_about also lists links to it)
    cobound: list[str] = []  # memories bound to one of the same anchors
    # Retired memories on the same code, each with why (not current: never rely on them).
    retired_here: list[KnownHere] = []


class SearchResult(BaseModel):
    query: str
    hits: list[Hit]


class SearchManyResult(BaseModel):
    results: list[SearchResult]  # one per query, in the order asked


class AboutMemory(BaseModel):
    path: str
    title: Untrusted
    state: str
    relation: str
    about: Untrusted
    why: list[Untrusted]
    questions: list[Untrusted]
    since: str | None = None  # journal time (UTC) its anchor has been as it is now since
    links: list[Linked] = []  # one hop; links never make a memory more or less trusted
    cobound: list[str] = []  # memories bound to one of the same anchors


class AboutResult(BaseModel):
    target: str
    memories: list[AboutMemory]
    retired_left_out: int


class Anchor(BaseModel):
    ref: Untrusted
    state: str
    detail: Untrusted | None
    since: str | None = None  # journal time (UTC) it has been as it is now since; None: undated


class Flagged(BaseModel):
    path: str
    title: Untrusted
    state: str
    anchors: list[Anchor]


class DriftReport(BaseModel):
    memories: int
    needing_a_look: list[Flagged]


class KnownHere(BaseModel):
    path: str
    title: Untrusted
    state: str
    anchors: list[Untrusted]  # the references it shares with the memory written
    # A retired one (state `retired` or `forgotten`): why, in the engine's words with the
    # writer's reason; None for a live one.
    retired_because: Untrusted | None = None


class Refused(BaseModel):
    """One refusal, of any tool (`refusals.py`: every error result carries a list of them)."""

    code: str  # stable: usage, not_found, write_busy, lock_invalid, exists, conflict, …
    message: Untrusted
    path: str | None  # the workspace's path it is about, when there is one
    line: int | None  # 1-based, in that file, when known
    ref: str | None
    suggestions: list[Untrusted]
    instead: str | None  # the tool call that does what was meant
    current_hash: str | None  # the memory's content hash now (exists, conflict)


class WriteResult(BaseModel):
    action: str
    ok: bool
    path: str | None
    content_hash: str | None
    done: list[Untrusted]
    known_here: list[KnownHere]  # memories already bound to the same code, retired ones last
    refused: list[Refused]  # empty unless ok is false (then the result is a tool error)


class JournalEntry(BaseModel):
    model_config = ENGINE_ANSWER

    seq: int
    at: str
    kind: str
    anchor: str
    memory: str | None
    code: str | None
    reason: Untrusted | None
    detail: Untrusted | None


class Change(JournalEntry):
    memories: list[str]  # the memories it concerns


class ChangesResult(BaseModel):
    model_config = ENGINE_ANSWER

    changes: list[Change]
    next_cursor: int
    head: int
    more: bool


class HistoryResult(BaseModel):
    model_config = ENGINE_ANSWER

    path: str
    entries: list[JournalEntry]


class Checkpoint(BaseModel):
    model_config = ENGINE_ANSWER

    agent: str
    id: str
    at: str
    path: str
    summary: Untrusted
    next_steps: list[Untrusted]
    files: list[str]


class ResumeResult(BaseModel):
    model_config = ENGINE_ANSWER

    agent: str
    checkpoints: list[Checkpoint]  # newest first
    total: int
    unreadable: list[str]


class AnchorRow(BaseModel):
    """One anchor, as `moor anchors` lists it (`moor_engine.anchors.listing.AnchorRow`)."""

    model_config = ENGINE_ANSWER

    anchor: Untrusted
    kind: str  # command, symbol, section or file
    memories: list[str]
    bound: bool
    reproducibility: str | None  # command anchors: closed or open
    streak: int | None
    command: list[Untrusted] | None
    last_observed: str | None
    last_state: str | None
    next_due: str | None
    closed: dict[str, Untrusted] | None  # {by, reason, at} once closed
    rules: int | None = None  # command anchors: how many transition rules it declares
    terminal: list[Untrusted] | None = None  # command anchors: the states that close it
    revisions: dict[str, int] | None = None  # `moor revise`s journalled here, per kind
    # Code anchors and command anchors without declared rules: the rules they move by,
    # generated by moor (`moor_engine.anchors.code_rules`), each {when, to}.
    generated_rules: list[dict[str, str]] | None = None
    watch: list[str] | None = None  # code anchors: the axes those rules are generated from
    # When the memories binding a code anchor watch differently: each memory's rules.
    generated_rules_by_memory: dict[str, list[dict[str, str]]] | None = None


class AnchorsResult(BaseModel):
    anchors: list[AnchorRow]
