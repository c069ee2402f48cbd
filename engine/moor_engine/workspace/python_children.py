"""How moor starts a Python process of its own: the hook server (`moor hooks serve`) and
the definition index's workers (`moor_engine.grounding.index_worker`). Both start here, so neither
can import a module of the workspace in place of moor's or the standard library's
(memory: child-processes-run-isolated-from-the-workspace).

`python -m X` puts its working folder first on `sys.path`: started in a repository with a
top-level `json.py` or `typing.py`, or a `moor/` folder, the child would run it (and, for a
harmless one, fail to start). `-P` leaves that folder off `sys.path`; the child also works
in a folder that is not the workspace, so an empty or relative PYTHONPATH entry
(`PYTHONPATH=:/x`, a common slip) cannot name the workspace either. Not `-I`: it also drops
PYTHONPATH and the user's site-packages, where a `pip install --user` or a source checkout
keeps moor itself; those are the user's environment, which the threat model trusts.
"""

from __future__ import annotations

import os
import sys

# Not `typing`: a prompt hook imports this module (see `moor.hook_commands`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

# Where a child works: the root of the file system, never a workspace. What it works on
# is given to it as an absolute path.
WORKING_FOLDER: Final = os.path.abspath(os.sep)


def module_command(module: str, *args: str) -> list[str]:
    """The command line that runs `module` of moor's own install with `args`."""
    return [sys.executable, "-P", "-m", module, *args]
