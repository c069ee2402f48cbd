"""The `moor` command: thin, dispatches to the engine."""
