"""Which diagnostic severity each trust state gets in an editor: one table, which the
language server uses (`lsp/moor_lsp/features/diagnostics.py`), whose settable part is the
server's default settings (`lsp/moor_lsp/settings.py`) and which the VS Code client's
settings describe (`vscode-client/package.json`, tied to this table by
`tests/lsp/test_severities.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from moor_engine.grounding.trust import State

# The levels of LSP's DiagnosticSeverity, by name (the engine knows nothing of protocols).
LEVELS: Final = ("error", "warning", "information", "hint")

# `current` has no diagnostic. The worse the state, the louder: what is gone or cannot be
# read at all is an error, drift a warning, what moved or is unbound (a next step ready)
# information, a memory with nothing to watch a hint.
SEVERITY: Final[Mapping[State, str]] = MappingProxyType(
    {
        State.INVALID: "error",
        State.GONE: "error",
        State.DRIFTED: "warning",
        State.MOVED: "information",
        State.REWRITTEN: "information",
        State.UNVERIFIED: "information",
        State.UNBOUND: "information",
        State.UNGROUNDED: "hint",
        State.RETIRED: "hint",
    }
)

# The states a person may give another severity (or `off`): the editor's settings
# `moor.severity.STATE`. `retired` is not one: a retired memory is a fact, not a finding.
SETTABLE: Final[tuple[State, ...]] = tuple(s for s in SEVERITY if s != State.RETIRED)
