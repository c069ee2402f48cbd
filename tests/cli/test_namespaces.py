"""Namespaces: `agent:` puts a memory in one agent's namespace; readers see shared + own."""

from __future__ import annotations

from typing import Any

from tests.conftest import Workspace


def memory(ws: Workspace, name: str, agent: str | None, words: str) -> None:
    owner = f"agent: {agent}\n" if agent is not None else ""
    ws.write(
        f"memories/{name}.md",
        f"---\nabout:\n  - src/net.py#send\n{owner}---\n# {name}\n\n{words}\n",
    )


def setup(ws: Workspace) -> None:
    ws.write("src/net.py", "def send():\n    return 1\n")
    memory(ws, "shared", None, "retries are idempotent")
    memory(ws, "alpha-note", "alpha", "retries are idempotent for alpha")
    memory(ws, "beta-note", "beta", "retries are idempotent for beta")
    ws.moor("bind", "memories/shared.md", "memories/alpha-note.md", "memories/beta-note.md")


def recalled(ws: Workspace, *agent: str) -> set[str]:
    args = ["--agent", agent[0]] if agent else []
    run = ws.moor("recall", "--json", *args, "retries idempotent")
    assert run.code in (0, 1), run.err
    return {hit["path"].removeprefix("memories/").removesuffix(".md") for hit in run.json()["hits"]}


def about(ws: Workspace, *agent: str) -> set[str]:
    args = ["--agent", agent[0]] if agent else []
    run = ws.moor("about", "--json", *args, "src/net.py#send")
    assert run.code in (0, 1), run.err
    return {m["path"].removeprefix("memories/").removesuffix(".md") for m in run.json()["memories"]}


def test_recall_shows_an_agent_the_shared_memories_and_its_own_only(ws: Workspace) -> None:
    setup(ws)
    assert recalled(ws, "alpha") == {"shared", "alpha-note"}
    assert recalled(ws, "beta") == {"shared", "beta-note"}
    # A reader naming no agent sees the shared memories only.
    assert recalled(ws) == {"shared"}


def test_about_shows_an_agent_the_shared_memories_and_its_own_only(ws: Workspace) -> None:
    setup(ws)
    assert about(ws, "alpha") == {"shared", "alpha-note"}
    assert about(ws, "beta") == {"shared", "beta-note"}
    assert about(ws) == {"shared"}


def test_context_holds_the_shared_memories_and_the_agents_own(ws: Workspace) -> None:
    setup(ws)
    alpha = ws.moor("context", "--agent", "alpha", check=True).out
    assert "memories/alpha-note.md" in alpha and "memories/shared.md" in alpha
    assert "memories/beta-note.md" not in alpha
    plain = ws.moor("context", check=True).out
    assert "memories/shared.md" in plain and "memories/alpha-note.md" not in plain


def test_an_invalid_agent_name_in_a_query_is_refused(ws: Workspace) -> None:
    setup(ws)
    for command in (
        ("recall", "retries"),
        ("about", "src/net.py#send"),
        ("context",),
    ):
        run = ws.moor(*command, "--agent", "../Alpha")
        assert run.code == 2, (command, run.out, run.err)
        assert "not an agent name" in run.err and "Traceback" not in run.err
        assert ws.moor(*command, "--agent", "alpha").code in (0, 1)  # control


def test_a_memory_with_an_invalid_agent_is_shown_to_nobody_but_reported(ws: Workspace) -> None:
    setup(ws)
    memory(ws, "odd-owner", "Not A Name!", "retries are idempotent oddly")
    memory(ws, "listed-owner", "[alpha, beta]", "retries are idempotent listed")
    for agent in ("alpha", "beta"):
        seen = recalled(ws, agent)
        assert "odd-owner" not in seen and "listed-owner" not in seen
        assert "odd-owner" not in about(ws, agent)
    assert "odd-owner" not in recalled(ws)
    report = ws.states()
    for name in ("odd-owner", "listed-owner"):
        entry = report[f"memories/{name}.md"]
        assert entry["state"] == "invalid"
        assert "agent_invalid" in str(entry)
    # Control: once its `agent:` is a name, its agent sees it.
    memory(ws, "odd-owner", "alpha", "retries are idempotent oddly")
    assert "odd-owner" in recalled(ws, "alpha")


def test_add_with_an_agent_writes_it_into_that_agents_namespace(ws: Workspace) -> None:
    ws.write("src/net.py", "def send():\n    return 1\n")
    run = ws.moor(
        "add", "Send retries carry a key", "--about", "src/net.py#send", "--agent", "alpha"
    )
    assert run.code == 0, run.err
    path = next((ws.root / "memories").glob("*.md"))
    assert "agent: alpha" in path.read_text(encoding="utf-8")
    assert recalled_words(ws, "alpha") and not recalled_words(ws, "beta")
    refused = ws.moor("add", "Another note", "--about", "src/net.py#send", "--agent", "Al Pha")
    assert refused.code == 2 and "not an agent name" in refused.err
    assert len(list((ws.root / "memories").glob("*.md"))) == 1


