"""The memory layer: adding and editing memories, the latches (supersede, forget, restore),
recall, history, checkpoints, agent namespaces and read-only sources."""
