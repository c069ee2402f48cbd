"""Observe: memory parsing, references, tree-sitter symbols, normalisation, probes."""
