"""TypeScript and TSX: JavaScript's rules over the TypeScript grammars."""

from __future__ import annotations

from .lang_javascript import JavaScriptSpec

SPEC = JavaScriptSpec("typescript")
TSX_SPEC = JavaScriptSpec("tsx")
