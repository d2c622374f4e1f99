"""stdio: the end of stdin ends the session only once every request already read is answered.

``printf '<initialize>\\n<initialized>\\n<tools/list>\\n' | mcp-bridge serve PACKAGE`` closes stdin
right after the last request. The SDK's dispatcher treats end of input as "the peer is gone" and
cancels every handler still running, so the ``tools/list`` answer was lost about one run in five
(more often with a slower start-up). Between the transport and the server, :func:`answer_before_eof`
keeps the server's input open after stdin's end until each request it passed on has been answered
(a response or an error went out), or cancelled by the client (``notifications/cancelled``: no
answer will come), or :data:`EOF_GRACE` seconds have passed; then the input ends and the server
exits as before.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
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
        self.ids: set[Any] = set()
        self.changed = anyio.Event()

    def add(self, request_id: Any) -> None:
        self.ids.add(_key(request_id))

    def done(self, request_id: Any) -> None:
        self.ids.discard(_key(request_id))
        self.changed.set()

    async def empty(self) -> None:
        while self.ids:
            self.changed = anyio.Event()
            await self.changed.wait()


def _key(request_id: Any) -> tuple[str, str]:
    return (type(request_id).__name__, str(request_id))


@asynccontextmanager
async def answer_before_eof(
    read: ObjectReceiveStream[SessionMessage | Exception],
    write: ObjectSendStream[SessionMessage],
    *,
    grace: float = EOF_GRACE,
) -> AsyncIterator[tuple[ObjectReceiveStream[SessionMessage | Exception], ObjectSendStream[SessionMessage]]]:
    """The streams to give the server instead of the transport's ``read`` and ``write``."""
    pending = _Pending()
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](math.inf)

    async def inbound() -> None:
        async with to_server:
            async with read:
                async for item in read:
                    message = item.message if isinstance(item, SessionMessage) else None
                    if isinstance(message, JSONRPCRequest):
                        pending.add(message.id)
                    elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
                        request_id = (message.params or {}).get("requestId")
                        if request_id is not None:
                            pending.done(request_id)
                    await to_server.send(item)
            with anyio.move_on_after(grace):
                await pending.empty()

    async def outbound() -> None:
        async with write:
            async with from_server:
                async for item in from_server:
                    message = item.message
                    if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
                        pending.done(message.id)
                    await write.send(item)

    reading = anyio.CancelScope()

    async def inbound_until_done() -> None:
        with reading:
            await inbound()

    async with anyio.create_task_group() as tg:
        tg.start_soon(inbound_until_done)
        tg.start_soon(outbound)
        try:
            yield server_reads, server_writes
        finally:
            # The server is done: stop reading, and let what it wrote reach the transport.
            reading.cancel()
            server_reads.close()
            server_writes.close()
