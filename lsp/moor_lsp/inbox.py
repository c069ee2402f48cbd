"""Reading the client's messages: in a thread of its own, in batches, edits coalesced.

pygls reads stdin one line at a time through its thread pool — three thread hops for every
message — and hands each message on before it reads the next, so a request waits behind
every notification the client sent before it: during a burst of typing a hover waited
~0.9 ms for each queued `didChange`, hundreds of them (issue 22). Here one thread reads the
framed messages as fast as they come and the event loop takes all that has arrived at once
(the shape of ruff's server: a reader thread, a main loop draining its channel).

Within one batch a `didChange` of a document is dropped when a later `didChange` of the
same document in the batch replaces its whole text (the server asks for whole texts,
`TextDocumentSyncKind.Full`) and nothing between them may look at the document: a request
(it may ask about that very version), or any other notification about the same document
(`didSave`, `didClose`, `didOpen`). The order of everything kept is the order it came in.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import IO, Any

from lsprotocol import types

logger = logging.getLogger("moor_lsp")

_CHANGE = types.TEXT_DOCUMENT_DID_CHANGE
_HEADER_LENGTH = b"content-length"
CHUNK = 1 << 16
# Messages read ahead and not yet handled, at most: beyond it the reader waits, and so does
# the client (a flood is held in the pipe, not in this process's memory).
PENDING_AT_MOST = 1024
# Messages parsed and coalesced together, at most: what one batch holds alive at once.
BATCH_AT_MOST = 256


class Inbox:
    """The client's message bodies, read by a daemon thread; `batch` takes what arrived."""

    def __init__(self, stream: IO[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self._stream = stream
        self._loop = loop
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)  # the reader waits for it when full
        self._bodies: deque[bytes] = deque()
        self._ended = False
        self._woken = False  # a wake-up is on its way to the loop
        self._arrived = asyncio.Event()
        self._thread = threading.Thread(target=self._read, name="moor-inbox", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _read(self) -> None:
        try:
            for body in _messages(self._stream):
                self._put(body)
        except (OSError, ValueError):
            logger.warning("reading from the client failed", exc_info=True)
        finally:
            with self._lock:
                self._ended = True
            self._wake()

    def _put(self, body: bytes) -> None:
        with self._lock:
            while len(self._bodies) >= PENDING_AT_MOST:
                self._room.wait()  # the client's writes wait in the pipe meanwhile
            self._bodies.append(body)
            if self._woken:
                return  # the loop has not taken the last wake-up yet: it will see this too
            self._woken = True
        self._wake()

    def _wake(self) -> None:
        # A closed loop (RuntimeError): nobody is reading any more.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._arrived.set)

    async def batch(self) -> list[bytes] | None:
        """The bodies that arrived since the last call, at most BATCH_AT_MOST of them
        (waiting for one); None at the end."""
        while True:
            with self._lock:
                take = min(len(self._bodies), BATCH_AT_MOST)
                bodies = [self._bodies.popleft() for _ in range(take)]
                self._room.notify()
                self._woken = bool(self._bodies)  # the rest is taken without a wake-up
                ended = self._ended and not self._bodies
                if not self._bodies:
                    self._arrived.clear()
            if bodies:
                return bodies
            if ended:
                return None
            await self._arrived.wait()


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    """What the stream holds as it comes, from its file descriptor where it has one: a
    thread blocked in a buffered reader's `read` holds that reader's lock, and the
    interpreter aborts at exit when a daemon thread holds it."""
    try:
        descriptor: int | None = stream.fileno()
    except (OSError, ValueError, AttributeError):
        descriptor = None
    # Without a descriptor (a stream in memory): whatever it has, without waiting for more.
    read_some = getattr(stream, "read1", stream.read)
    while True:
        chunk = os.read(descriptor, CHUNK) if descriptor is not None else read_some(CHUNK)
        if not chunk:
            return
        yield chunk


def _messages(stream: IO[bytes]) -> Iterator[bytes]:
    """Each message's body: headers up to an empty line, then Content-Length bytes (a
    header block without a readable length is skipped, as pygls does)."""
    pending = bytearray()
    chunks = _chunks(stream)

    def more() -> bool:
        chunk = next(chunks, b"")
        pending.extend(chunk)
        return bool(chunk)

    while True:
        end = pending.find(b"\r\n\r\n")
        if end < 0:
            if not more():
                return
            continue
        length = None
        for line in bytes(pending[:end]).split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == _HEADER_LENGTH:
                with contextlib.suppress(ValueError):
                    length = int(value.strip())
        del pending[: end + 4]
        if length is None:
            continue
        while len(pending) < length:
            if not more():
                return
        body = bytes(pending[:length])
        del pending[:length]
        yield body


def coalesce(messages: list[Any]) -> list[Any]:
    """`messages` without the `didChange` notifications a later one in the list makes
    moot (see the module's docstring)."""
    kept: list[Any] = []
    superseded: set[str] = set()  # documents whose text a later kept didChange replaces
    for message in reversed(messages):
        if not isinstance(message, dict):
            kept.append(message)
            continue
        method = message.get("method")
        if method is not None and "id" in message:
            superseded.clear()  # a request may ask about any document as it is now
            kept.append(message)
            continue
        uri = _document(message)
        if uri is None:
            kept.append(message)
            continue
        if method == _CHANGE:
            if uri in superseded:
                continue
            if _replaces_all(message):
                superseded.add(uri)
        else:
            superseded.discard(uri)
        kept.append(message)
    kept.reverse()
    return kept


def _document(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    document = params.get("textDocument") if isinstance(params, dict) else None
    uri = document.get("uri") if isinstance(document, dict) else None
    return uri if isinstance(uri, str) else None


def _replaces_all(message: dict[str, Any]) -> bool:
    """Whether a didChange leaves the document with a text that depends on nothing before
    it: some change in it carries a whole text (no `range`)."""
    changes = message["params"].get("contentChanges")
    return isinstance(changes, list) and any(
        isinstance(change, dict) and "range" not in change and isinstance(change.get("text"), str)
        for change in changes
    )


async def serve(
    inbox: Inbox,
    stop: threading.Event,
    structure: Callable[[Any], Any],
    handle: Callable[[Any], None],
    on_error: Callable[[Exception], None],
) -> None:
    """Hand every message on, batch by batch, until the stream ends or `stop` is set."""
    inbox.start()
    while not stop.is_set():
        bodies = await inbox.batch()
        if bodies is None:
            return
        messages: list[Any] = []
        for body in bodies:
            try:
                messages.append(json.loads(body))
            except ValueError as error:
                logger.error("unable to read a message from the client: %s", error)
                on_error(error)
        kept = coalesce(messages)
        if len(kept) < len(messages):
            logger.debug("coalesced %d superseded didChange", len(messages) - len(kept))
        for message in kept:
            try:
                handle(structure(message) if isinstance(message, dict) else message)
            except Exception as error:
                logger.exception("unable to handle a message from the client")
                on_error(error)
            if stop.is_set():
                return
            # Let the handlers started so far run (as pygls's own reading does between
            # messages): a long batch must not hold back what they answer.
            await asyncio.sleep(0)
