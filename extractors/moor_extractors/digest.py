"""Content addresses: one hashing scheme for every layer.

sha256 is faster than blake3 below 4 KiB on this machine (shared/notes/limits.md) and is in
the standard library; digests are truncated to 128 bits, ample for a workspace's facts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

DIGEST_HEX = 32
# A separator that cannot occur inside a token of source text we hash (tokens come from
# decoded UTF-8 and never contain NUL: binary files are refused before parsing).
_SEP = "\x00"


def digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:DIGEST_HEX]


def digest_text(text: str) -> str:
    return digest_bytes(text.encode("utf-8"))


def digest_tokens(tokens: Iterable[str]) -> str:
    """Digest of a normalised token stream; the empty stream has a fixed digest."""
    return digest_text(_SEP.join(tokens))


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest_json(value: object) -> str:
    return digest_text(canonical_json(value))
