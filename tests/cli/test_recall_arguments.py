"""`moor recall`'s arguments parsed alone (`recall_commands.plain_recall`, which `launch`
uses to skip building the full command line) mean what the full command line parses them
to mean; whatever they cannot say alike goes to the full parser."""

from __future__ import annotations

import pytest
from moor.main import build_parser
from moor.recall_commands import plain_recall

from tests.conftest import Workspace

PLAIN = [
    ["send", "retry"],
    ["send", "--limit", "3"],
    ["--json", "send"],
    ["--format", "json", "--explain", "send"],
    ["--form", "json", "send"],  # an abbreviation, as argparse allows
    ["--agent", "reviewer", "send"],
    ["--limit=2", "--", "--help"],  # after `--`, a query word
]
NOT_PLAIN = [
    [],  # the query is required
    ["--help"],
    ["send", "-h"],
    ["send", "--limit", "0"],
    ["send", "--format", "yaml"],
    ["send", "--bogus"],
    ["send", "-C", "."],  # a top-level option after the command: the full parser's error
]


@pytest.mark.parametrize("argv", PLAIN)
def test_recall_arguments_parsed_alone_equal_the_full_command_lines(argv: list[str]) -> None:
    alone = plain_recall(argv)
    assert alone is not None
    full, extra = build_parser().parse_known_args(["recall", *argv])
    assert not extra
    assert vars(alone) == vars(full)


@pytest.mark.parametrize("argv", NOT_PLAIN)
def test_help_and_mistakes_are_left_to_the_full_command_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert plain_recall(argv) is None
    assert capsys.readouterr() == ("", "")  # it said nothing itself
    # The control: the full command line answers it (help, or a usage error), exiting.
    with pytest.raises(SystemExit) as exit_:
        parser = build_parser()
        _args, extra = parser.parse_known_args(["recall", *argv])
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    assert exit_.value.code in (0, 2)
    assert capsys.readouterr().out or exit_.value.code == 2


def test_a_mistake_in_a_recall_is_told_by_the_full_command_line(ws: Workspace) -> None:
    run = ws.moor("recall", "send", "--bogus")
    assert run.code == 2
    assert "moor: error: unrecognized arguments: --bogus" in run.err
    run = ws.moor("recall", "send", "--limit", "0")
    assert run.code == 2
    assert "moor recall: error: argument --limit: must be 1 or more" in run.err
    # The control: a plain recall of the same workspace answers.
    assert ws.moor("recall", "send").code in (0, 1)
