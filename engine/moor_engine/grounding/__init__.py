"""Grounding: observing the code a memory is about, deciding each anchor's trust state,
finding where vanished code went, and the writes that bind, reaffirm and follow."""
