"""The moor language server (built in a later issue)."""
