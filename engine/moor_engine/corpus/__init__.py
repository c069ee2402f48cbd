"""The corpus as a whole: its health (`moor doctor`) and the local history carried from one
clone to another (`moor export`, `moor import`)."""
