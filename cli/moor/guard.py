"""How every command runs: the folder it starts in checked, and each failure turned into
a message and an exit status (never a bare traceback). A module of its own, without the
command line, so that a command answered before `moor.main` is imported (`launch`) runs
exactly as the full command line runs it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from moor_engine.usage import UsageError
from moor_store.refusal import RefusalError

EXIT_OK, EXIT_USAGE = 0, 2


def run_guarded(
    command: Callable[[argparse.Namespace, Path], int], args: argparse.Namespace
) -> int:
    """`command(args, start)` with `-C`'s folder checked; its failures reported."""
    try:
        start = Path(args.directory)
        try:
            folder = start.is_dir()
        except OSError as error:  # a name too long for any folder: named by its length
            raise UsageError(f"-C of {len(args.directory)} characters: {error.strerror}") from error
        if not folder:
            raise UsageError(f"-C {args.directory}: no such folder")
        return command(args, start)
    except RefusalError as error:
        print(f"moor: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`moor log … | head`): not an error worth a word.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as error:  # the last line of defence: report, never a bare traceback
        print(f"moor: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        if os.environ.get("MOOR_DEBUG"):
            import traceback

            traceback.print_exc()
        else:
            print("moor: set MOOR_DEBUG=1 for the traceback", file=sys.stderr)
        return EXIT_USAGE
