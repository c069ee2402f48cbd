"""Hostile input gets a clear answer, fast (issue 9, items 11 and 12)."""
