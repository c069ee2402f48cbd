"""Every feature the server runs, in registration order."""

from __future__ import annotations

from moor_lsp.features import Feature
from moor_lsp.features.atlas import AtlasView
from moor_lsp.features.check import CheckWorkspace
from moor_lsp.features.code_actions import CodeActions
from moor_lsp.features.code_lens import CodeLens
from moor_lsp.features.completion import Completion
from moor_lsp.features.configuration import Configuration
from moor_lsp.features.definition import Definition
from moor_lsp.features.diagnostics import Diagnostics
from moor_lsp.features.hover import Hover
from moor_lsp.features.retire_actions import RetireActions
from moor_lsp.features.symbols import WorkspaceSymbols
from moor_lsp.features.watching import Watching

FEATURES: tuple[type[Feature], ...] = (
    Configuration,  # first: the others start with the settings in effect
    Diagnostics,
    CodeActions,
    RetireActions,
    CheckWorkspace,
    AtlasView,
    Hover,
    Completion,
    Definition,
    CodeLens,
    WorkspaceSymbols,
    Watching,
)
