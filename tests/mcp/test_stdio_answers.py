"""Every request on stdio gets an answer: a line the SDK cannot take (a lone surrogate,
nesting deeper than the cap, a line longer than the cap, not JSON, not JSON-RPC) is answered
with a JSON-RPC error carrying its id when it can be read, within a bound, and the same
server answers the next request (raw JSON-RPC over a real `moor mcp` process)."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import Workspace
from tests.mcp.raw_stdio import raw_server

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
BOUND = 20.0  # seconds: far above the few milliseconds a ping takes, far below "never"
BIG = 50 * 1024 * 1024


def peak_memory(pid: int) -> int:
    """The process's peak resident set so far, in bytes (Linux's VmHWM)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def search(request_id: int, query_json: str) -> bytes:
    """A `memory_search` call whose query is the given JSON text, written as it is."""
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", "params": '
        f'{{"name": "memory_search", "arguments": {{"query": {query_json}}}}}}}\n'
    ).encode()


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


CASES = {
    "a lone surrogate in a tool call": (search(7, r'"\ud800"'), 7, PARSE_ERROR),
    "a tool call nested 900 levels deep": (
        (
            '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
            f'"memory_search", "arguments": {{"query": "x", "deep": {nested(900)}}}}}}}\n'
        ).encode(),
        7,
        INVALID_REQUEST,
    ),
    "a ping nested 100,000 levels deep": (
        (
            '{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": '
            f'{{"a": {nested(100_000)}}}}}\n'
        ).encode(),
        7,
        INVALID_REQUEST,
    ),
    "a ping inside 100,000 arrays (no id to read)": (
        (
            "[" * 100_000 + '{"jsonrpc": "2.0", "id": 7, "method": "ping"}' + "]" * 100_000 + "\n"
        ).encode(),
        None,
        INVALID_REQUEST,
    ),
    "a line that is not JSON, cut after its id": (
        b'{"jsonrpc": "2.0", "id": 7, "method": \n',
        7,
        PARSE_ERROR,
    ),
    "a line that is not JSON at all": (b"ping\n", None, PARSE_ERROR),
    "a tool call whose number has 5,000 digits": (
        (
            '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
            f'"changes_since", "arguments": {{"cursor": {"9" * 5000}}}}}}}\n'
        ).encode(),
        7,
        INVALID_REQUEST,
    ),
    "JSON that is not a JSON-RPC message": (
        b'{"id": 7, "what": "no method"}\n',
        7,
        INVALID_REQUEST,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_message_the_sdk_cannot_take_is_answered_with_an_error_and_the_server_goes_on(
    ws: Workspace, case: str
) -> None:
    line, request_id, code = CASES[case]
    with raw_server(ws.root) as server:
        server.send(search(6, '"\\u00e9t\\u00e9"'))
        fine = server.answer(BOUND)
        assert fine is not None and fine["id"] == 6 and "result" in fine  # the control
        server.send(line)
        answer = server.answer(BOUND)
        after = server.ping(8)
    assert answer is not None, f"no answer to {case} within {BOUND} s"
    assert answer["id"] == request_id and answer["error"]["code"] == code, answer
    assert after == {"jsonrpc": "2.0", "id": 8, "result": {}}


def test_a_50_mb_line_is_refused_within_a_bound_without_being_held_and_the_server_goes_on(
    ws: Workspace,
) -> None:
    text = json.dumps("retry " * (BIG // 6))
    line = (
        '{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": '
        f'"memory_write", "arguments": {{"text": {text}}}}}}}\n'
    ).encode()
    assert len(line) > BIG
    with raw_server(ws.root) as server:
        started = time.monotonic()
        baseline = server.ping(1)
        took_ping = time.monotonic() - started
        assert baseline is not None and baseline["id"] == 1  # the control: it answers
        peak_before = peak_memory(server.process.pid)
        started = time.monotonic()
        server.send(line)
        answer = server.answer(25)
        took = time.monotonic() - started
        after = server.ping(2)
        grew = peak_memory(server.process.pid) - peak_before
    assert answer is not None, "no answer to a 50 MB line within 25 s"
    assert answer["id"] == 9 and answer["error"]["code"] == INVALID_REQUEST, answer
    assert "4,194,304 bytes" in answer["error"]["message"]
    assert after == {"jsonrpc": "2.0", "id": 2, "result": {}}
    print(f"ping {took_ping * 1000:.1f} ms, 50 MB line refused in {took:.2f} s, +{grew:,} B peak")
    assert grew < BIG // 4  # read in pieces and thrown away, never held whole
    assert not list(ws.root.glob("memories/*.md"))  # nothing of it was written


def test_a_message_nested_exactly_at_the_cap_is_served_and_one_level_deeper_is_refused(
    ws: Workspace,
) -> None:
    def ping(request_id: int, depth: int) -> bytes:  # the object and params are two levels
        return (
            f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "ping", '
            f'"params": {{"a": {nested(depth - 2)}}}}}\n'
        ).encode()

    with raw_server(ws.root) as server:
        server.send(ping(1, 64))
        at_cap = server.answer(BOUND)
        server.send(ping(2, 65))
        past_cap = server.answer(BOUND)
    assert at_cap == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert past_cap is not None and past_cap["id"] == 2
    assert past_cap["error"]["code"] == INVALID_REQUEST
    assert "deeper than 64 levels (65)" in past_cap["error"]["message"]


def test_a_line_of_exactly_the_cap_is_served_and_one_byte_more_is_refused(ws: Workspace) -> None:
    cap = 4 * 1024 * 1024

    def ping(request_id: int, size: int) -> bytes:  # `size` bytes before the newline
        head = f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "ping", "params": {{"pad": "'
        pad = "x" * (size - len(head) - len('"}}'))
        return f'{head}{pad}"}}}}\n'.encode()

    assert len(ping(1, cap)) == cap + 1
    with raw_server(ws.root) as server:
        server.send(ping(1, cap))
        at_cap = server.answer(BOUND)
        server.send(ping(2, cap + 1))
        past_cap = server.answer(BOUND)
        after = server.ping(3)
    assert at_cap == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert past_cap is not None and past_cap["id"] == 2
    assert past_cap["error"]["code"] == INVALID_REQUEST
    assert "is 4,194,305 bytes" in past_cap["error"]["message"]
    assert after == {"jsonrpc": "2.0", "id": 3, "result": {}}
