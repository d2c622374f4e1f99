"""stdio: the end of stdin ends the session only once every request already read is answered.

``printf '<initialize>\\n<initialized>\\n<tools/list>\\n' | mcp-bridge serve PACKAGE`` closes stdin
right after the last request. The SDK's dispatcher treats end of input as "the peer is gone" and
cancels every handler still running, so the ``tools/list`` answer was lost about one run in five
(more often with a slower start-up). :func:`answer_before_eof` wraps the transport's streams so
that the server's input stays open after stdin's end until each request it passed on has been
answered (a response or an error went out), or cancelled by the client
(``notifications/cancelled``: no answer will come), or :data:`EOF_GRACE` seconds have passed;
then the input ends and the server exits as before.

The wrappers track the pending ids inline, in the server's own ``receive`` and ``send`` calls:
no task and no memory-object stream stands between the transport and the server, so a message
costs no extra task switches (two hops a message cost about 0.1 ms of CPU a call). The sender's
context snapshot (``last_context``) the SDK's transport carries is passed through. The streams are
typed as anyio's public stream classes (the SDK's stdio transport yields anyio memory streams), not
the SDK's private ``mcp.shared._stream_protocols``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

__all__ = ["EOF_GRACE", "answer_before_eof"]

EOF_GRACE = 120.0
"""Seconds after stdin's end that requests still running may take to be answered."""


class _Pending:
    """Ids of requests passed to the server and not yet answered or cancelled."""

    def __init__(self) -> None:
        self.ids: set[tuple[str, str]] = set()
        self.changed = anyio.Event()

    def add(self, request_id: Any) -> None:
        self.ids.add(_key(request_id))

    def done(self, request_id: Any) -> None:
        key = _key(request_id)
        if key in self.ids:
            self.ids.discard(key)
            self.changed.set()

    async def empty(self) -> None:
        while self.ids:
            self.changed = anyio.Event()
            await self.changed.wait()


def _key(request_id: Any) -> tuple[str, str]:
    return (type(request_id).__name__, str(request_id))


class _Inbound:
    """The server's read stream: the transport's, holding its end back while requests are pending."""

    def __init__(self, inner: ObjectReceiveStream[SessionMessage | Exception], pending: _Pending, grace: float) -> None:
        self._inner = inner
        self._pending = pending
        self._grace = grace
        self._ended = False

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        if not self._ended:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                self._ended = True
            else:
                message = item.message if isinstance(item, SessionMessage) else None
                if isinstance(message, JSONRPCRequest):
                    self._pending.add(message.id)
                elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
                    request_id = (message.params or {}).get("requestId")
                    if request_id is not None:
                        self._pending.done(request_id)
                return item
        with anyio.move_on_after(self._grace):
            await self._pending.empty()
        raise anyio.EndOfStream

    def __aiter__(self) -> _Inbound:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Inbound:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class _Outbound:
    """The server's write stream: the transport's, marking each answered request done."""

    def __init__(self, inner: ObjectSendStream[SessionMessage], pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            try:
                await self._inner.send(item)
            finally:
                # Sent or not (the transport is gone), no answer is owed any more.
                self._pending.done(message.id)
            return
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Outbound:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


@asynccontextmanager
async def answer_before_eof(
    read: ObjectReceiveStream[SessionMessage | Exception],
    write: ObjectSendStream[SessionMessage],
    *,
    grace: float = EOF_GRACE,
) -> AsyncIterator[tuple[_Inbound, _Outbound]]:
    """The streams to give the server instead of the transport's ``read`` and ``write``."""
    pending = _Pending()
    yield _Inbound(read, pending, grace), _Outbound(write, pending)
