"""The moor language server (pygls): a small core (`server`) and `features/`, one module
per LSP feature. Nothing here is imported by the CLI's normal path: `moor lsp` imports
`moor_lsp.server` only when it runs (pygls and lsprotocol cost ~0.4 s to import)."""