def recalled_words(ws: Workspace, agent: str) -> list[object]:
    run = ws.moor("recall", "--json", "--agent", agent, "send retries key")
    hits = run.json()["hits"]
    assert isinstance(hits, list)
    return hits


def known_on_add(ws: Workspace, title: str, *agent: str) -> set[str]:
    args = ["--agent", agent[0]] if agent else []
    run = ws.moor(
        "add", f"{title} about send", "--about", "src/net.py#send", *args, "--format", "json"
    )
    assert run.code == 0, run.err
    return {
        known["path"].removeprefix("memories/").removesuffix(".md")
        for known in run.json()["known_here"]
    }


def test_a_writes_already_known_here_lists_only_what_the_writer_may_see(ws: Workspace) -> None:
    setup(ws)
    # Each writer's own memories are listed (the control), never another agent's (beta and
    # the shared writer do not see what alpha just wrote).
    assert known_on_add(ws, "Alpha writes", "alpha") == {"shared", "alpha-note"}
    assert known_on_add(ws, "Beta writes", "beta") == {"shared", "beta-note"}
    assert known_on_add(ws, "Nobody writes") == {"shared"}
    again = {"shared", "alpha-note", "alpha-writes-about-send", "nobody-writes-about-send"}
    assert known_on_add(ws, "Alpha again", "alpha") == again


def feedback(ws: Workspace, query: str, *agent: str) -> dict[str, Any]:
    args = ["--agent", agent[0]] if agent else []
    run = ws.moor("recall", "--json", "--explain", *args, query)
    assert run.code in (0, 1), run.err
    value = run.json()
    items = value["feedback"]
    assert isinstance(items, list) and value["weak"] is True
    return {
        "hits": [hit["path"] for hit in value["hits"]],
        "memories": {item["term"]: item["memories"] for item in items},
        "nearby": {w["word"] for item in items for w in item["nearby"]},
        "indexed": value["index"]["memories"],
    }


def test_weak_match_feedback_uses_only_the_vocabulary_the_reader_may_see(ws: Workspace) -> None:
    setup(ws)
    memory(ws, "alpha-secret", "alpha", "the zanzibarquux handshake")
    ws.moor("bind", "memories/alpha-secret.md", check=True)
    # A misspelling: its owner is offered the word (the control), nobody else is.
    assert "zanzibarquux" in feedback(ws, "zanzibarqux", "alpha")["nearby"]
    for reader in (("beta",), ()):
        seen = feedback(ws, "zanzibarqux", *reader)
        assert "zanzibarquux" not in seen["nearby"]
    # The word itself: how many memories use it counts only those the reader sees.
    beta = feedback(ws, "zanzibarquux handshake", "beta")
    assert beta["hits"] == [] and beta["memories"] == {"zanzibarquux": 0, "handshake": 0}
    alpha = ws.moor("recall", "--json", "--agent", "alpha", "zanzibarquux handshake").json()
    assert [hit["path"] for hit in alpha["hits"]] == ["memories/alpha-secret.md"]
    # And the index's size is what the reader sees: shared + its own.
    assert feedback(ws, "zanzibarqux", "alpha")["indexed"] == 3
    assert feedback(ws, "zanzibarqux", "beta")["indexed"] == 2
    assert feedback(ws, "zanzibarqux")["indexed"] == 1


def test_a_taken_path_names_another_agents_memory_hash_to_its_owner_only(ws: Workspace) -> None:
    ws.write("src/net.py", "def send():\n    return 1\n")
    args = ("add", "Send is retried", "--about", "src/net.py#send", "--format", "json")
    ws.moor(*args, "--agent", "alpha", check=True)

    def refusal(*agent: str) -> dict[str, Any]:
        run = ws.moor(*args, *(("--agent", agent[0]) if agent else ()))
        assert run.code == 1, run.err
        refused = run.json()["refused"]
        assert isinstance(refused, list) and [r["code"] for r in refused] == ["exists"]
        value = refused[0]
        assert isinstance(value, dict)
        return value

    own = refusal("alpha")  # the control: its owner is told the hash and the edit
    assert own["current_hash"] and "moor edit" in str(own["instead"])
    for other in (refusal("beta"), refusal()):
        assert other["current_hash"] is None and other["instead"] is None
        assert "exists" in str(other["message"]) and "edit it" not in str(other["message"])
