"""The server's stdin and stdout, read and written by the event loop itself.

The SDK's stdio transport reads every line and writes every reply through anyio's worker
threads: a thread hop per line read and two per reply (write, then flush), about 0.6 ms of a
tool call on the 2-core benchmark machine (docs/benchmarks.md, mcp-write). It accepts the two
streams as arguments; :func:`loop_stdio` gives it streams that the asyncio loop watches, with no
thread, when stdin and stdout are pipes or sockets (two of them): how MCP clients start a
server (pipes from Python's SDK, socket pairs from Node's). Anything else (a terminal, a
regular file, one socket for both, Windows) keeps the SDK's own streams: a loop cannot watch a
regular file, and a terminal left non-blocking would break the shell that owns it.

As with the SDK's streams, descriptors 0 and 1 point at the null device and at stderr while the
server runs (a handler or a child process that prints cannot corrupt the wire), and the wire is
put back, blocking again, when it stops. No MCP SDK import here (``server`` is the module that
imports it).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import stat
import sys
from collections import deque

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from typing import Any

_WIRES: list[io.FileIO] = []  # the wire's private descriptors while serving (wires_blocking)
HIGH_WATER = 1 << 20  # complete lines queued before the loop stops reading the client
FLUSH_AT_EXIT_SECONDS = 5.0  # replies still buffered when serving ends: then given up


def watchable(fd: int) -> bool:
    """A pipe or a socket: what the loop can watch."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _separate_wires() -> bool:
    """stdin and stdout are two watchable descriptions, not one socket for both (socat's
    EXEC, inetd): the loop's write transport takes its descriptor turning readable for the
    client closing it, which a request arriving on a shared socket would mimic."""
    if not (watchable(0) and watchable(1)):
        return False
    try:
        return not os.path.samestat(os.fstat(0), os.fstat(1))
    except OSError:
        return False


