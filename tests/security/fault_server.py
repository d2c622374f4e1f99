"""A raw asyncio HTTP/1.1 server on 127.0.0.1 that misbehaves on purpose, and records every attempt.

The toxiproxy / nginx-tests idea without a daemon: a real loopback socket (so h11 and the kernel
are in the loop, unlike ``httpx.MockTransport``), answering each request with the next
:class:`Fault` of a script. Every request is recorded as an :class:`Attempt` (method, raw target,
headers, body, whether the client closed the connection before the answer was complete), so a
test can assert "no request reached the upstream" (``server.attempts == []``) or count retries.

Usage::

    async with FaultServer(Fault.error(503), Fault.error(503), Fault.ok(b"{}")) as server:
        ...  # server.url == "http://127.0.0.1:<port>"
    assert server.count == 3

The script is consumed one fault per request; the last fault repeats. A callable
``(Attempt) -> Fault`` may be given instead of a fault. Every answer closes the connection
(``Connection: close``), so one request is one TCP connection. The server stops itself after
``lifetime`` seconds even if the test forgets to (hanging connections are aborted on exit).

Modes: ``ok``, ``echo`` (request headers and body as JSON), ``delay``, ``drip`` (body one slice
per interval), ``hang`` (never answers), ``reset`` (some bytes, then a TCP RST), ``close``
(reads the whole request, closes without answering), ``oversize`` (endless or huge body,
chunked or with a true Content-Length), ``lying_length`` (Content-Length larger than the body,
then close), ``gzip_bomb`` (small gzip body, huge decoded, optionally stacked codings),
``redirect``, ``error`` (e.g. 503 with ``Retry-After``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import json
import socket
import ssl
import struct
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

HOST = "127.0.0.1"
DEFAULT_LIFETIME = 30.0
_MAX_HEAD = 64 * 1024
_MAX_BODY = 8 * 1024 * 1024


@dataclass
class Attempt:
    """One request as the server received it."""

    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes
    started: float
    finished: float | None = None
    client_closed_early: bool = False
    """The client closed the connection before the server finished its answer."""
    bytes_sent: int = 0
    peer_cert: dict[str, Any] | None = None
    """HTTPS: the client certificate the TLS handshake verified (None: none was presented)."""

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def query(self) -> str:
        return self.target.split("?", 1)[1] if "?" in self.target else ""

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


@functools.lru_cache(maxsize=8)
def _bomb(decoded: int, layers: int) -> bytes:
    data = b"\0" * decoded
    for _ in range(layers):
        data = gzip.compress(data, compresslevel=9)
    return data


@dataclass(frozen=True)
class Fault:
    """What the server does with one request. Build with the class methods."""

    kind: str
    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    interval: float = 0.0
    size: int = 0
    chunk: int = 1
    chunked: bool = False

    # --------------------------------------------------------------------------- constructors

    @classmethod
    def ok(
        cls,
        body: bytes | Any = b"{}",
        *,
        status: int = 200,
        content_type: str = "application/json",
        headers: Sequence[tuple[str, str]] = (),
    ) -> Fault:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return cls("ok", status=status, body=data, headers=(("Content-Type", content_type), *headers))

    @classmethod
    def echo(cls, status: int = 200) -> Fault:
        """Answer with ``{"method", "target", "headers", "body"}`` of the request (headers echoed)."""
        return cls("echo", status=status)

    @classmethod
    def delay_then(cls, seconds: float, then: Fault | None = None) -> Fault:
        inner = then or cls.ok()
        return cls("delay", status=inner.status, body=inner.body, headers=inner.headers, delay=seconds)

    @classmethod
    def drip(cls, body: bytes = b'{"data": "' + b"x" * 64 + b'"}', *, interval: float = 0.5, chunk: int = 1) -> Fault:
        """A true Content-Length, then ``chunk`` bytes every ``interval`` seconds."""
        return cls("drip", body=body, interval=interval, chunk=chunk, headers=(("Content-Type", "application/json"),))

    @classmethod
    def hang(cls) -> Fault:
        return cls("hang")

    @classmethod
    def reset(cls, *, partial: bytes = b'{"items": [1, 2', declared: int = 1000) -> Fault:
        """Headers and ``partial`` bytes of a ``declared``-byte body, then an abortive close (RST)."""
        return cls("reset", body=partial, size=declared, headers=(("Content-Type", "application/json"),))

    @classmethod
    def close(cls) -> Fault:
        """Read the whole request (body too), then close without answering."""
        return cls("close")

    @classmethod
    def oversize(cls, size: int = 10 * 1024 * 1024, *, chunked: bool = True) -> Fault:
        """A ``size``-byte body (``0``: endless), chunked or with a true Content-Length."""
        return cls("oversize", size=size, chunked=chunked, chunk=64 * 1024, headers=(("Content-Type", "text/plain"),))

    @classmethod
    def lying_length(cls, *, declared: int = 1000, body: bytes = b'{"short": true}') -> Fault:
        """``Content-Length: declared`` but only ``body`` is sent, then the connection closes."""
        return cls("lying_length", body=body, size=declared, headers=(("Content-Type", "application/json"),))

    @classmethod
    def gzip_bomb(cls, decoded: int = 50 * 1024 * 1024, *, layers: int = 1, status: int = 200) -> Fault:
        coding = ", ".join(["gzip"] * layers)
        return cls(
            "ok",
            status=status,
            body=_bomb(decoded, layers),
            headers=(("Content-Type", "application/json"), ("Content-Encoding", coding)),
        )

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> Fault:
        return cls("ok", status=status, headers=(("Location", location),))

    @classmethod
    def error(
        cls, status: int = 503, *, retry_after: str | None = None, body: bytes = b'{"error": "unavailable"}'
    ) -> Fault:
        headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)
        if retry_after is not None:
            headers = (*headers, ("Retry-After", retry_after))
        return cls("ok", status=status, body=body, headers=headers)


Script = Fault | Callable[[Attempt], Fault]


class FaultServer:
    """The server; an async context manager (see the module docstring)."""

    def __init__(
        self,
        *script: Script,
        lifetime: float = DEFAULT_LIFETIME,
        host: str = HOST,
        port: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        if host != HOST:
            raise ValueError("the fault server only listens on 127.0.0.1")
        self.script = script or (Fault.ok(),)
        self.lifetime = lifetime
        self.host = host
        self.attempts: list[Attempt] = []
        self.port = port
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopper: asyncio.TimerHandle | None = None
        self._changed: asyncio.Event | None = None
        self.connections = 0
        self.tls = tls  # HTTPS: the server's SSL context (it may require a client certificate)

    # ------------------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        return f"{'https' if self.tls is not None else 'http'}://{self.host}:{self.port}"

    @property
    def count(self) -> int:
        return len(self.attempts)

    async def __aenter__(self) -> FaultServer:
        self._changed = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, self.host, self.port, limit=_MAX_HEAD, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        self._stopper = asyncio.get_running_loop().call_later(self.lifetime, self._stop_now)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._stop_now()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    def _stop_now(self) -> None:
        if self._stopper is not None:
            self._stopper.cancel()
            self._stopper = None
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()

    async def wait_for(self, count: int, *, closed: bool = False, timeout: float = 10.0) -> None:
        """Wait until ``count`` attempts arrived (and, with ``closed``, all of them are finished).

        Raises:
            TimeoutError: not within ``timeout`` seconds.
        """
        assert self._changed is not None
        changed = self._changed

        async def until() -> None:
            while self.count < count or (closed and any(a.finished is None for a in self.attempts)):
                changed.clear()
                await changed.wait()

        await asyncio.wait_for(until(), timeout)

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()

    # ------------------------------------------------------------------------------- requests

    def _next(self, attempt: Attempt) -> Fault:
        index = min(len(self.attempts) - 1, len(self.script) - 1)
        step = self.script[index]
        return step if isinstance(step, Fault) else step(attempt)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self.connections += 1
        attempt: Attempt | None = None
        try:
            attempt = await self._read_request(reader)
            if attempt is None:
                return
            attempt.peer_cert = writer.get_extra_info("peercert")
            self.attempts.append(attempt)
            self._notify()
            fault = self._next(attempt)
            gone = asyncio.Event()
            watcher = asyncio.create_task(self._watch_eof(reader, gone))
            try:
                finished = await self._play(fault, attempt, writer, gone)
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            attempt.client_closed_early = not finished and gone.is_set()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            if attempt is not None:
                attempt.client_closed_early = True
        finally:
            if attempt is not None and attempt.finished is None:
                attempt.finished = time.monotonic()
            self._writers.discard(writer)
            self._tasks.discard(task)
            if not writer.transport.is_closing():
                writer.close()
            self._notify()

    async def _read_request(self, reader: asyncio.StreamReader) -> Attempt | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        started = time.monotonic()
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers.append((name.strip(), value.strip()))
        attempt = Attempt(method=method, target=target, headers=headers, body=b"", started=started)
        length = attempt.header("content-length")
        if length is not None and length.isdigit():
            attempt.body = await reader.readexactly(min(int(length), _MAX_BODY))
        elif (attempt.header("transfer-encoding") or "").lower() == "chunked":
            attempt.body = await _read_chunked(reader)
        return attempt

    @staticmethod
    async def _watch_eof(reader: asyncio.StreamReader, gone: asyncio.Event) -> None:
        try:
            while await reader.read(65536):
                pass
        except ConnectionError:
            pass
        gone.set()

    async def _play(self, fault: Fault, attempt: Attempt, writer: asyncio.StreamWriter, gone: asyncio.Event) -> bool:
        """Answer per ``fault``; True when the answer was given in full (as the fault intends)."""

        async def send(data: bytes) -> None:
            writer.write(data)
            await writer.drain()
            attempt.bytes_sent += len(data)

        async def pause(seconds: float) -> bool:
            """Sleep ``seconds``; False when the client went away meanwhile."""
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(gone.wait(), timeout=seconds)
            return not gone.is_set()

        kind = fault.kind
        if kind == "hang":
            await gone.wait()
            return False
        if kind == "close":
            return True
        if kind == "delay":
            if not await pause(fault.delay):
                return False
            kind = "ok"
        if kind == "echo":
            payload = {
                "method": attempt.method,
                "target": attempt.target,
                "headers": attempt.headers,
                "body": attempt.body.decode("utf-8", "replace"),
            }
            body = json.dumps(payload).encode()
            await send(_head(fault.status, [("Content-Type", "application/json")], len(body)) + body)
            return True
        if kind == "ok":
            await send(_head(fault.status, fault.headers, len(fault.body)) + fault.body)
            return True
        if kind == "drip":
            await send(_head(fault.status, fault.headers, len(fault.body)))
            for start in range(0, len(fault.body), fault.chunk):
                if not await pause(fault.interval):
                    return False
                await send(fault.body[start : start + fault.chunk])
            return True
        if kind == "lying_length":
            await send(_head(fault.status, fault.headers, fault.size) + fault.body)
            return True
        if kind == "reset":
            await send(_head(fault.status, fault.headers, fault.size) + fault.body)
            _abort_with_rst(writer)
            return True
        if kind == "oversize":
            return await self._oversize(fault, send, gone)
        raise ValueError(f"unknown fault {kind!r}")

    @staticmethod
    async def _oversize(fault: Fault, send: Callable[[bytes], Awaitable[None]], gone: asyncio.Event) -> bool:
        block = b"x" * fault.chunk
        if fault.chunked:
            await send(_head(fault.status, (*fault.headers, ("Transfer-Encoding", "chunked")), None))
        else:
            await send(_head(fault.status, fault.headers, fault.size))
        sent = 0
        while (fault.size == 0 or sent < fault.size) and not gone.is_set():
            piece = block if fault.size == 0 else block[: fault.size - sent]
            data = f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if fault.chunked else piece
            await send(data)
            sent += len(piece)
            await asyncio.sleep(0)
        if gone.is_set():
            return False
        if fault.chunked:
            await send(b"0\r\n\r\n")
        return True


def _head(status: int, headers: Sequence[tuple[str, str]], length: int | None) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines.extend(f"{name}: {value}" for name, value in headers)
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _abort_with_rst(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return bytes(body)
        body += await reader.readexactly(size)
        await reader.readexactly(2)
        if len(body) > _MAX_BODY:
            raise ValueError("request body too large")


def closed_port() -> int:
    """A 127.0.0.1 port with nothing listening (connections are refused)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
    return port
