"""The pipe: one JSON request per line in, one JSON reply per line out.

A reply is {"ok": true, ...} or {"ok": false, "error": "one line"}; "unavailable" instead of
"error" means the worker cannot run here at all (no torch), which the harness records as a skip.
"""

import json
import os
import sys

MAX_REQUEST_BYTES = 1 << 20  # a request is a few hundred bytes; a longer line is not ours


class BadRequest(Exception):
    """A request the worker does not understand: answered with its one-line error."""


def open_channel():
    """Keeps the original stdout for replies and points fd 1 at stderr, so that nothing a library
    prints can break a reply line; keeps the original stdin for requests and points fd 0 at
    /dev/null, so that no child process (Inductor's compile workers, which inherit fd 0:
    compile_worker/subproc_pool.py) holds the socket open after this process dies. Returns the
    reply channel and the request stream (both close-on-exec, as os.dup makes them)."""
    channel = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    incoming = os.fdopen(os.dup(0), "r", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(os.devnull, encoding="utf-8")
    return channel, incoming


def requests(stream):
    """Yields each request (a dict), or a BadRequest for a line that is not one."""
    for line in stream:
        if len(line) > MAX_REQUEST_BYTES:
            yield BadRequest(f"a request line of {len(line)} bytes (at most {MAX_REQUEST_BYTES})")
            continue
        try:
            request = json.loads(line)
        except ValueError as e:
            yield BadRequest(f"not JSON: {e}")
            continue
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            yield BadRequest('a request is an object with a string "op"')
            continue
        yield request


def send(channel, reply):
    channel.write(json.dumps(reply, allow_nan=False, separators=(",", ":")) + "\n")
    channel.flush()


def field(request, name, kind, default=None, choices=None):
    """The request's field `name` of type `kind`; `default` when absent (None: required)."""
    value = request.get(name, default)
    if value is None:
        raise BadRequest(f'"{request["op"]}" needs "{name}"')
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        raise BadRequest(f'"{name}" must be {kind.__name__}, not {type(value).__name__}')
    if choices is not None and value not in choices:
        raise BadRequest(f'"{name}" is {value!r}: one of {", ".join(map(str, choices))}')
    return value
