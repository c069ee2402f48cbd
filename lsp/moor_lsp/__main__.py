"""`python -m moor_lsp`: the moor language server on stdin/stdout."""

from __future__ import annotations

import sys

from moor_lsp.server import main

if __name__ == "__main__":
    sys.exit(main())
