"""Reading the client's messages: in a thread of its own, parsed and coalesced as they come.

pygls reads stdin one line at a time through its thread pool — three thread hops for every
message — and hands each message on before it reads the next, so a request waits behind
every notification the client sent before it: during a burst of typing a hover waited
~0.9 ms for each queued `didChange`, hundreds of them (issue 22). Here one thread reads the
framed messages as fast as they come, parses each and keeps it in a queue the event loop
takes whole (the shape of ruff's server: a reader thread, a main loop draining its channel).

A `didChange` of a document still in that queue is dropped when a `didChange` of the same
document that replaces its whole text (the server asks for whole texts,
`TextDocumentSyncKind.Full`) arrives and nothing between them may look at the document: a
request (it may ask about that very version), or any other notification about the same
document (`didSave`, `didClose`, `didOpen`). The order of everything kept is the order it
came in. Coalescing as messages arrive, over the whole queue rather than over what the
loop takes at once, keeps the queue as short as the documents being edited: a request
written during a flood of edits waits behind a few messages, not behind the ~1,000 the
reader may hold ahead (issue 22: a hover during a flood at 10,000 memories).
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
# Messages handed to the event loop at once, at most.
BATCH_AT_MOST = 256


class Inbox:
    """The client's messages, read and parsed by a daemon thread; `batch` takes what
    arrived. A body that is not JSON is handed on as the `ValueError` it raised."""

    def __init__(self, stream: IO[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self._stream = stream
        self._loop = loop
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)  # the reader waits for it when full
        self._pending = Pending()
        self._ended = False
        self._woken = False  # a wake-up is on its way to the loop
        self._arrived = asyncio.Event()
        self._thread = threading.Thread(target=self._read, name="moor-inbox", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _read(self) -> None:
        try:
            for body in _messages(self._stream):
                self._put(_parsed(body))
        except (OSError, ValueError):
            logger.warning("reading from the client failed", exc_info=True)
        finally:
            with self._lock:
                self._ended = True
            self._wake()

    def _put(self, message: Any) -> None:
        with self._lock:
            while self._pending.held >= PENDING_AT_MOST:
                self._room.wait()  # the client's writes wait in the pipe meanwhile
            self._pending.add(message)
            if self._woken:
                return  # the loop has not taken the last wake-up yet: it will see this too
            self._woken = True
        self._wake()

    def _wake(self) -> None:
        # A closed loop (RuntimeError): nobody is reading any more.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._arrived.set)

    async def batch(self) -> list[Any] | None:
        """The messages that arrived since the last call and were not coalesced away, at
        most BATCH_AT_MOST of them (waiting for one); None at the end."""
        while True:
            with self._lock:
                messages = self._pending.take(BATCH_AT_MOST)
                self._room.notify()
                self._woken = bool(self._pending)  # the rest is taken without a wake-up
                ended = self._ended and not self._pending
                if not self._pending:
                    self._arrived.clear()
            if messages:
                return messages
            if ended:
                return None
            await self._arrived.wait()

    @property
    def coalesced(self) -> int:
        """How many `didChange` notifications were dropped so far."""
        return self._pending.dropped


class Pending:
    """Messages in the order they came, each superseded `didChange` dropped as the one
    that supersedes it is added (see the module's docstring): O(1) a message."""

    def __init__(self) -> None:
        self._slots: deque[list[Any]] = deque()  # [message]; [] once dropped or taken
        self._count = 0  # slots not dropped
        # Each document's latest didChange in the queue that nothing after it looked at.
        self._changes: dict[str, list[Any]] = {}
        self.dropped = 0

    def __len__(self) -> int:
        """Messages to hand on."""
        return self._count

    @property
    def held(self) -> int:
        """Slots held, dropped ones too (each a few bytes until the loop takes past it)."""
        return len(self._slots)

    def add(self, message: Any) -> None:
        slot = [message]
        self._slots.append(slot)
        self._count += 1
        if not COALESCING or not isinstance(message, dict):
            return
        method = message.get("method")
        if method is not None and "id" in message:
            self._changes.clear()  # a request may ask about any document as it is now
            return
        uri = _document(message)
        if uri is None:
            return
        if method != _CHANGE:
            self._changes.pop(uri, None)
            return
        earlier = self._changes.get(uri)
        if earlier is not None and earlier and _replaces_all(message):
            earlier.clear()
            self._count -= 1
            self.dropped += 1
        self._changes[uri] = slot

    def take(self, most: int) -> list[Any]:
        """Up to `most` messages, oldest first; what is taken can no longer be dropped."""
        taken: list[Any] = []
        while self._slots and len(taken) < most:
            slot = self._slots.popleft()
            if slot:
                taken.append(slot.pop())  # emptied: a later change will not drop it
        self._count -= len(taken)
        if not self._slots:
            self._changes.clear()
        return taken


# Whether superseded edits are dropped (a test of what each handled notification leaves
# behind turns it off).
COALESCING = True


def _parsed(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError as error:
        return error


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
    reported = 0
    while not stop.is_set():
        messages = await inbox.batch()
        if messages is None:
            return
        if inbox.coalesced > reported:
            logger.debug("coalesced %d superseded didChange", inbox.coalesced - reported)
            reported = inbox.coalesced
        for message in messages:
            if isinstance(message, ValueError):
                logger.error("unable to read a message from the client: %s", message)
                on_error(message)
                continue
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
