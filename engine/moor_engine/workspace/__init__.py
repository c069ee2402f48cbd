"""The workspace: where its root is, its config, which files count, how git and the ignore
files are read, and how moor starts its own processes."""
