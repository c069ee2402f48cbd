"""The frontmatter fast path (`simple_yaml.compose`) builds exactly the nodes libyaml composes
— tags, values, styles and marks — for the shape moor writes, and hands everything else to
YAML (answers None)."""

from __future__ import annotations

import contextlib
import itertools
from pathlib import Path

import pytest
import yaml
from moor_extractors import simple_yaml
from moor_extractors.frontmatter import _Loader
from moor_extractors.memory import parse_memory
from yaml.nodes import Node

REPO = Path(__file__).resolve().parents[2]


def _composed(text: str) -> Node | None:
    loader = _Loader(text)
    try:
        node: Node | None = loader.get_single_node()
        return node
    finally:
        loader.dispose()


def _shape(node: Node) -> object:
    """Everything of a node the frontmatter reader may look at, and its marks."""
    marks = tuple((mark.index, mark.line, mark.column) for mark in (node.start_mark, node.end_mark))
    if isinstance(node.value, list):
        children: list[object] = []
        for child in node.value:
            if isinstance(child, tuple):
                children.append((_shape(child[0]), _shape(child[1])))
            else:
                children.append(_shape(child))
        return (type(node).__name__, node.tag, getattr(node, "flow_style", None), marks, children)
    return (type(node).__name__, node.tag, node.value, getattr(node, "style", None), marks)


def _frontmatters() -> list[str]:
    """The frontmatter of every memory of this repository, as `memory` cuts it out."""
    found = []
    for path in sorted((REPO / "memories").glob("*.md")):
        lines = path.read_text(encoding="utf-8").split("\n")
        close = lines.index("---", 1)
        found.append("".join(line + "\n" for line in lines[1:close]))
    return found


VALUES = [
    '"src/net.py#Client.send"',
    "src/net.py#Client.send",
    "src/a.rs#Client::send",
    "verified",
    "true",
    "no",
    "2024-05-01",
    "1.5",
    "42",
    "null",
    ".inf",
    "two words",
    "a - b",
    "a:b",
    '""',
    '"with # and : inside"',
    "x'y",
]
SIMPLE = [
    *(f"about: {value}\n" for value in VALUES),
    *(f"about:\n{indent}- {value}\n" for value in VALUES for indent in ("", "  ", "    ")),
    *(
        f"about:\n  - {first}\n  - {second}\nconfidence: {third}\n"
        for first, second, third in itertools.product(VALUES[:4], VALUES[4:8], VALUES[8:11])
    ),
    "about:\n- a.py#f\nwatch:\n- body\n- doc\npinned: true\ncreated: 2024-01-01\n",
    "about: a.py#f\nabout: b.py#g\n",  # a duplicate key: reported after composing, as YAML's
    "title: Retry\nagent: reviewer\nsource: adr:0001-retry\nsupersedes: memories/old.md\n",
    "abouts:\n  - a.py#f\n",  # a misspelt key
]
# What YAML must compose (each a real frontmatter: it parses, or YAML says why not).
NOT_SIMPLE = [
    "about: a.py#f  # a comment\n",
    "# a comment\nabout: a.py#f\n",
    "about: a.py#f\n\nconfidence: verified\n",  # a blank line
    "watch: [body, doc]\n",  # a flow list
    "about:\n",  # null
    "about:\nconfidence: verified\n",
    "about: 'single quoted'\n",
    'about: "an \\" escape"\n',
    "about: a\n  continued\n",
    "about:\n  - a\n    continued\n",
    "about:\n  - a\n    - b\n",
    "about:\n  - a\n - b\n",  # the items' indentation differs
    "about:\n  - ref: a.py#f\n    watch: [body]\n",
    "about:\n  - - a\n",
    "about: &x a\nwatch: *x\n",
    "about: !!str a\n",
    "about: |\n  a\n",
    "about: a:\n",
    "about: a: b\n",
    "about:  a\n",  # two spaces: a plain scalar starting with a space
    "about: a  b\n",
    "about: a \n",
    "about:\ta\n",
    "on: a\n",  # a key YAML reads as a boolean
    "yes: a\n",
    "1: a\n",
    "<<: {about: a}\n",
    "about: café.py#f\n",
    "about: a\r\n",
    "- a\n",
    "about\n",
    "about: a",  # no final newline
    "",
    "about: [a, b]\n",
    "about: {a: b}\n",
    "about: a,b\n",
    "about: ?a\n",
    "about: -a\n",
]


@pytest.mark.parametrize("text", SIMPLE + _frontmatters())
def test_the_fast_path_composes_what_yaml_composes(text: str) -> None:
    fast = simple_yaml.compose(text)
    composed = _composed(text)
    assert composed is not None
    if fast is None:
        assert text not in SIMPLE, "the fast path gave up on a simple frontmatter"
        return
    assert _shape(fast) == _shape(composed)


def test_the_fast_path_reads_most_of_this_repositorys_memories() -> None:
    texts = _frontmatters()
    fast = [text for text in texts if simple_yaml.compose(text) is not None]
    assert len(fast) >= 0.9 * len(texts), len(fast)


@pytest.mark.parametrize("text", NOT_SIMPLE)
def test_anything_else_is_composed_by_yaml(text: str) -> None:
    assert simple_yaml.compose(text) is None
    # YAML answers it: nodes, or an error the reader reports with YAML's position.
    with contextlib.suppress(yaml.YAMLError):
        _composed(text)
    # The control: the fast path does compose the simple frontmatter next to these.
    assert simple_yaml.compose("about: a.py#f\n") is not None


def test_a_memory_reads_the_same_through_the_fast_path_and_through_yaml() -> None:
    """The whole memory, fields and problems, through the fast path and through YAML (the
    same frontmatter spelt so only YAML reads it: a comment line added)."""
    body = "# Retry\n\nThree attempts.\n\n## When this changes, ask\n- Still three?\n"
    for text in SIMPLE:
        fast = parse_memory("memories/m.md", f"---\n{text}---\n{body}".encode())
        slow = parse_memory("memories/m.md", f"---\n{text}#\n---\n{body}".encode())
        assert simple_yaml.compose(text + "#\n") is None
        if fast.memory is None or slow.memory is None:
            assert fast.memory is None and slow.memory is None
            assert fast.problems == slow.problems
            continue
        # The comment line changes the content hash only.
        assert fast.memory.about == slow.memory.about
        assert fast.memory.watch == slow.memory.watch
        assert fast.memory.confidence == slow.memory.confidence
        assert (fast.memory.pinned, fast.memory.created, fast.memory.agent) == (
            slow.memory.pinned,
            slow.memory.created,
            slow.memory.agent,
        )
        assert fast.problems == slow.problems
