"""Decide: observe -> journal, trust states, relocation. No protocol code."""
