"""Code-aware tokens for recall: identifiers split into their words and also kept whole.

`Client.send_with_retry` is indexed as `client send with retry`, as each segment kept
whole (`sendwithretry`) and as the whole name (`clientsendwithretry`); `sendWithRetry`
gives the same words and the same whole token, so "send retry", `send_with_retry` and
`sendWithRetry` all find it. Paths split the same way at `/` and `.`. Documents and
queries go through the same function, so both sides always agree; SQLite's own tokenizer
(`porter unicode61`) then stems each token. A query's words also ask for the names they
would make joined (`joined_terms`): "load tests" finds `load_tests` as the name it is, not
only as two words many memories use.
"""

from __future__ import annotations

import re

# A name: word characters, optionally joined by `.`, `/`, `::`, `#` (dotted, paths, Rust).
_COMPOUND = re.compile(r"\w+(?:(?:::|[./#])\w+)*")
_SEPARATOR = re.compile(r"::|[./#]")
# Camel-case humps: `HTTPServer` -> HTTP, Server; `utf8Decode` -> utf, 8, Decode.
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# Words too common to say anything about which memory is meant; dropped from queries only
# (a query made of nothing else keeps them).
STOPWORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "without",
        "you",
        "your",
    )
)


def _words(segment: str) -> list[str]:
    words: list[str] = []
    for part in segment.split("_"):
        if not part:
            continue
        if part.isascii():
            words.extend(_HUMP.findall(part) or [part])
        else:
            words.append(part)
    return [w.lower() for w in words]


def tokens(text: str) -> list[str]:
    """The tokens of `text`, in order: each word, then each identifier kept whole."""
    out: list[str] = []
    for match in _COMPOUND.finditer(text):
        compound = match.group()
        segments = [s for s in _SEPARATOR.split(compound) if s]
        every: list[str] = []
        for segment in segments:
            words = _words(segment)
            every.extend(words)
            out.extend(words)
            if len(words) > 1:
                out.append("".join(words))
        if len(segments) > 1 and len(every) > 1:
            out.append("".join(every))
    return out


def document_text(text: str) -> str:
    """What the index stores for a field: its tokens, space-separated."""
    return " ".join(tokens(text))


def query_terms(query: str) -> list[str]:
    """The distinct tokens of a query, in order, stopwords left out (unless nothing else)."""
    seen = list(dict.fromkeys(tokens(query)))
    kept = [t for t in seen if t not in STOPWORDS]
    return kept or seen


JOINED_MAX_WORDS = 4  # the longest run of query words tried as one name


def joined_terms(query: str) -> list[str]:
    """Each run of 2 to JOINED_MAX_WORDS consecutive words of the query that spans separate
    words of it, joined as the index keeps a name whole (stopwords included: `from_int` is
    `fromint`); only those that are not already a term of the query."""
    words: list[tuple[int, str]] = []  # (which compound of the query, word)
    for number, match in enumerate(_COMPOUND.finditer(query)):
        for segment in _SEPARATOR.split(match.group()):
            words.extend((number, word) for word in _words(segment) if segment)
    have = set(tokens(query))
    joined: list[str] = []
    for size in range(2, JOINED_MAX_WORDS + 1):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            name = "".join(word for _n, word in run)
            if run[0][0] != run[-1][0] and name not in have and name not in joined:
                joined.append(name)
    return joined