class _Waiter:
    """One task waiting for a protocol's callback (data, room in the pipe, the end)."""

    _wake: asyncio.Future[None] | None = None

    def _wakeup(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def _wait(self) -> None:
        self._wake = asyncio.get_running_loop().create_future()
        await self._wake


class LineReader(_Waiter, asyncio.Protocol):
    """The client's messages, ``async for line in reader``: one a line, as text (UTF-8 with
    bad bytes replaced, as the SDK's own reader decodes them), of any length. A newline ends a
    line (so does ``\\r\\n``: the JSON reader ignores the ``\\r``); a last line without one
    is still read at the end of the input.

    ``answer``: where a request whose ``id`` is neither an integer nor a string
    (:func:`invalid_id`) is answered at once (JSON-RPC 2.0 Invalid Request, id null) instead
    of being handed on: the SDK's parser would read it as a notification (its ``id`` ignored)
    and the request would get no answer at all."""

    def __init__(self, answer: Callable[[str], Awaitable[None]] | None = None) -> None:
        self._answer = answer
        self._buf = bytearray()
        self._scanned = 0  # no newline before this offset of _buf
        self._lines: deque[bytes] = deque()
        self._queued = 0  # bytes in _lines
        self._eof = False
        self._paused = False
        self._transport: asyncio.ReadTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._buf += data
        while (i := self._buf.find(b"\n", self._scanned)) >= 0:
            line = bytes(self._buf[: i + 1])
            del self._buf[: i + 1]  # cheap: a bytearray drops its head without copying
            self._scanned = 0
            self._lines.append(line)
            self._queued += len(line)
        self._scanned = len(self._buf)  # a long line is searched once, not per chunk
        if self._queued > HIGH_WATER and not self._paused and self._transport is not None:
            self._transport.pause_reading()  # a flooding client waits; a long line does not
            self._paused = True
        self._wakeup()

    def eof_received(self) -> bool | None:
        self._eof = True
        self._wakeup()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._wakeup()

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._next()
            if self._answer is None or not invalid_id(line):
                return line
            await self._answer(INVALID_ID_REPLY)

    async def _next(self) -> str:
        while not self._lines:
            if self._eof:
                if not self._buf:
                    raise StopAsyncIteration
                line = bytes(self._buf)
                self._buf.clear()
                return line.decode("utf-8", "replace")
            await self._wait()
        line = self._lines.popleft()
        self._queued -= len(line)
        if self._paused and self._queued <= HIGH_WATER // 2 and self._transport is not None:
            self._transport.resume_reading()
            self._paused = False
        return line.decode("utf-8", "replace")


class PipeWriter(_Waiter, asyncio.BaseProtocol):
    """The replies, ``await writer.write(text)``: handed to the loop's transport, which writes
    at once or keeps the rest until the pipe has room. A client that stops reading holds the
    writing task (flow control), never the loop: the heartbeat and the signal handler go on."""

    def __init__(self) -> None:
        self._transport: asyncio.WriteTransport | None = None
        self._paused = False
        self._lost: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self._wakeup()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = exc or BrokenPipeError("the client closed the server's stdout")
        self._wakeup()

    async def write(self, text: str) -> None:
        if self._lost is not None:
            raise self._lost
        assert self._transport is not None
        self._transport.write(text.encode("utf-8"))
        while self._paused and self._lost is None:
            await self._wait()

    async def flush(self) -> None:
        """Nothing to do: :meth:`write` hands the bytes to the pipe itself."""

    def pending(self) -> int:
        """Bytes of replies the pipe has not taken yet."""
        gone = self._transport is None or self._lost is not None
        return 0 if gone else self._transport.get_write_buffer_size()  # type: ignore[union-attr]


@contextlib.asynccontextmanager
async def loop_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """``(stdin, stdout)`` for the SDK's ``stdio_server``: a :class:`LineReader` and a
    :class:`PipeWriter` the running asyncio loop watches, or ``(None, None)`` (the SDK's own
    streams) where it cannot watch them. Typed Any: the SDK asks for anyio's ``AsyncFile``,
    of which it uses async iteration, ``write`` and ``flush``."""
    if sys.platform == "win32" or not _separate_wires():
        yield None, None
        return
    import fcntl

    loop = asyncio.get_running_loop()
    # The wire moves to private descriptors (file objects: the transports close them, and
    # `closed` says when they did, so a number reused since is never touched).
    wire_in = open(fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3), "rb", buffering=0)  # noqa: SIM115
    wire_out = open(fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3), "wb", buffering=0)  # noqa: SIM115
    _WIRES[:] = [wire_in, wire_out]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    writer = PipeWriter()
    reader = LineReader(answer=writer.write)
    transports: list[asyncio.BaseTransport] = []
    try:
        transports.append((await loop.connect_read_pipe(lambda: reader, wire_in))[0])
        transports.append((await loop.connect_write_pipe(lambda: writer, wire_out))[0])
        yield reader, writer
        deadline = loop.time() + FLUSH_AT_EXIT_SECONDS
        while writer.pending() and loop.time() < deadline:
            await asyncio.sleep(0.01)  # the last replies, to a client still reading
    finally:
        for trans in transports:  # each stops watching now; its file closes on the next turn
            if trans.is_closing():
                continue  # closed already (the client closed its end)
            if isinstance(trans, asyncio.WriteTransport):
                trans.abort()  # what the deadline above left unsent is given up
            else:
                trans.close()
        wires_blocking()  # the transports made them non-blocking
        for n, wire in ((0, wire_in), (1, wire_out)):
            if not wire.closed:
                with contextlib.suppress(OSError):
                    os.dup2(wire.fileno(), n)
                if len(transports) <= n:
                    wire.close()  # never handed to a transport
        _WIRES.clear()


def wires_blocking() -> None:
    """Put the wire's descriptions back in blocking mode (they may be shared with a wrapper
    process): on the way out, and before an exit that skips the context's own cleanup."""
    for wire in _WIRES:
        if not wire.closed:
            with contextlib.suppress(OSError):
                os.set_blocking(wire.fileno(), True)


# --- lines the SDK cannot read ----------------------------------------------------------------

