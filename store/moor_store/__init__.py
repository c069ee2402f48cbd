"""Remember: the SQLite journal, moor.lock, sealed snapshots, the parse cache."""
