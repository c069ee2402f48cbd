"""Are agents served stale code memories? The staleness benchmark (`harness.py`), built at run
time from a public repository's history; `python bench/staleness/run.py` runs it."""