# One JSON token: a string (an unterminated one runs to the end: one match, not one attempt
# per character), a bracket or punctuation, or a bare word (number, true, false, null).
_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\Z)|[{}\[\]:,]|[^\s{}\[\]:,"]++', re.DOTALL)
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_SHORT = 40  # a key longer than this is no key we look for


def envelope(line: str) -> tuple[str, int | str | None]:
    """What a line the SDK's parser refused says about itself, in one linear pass over its
    tokens that keeps only a depth (no recursion: a line nested 100,000 deep is read like a
    flat one): ``("request", id)`` when its top-level object has ``method`` and ``id``;
    ``("notification", None)`` with ``method`` and no ``id``; ``("response", None)`` without
    ``method`` but with ``result`` or ``error``; else ``("unknown", id)`` (``id`` when one was
    found). An ``id`` that is not a JSON-RPC id (an integer, or a string that is text) is None:
    the answer then goes to id null, as JSON-RPC 2.0 says for a request whose id cannot be
    read."""
    depth = 0
    expect_key = after_colon = False
    key: str | None = None
    keys: dict[str, int | str | None] = {}
    for n, m in enumerate(_TOKEN.finditer(line)):
        tok = m.group()
        if n == 0:
            if tok != "{":
                return "unknown", None
            depth, expect_key = 1, True
            continue
        if tok in ("{", "["):
            if depth == 1 and after_colon and key is not None:
                keys.setdefault(key, None)  # a container value: only its key counts
            after_colon = False
            depth += 1
        elif tok in ("}", "]"):
            depth -= 1
            if depth == 0:
                break
        elif depth != 1:
            continue
        elif tok == ":":
            after_colon = True
        elif tok == ",":
            expect_key, key = True, None
        elif expect_key:
            expect_key = False
            key = _key(tok)
        elif after_colon:
            after_colon = False
            if key is not None and key not in keys:
                keys[key] = _id_value(tok) if key == "id" else None
    if "method" in keys:
        return ("request", keys["id"]) if "id" in keys else ("notification", None)
    if "result" in keys or "error" in keys:
        return "response", None
    return "unknown", keys.get("id")


def _key(tok: str) -> str | None:
    if not tok.startswith('"') or len(tok) > _SHORT:
        return None
    try:
        value = json.loads(tok)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _id_value(tok: str) -> int | str | None:
    if _INT.fullmatch(tok):
        return int(tok)
    if tok.startswith('"'):
        try:
            value = json.loads(tok)
            value.encode("utf-8")  # a lone surrogate is no id we can send back
        except (ValueError, UnicodeEncodeError):
            return None
        return value if isinstance(value, str) else None
    return None


def unreadable(message: str) -> tuple[int, str]:
    """The JSON-RPC error (code, message) for a line the SDK's parser refused with
    ``message`` (pydantic's text, which quotes the input: never echoed)."""
    low = message.lower()
    if "surrogate" in low or "hex escape" in low:
        return PARSE_ERROR, (
            "SR182 invalid-argument-text: the request holds a \\u escape that is no text "
            "(a lone surrogate, \\ud800-\\udfff, or a broken escape); nothing was done. "
            "Send the text as UTF-8."
        )
    if "recursion limit" in low:
        return PARSE_ERROR, (
            "SR180 invalid-tool-arguments: the request nests deeper than the server reads "
            "(about 200 levels); nothing was done. Send flatter arguments."
        )
    if "invalid json" in low or "json_invalid" in low or "eof" in low:
        return PARSE_ERROR, "SR180 invalid-tool-arguments: the line is not JSON; nothing was done."
    return INVALID_REQUEST, (
        "SR180 invalid-tool-arguments: the message is not a JSON-RPC 2.0 request the server "
        "knows; nothing was done."
    )


PARSE_ERROR = -32700  # JSON-RPC 2.0
INVALID_REQUEST = -32600

# A top-level-looking ``"id":`` (its letters possibly \\u-escaped) whose value does not start
# like an integer followed by ``,``/``}`` nor like a string: only such a line is parsed again
# (a call's usual line is not), and the parse decides.
_SUSPECT_ID = re.compile(
    r'"(?:i|\\u0069)(?:d|\\u0064)"\s*:\s*(?!-?(?:0|[1-9][0-9]*)\s*[,}]|")', re.IGNORECASE
)
INVALID_ID_REPLY = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": INVALID_REQUEST,
                "message": (
                    "SR180 invalid-tool-arguments: the request's id is neither an integer nor "
                    "a string (JSON-RPC 2.0 as MCP uses it: never null, an object, an array, "
                    "a boolean or a fraction); nothing was done. Send an integer or string id."
                ),
            },
        },
        separators=(",", ":"),
    )
    + "\n"
)


def invalid_id(line: str) -> bool:
    """``line`` is a request (a JSON object with ``method``) carrying an ``id`` that is not an
    integer or a string: null, an object, an array, a boolean, a fraction (``2.0`` too, as the
    SDK reads ids strictly). JSON-RPC 2.0 answers it with Invalid Request to id null; the SDK
    would take it for a notification and answer nothing. A line that is no JSON is not this
    (the SDK's parser refuses it and :class:`~session_resume.mcp.server.AnswerUnreadable`
    answers); a notification or a response is never answered."""
    if _SUSPECT_ID.search(line) is None:
        return False
    try:
        doc = json.loads(line)
    except (ValueError, RecursionError):
        return False
    if not isinstance(doc, dict) or "method" not in doc or "id" not in doc:
        return False
    rid = doc["id"]
    return not (isinstance(rid, str) or type(rid) is int)
