"""The JSON-RPC error that answers a stdio line the SDK would drop without a word.

The SDK's stdio transport validates each line and, when it cannot (not JSON, a lone
surrogate its parser refuses, nesting past its parser's limit, not a JSON-RPC message),
hands the server an exception the server only logs: the client waits forever. `answer_for`
gives such a line its error instead (-32700 parse error or -32600 invalid request), with
the request's id when the top-level object names one before or after whatever broke it,
else id null, as JSON-RPC 2.0 says. Two caps make a message's cost bounded whatever it
holds: `MAX_LINE_BYTES` (the SDK's own cap on an HTTP request body, so both transports
take the same messages) and `MAX_DEPTH`, checked by a bracket scan before any parser
recurses.
"""

from __future__ import annotations

import json
import re
import sys

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    RequestId,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

MAX_LINE_BYTES: int = DEFAULT_MAX_REQUEST_BODY_SIZE  # 4 MiB
MAX_DEPTH = 64  # no MCP message nests near this; the SDK's parser gives up near 200
_ID_SCAN = 64 * 1024  # an over-long line's id is looked for this far in

_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"?'  # the closing quote is optional: a cut-off line
_BRACKETS = re.compile(rf"{_STRING}|[\[\]{{}}]", re.S)
_TOKENS = re.compile(rf"{_STRING}|[\[\]{{}}:,]|[^\s\[\]{{}}:,\"]+", re.S)


def answer_for(text: str) -> JSONRPCError | None:
    """None when the SDK can take the line as it is; else the error that answers it."""
    deepest = _depth(text)
    if deepest > MAX_DEPTH:
        return _error(
            text,
            INVALID_REQUEST,
            f"the message nests deeper than {MAX_DEPTH} levels ({deepest}); "
            f"moor mcp reads messages nested at most {MAX_DEPTH} deep",
        )
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
        return None
    except ValidationError:
        pass
    try:
        value = json.loads(text)
    except ValueError as error:
        if "integer string conversion" in str(error):
            # Valid JSON, but Python reads no integer this long (sys.int_info): nothing a
            # tool takes is a number of thousands of digits.
            return _error(
                text,
                INVALID_REQUEST,
                f"a number in the message has more than {sys.get_int_max_str_digits()} "
                "digits; moor mcp reads no number that long",
            )
        return _error(text, PARSE_ERROR, f"the line is not JSON: {error}")
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return _error(
            text,
            PARSE_ERROR,
            "the message holds a lone surrogate (a \\ud800-\\udfff escape that is half of a "
            "pair), which is not a Unicode character",
        )
    return _error(
        text, INVALID_REQUEST, "the JSON is not a JSON-RPC 2.0 request, notification or response"
    )


def too_long(prefix: bytes, size: int) -> JSONRPCError:
    """The error for a line longer than `MAX_LINE_BYTES`, of which `prefix` was read."""
    return _error(
        prefix[:_ID_SCAN].decode("utf-8", "replace"),
        INVALID_REQUEST,
        f"the message is {size:,} bytes; moor mcp reads messages of at most "
        f"{MAX_LINE_BYTES:,} bytes (one line each)",
    )


def _error(text: str, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(
        jsonrpc="2.0", id=_top_level_id(text), error=ErrorData(code=code, message=message)
    )


def _depth(text: str) -> int:
    depth = deepest = 0
    for match in _BRACKETS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
    return deepest


def _top_level_id(text: str) -> RequestId | None:
    """The `id` of the object the line is, read token by token (the line need not parse)."""
    depth, outer, found = 0, "", None
    last: list[str] = []  # the two tokens before this one, at depth 1
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            outer = outer or token
        elif token in "]}":
            depth -= 1
        elif depth == 1 and outer == "{":
            if last == ['"id"', ":"]:
                found = _request_id(token)
            last = [*last[-1:], token]
    return found


def _request_id(token: str) -> RequestId | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return None
    return value
