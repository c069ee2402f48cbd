"""A definition that vanished is not "moved" onto a namesake in another file whose code has
nothing of it — found by the real-history trial (bench/real_history.py): a library's
`pager(generator, color)` was rewritten into `_pager_contextmanager`, and moor said it had
moved to an example script's unrelated `pager()` command, which had stood there all along."""

from __future__ import annotations

from tests.conftest import Workspace

IMPL = """\
import os
import shlex
import sys


def pager(generator, color=None):
    stdout = sys.stdout
    if not stdout.isatty():
        return _nullpager(stdout, generator, color)
    parts = shlex.split(os.environ.get("PAGER", ""))
    if parts:
        return _pipepager(generator, parts, color)
    return _nullpager(stdout, generator, color)


def _nullpager(stream, generator, color):
    for text in generator:
        stream.write(text)


def _pipepager(generator, parts, color):
    return None
"""

EXAMPLE = """\
import click


@click.command()
def pager():
    lines = [f"{n}. Hello World!" for n in range(200)]
    click.echo_via_pager("\\n".join(lines))
"""


def test_a_rewritten_function_is_not_moved_onto_an_unrelated_namesake(ws: Workspace) -> None:
    ws.write("lib/impl.py", IMPL)
    ws.write("examples/demo.py", EXAMPLE)
    ws.memory("pager", "lib/impl.py#pager")
    ws.moor("bind", check=True)
    rewritten = IMPL.replace("def pager(generator, color=None):", "def _pager_cm(color=None):")
    ws.write("lib/impl.py", rewritten.replace("generator, color)", "color)"))
    anchor = ws.anchor("memories/pager.md")
    assert anchor["state"] == "gone", anchor
    assert anchor.get("moved_to") in (None, ""), anchor


def test_a_function_cut_into_another_file_is_still_moved_there(ws: Workspace) -> None:
    # Control for the test above: the same name in another file, with the code, is a move.
    ws.write("lib/impl.py", IMPL)
    ws.write("examples/demo.py", EXAMPLE)
    ws.memory("pager", "lib/impl.py#pager")
    ws.moor("bind", check=True)
    start, end = IMPL.index("def pager"), IMPL.index("def _nullpager")
    ws.write("lib/impl.py", IMPL[:start] + IMPL[end:])
    ws.write("lib/paging.py", "import os\nimport shlex\nimport sys\n\n\n" + IMPL[start:end])
    anchor = ws.anchor("memories/pager.md")
    assert anchor["state"] == "moved", anchor
    assert anchor["moved_to"] == "lib/paging.py#pager"
