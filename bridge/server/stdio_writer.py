"""stdio: each message goes out in one worker-thread hop, not two, with the SDK's own claim of fd 1.

The SDK's stdio writer awaits ``stdout.write(line)`` and then ``stdout.flush()`` on an
``anyio.wrap_file``: each is a hop to a worker thread and back (a thread wake-up, a future, the
event loop's self-pipe), about as much CPU as the rest of a small tools/call's wire work together.
:func:`stdio_streams` hands the SDK's ``stdio_server`` a stdout whose ``write`` only keeps the
line and whose ``flush`` writes and flushes it in a single hop; the bytes, their order and the
blocking write in a worker thread (a client slow to read never stalls the event loop) are as before.

``stdio_server`` skips its claim of a stdout it is given, so fd 1 is claimed here with the SDK's
own function first: while serving, fd 1 points at stderr (stray output from a hook or a library
misses the wire) and the wire is written through a private duplicate; both are put back on exit.
stdin is left to ``stdio_server`` as it is. (``mcp`` is pinned to a minor, 2.3; the claim's
helpers are its ``mcp.server.stdio`` module's, and ``tests/e2e`` checks a stray print stays off
the wire.)
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio

__all__ = ["stdio_streams"]


class _OneHopStdout:
    """The async text file the SDK's stdout writer needs (``write`` then ``flush``), one hop a line."""

    def __init__(self, file: TextIO) -> None:
        self._file = file
        self._pending: list[str] = []

    async def write(self, text: str) -> int:
        self._pending.append(text)  # the writer task flushes right after; nothing else writes here
        return len(text)

    async def flush(self) -> None:
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        await anyio.to_thread.run_sync(self._write_and_flush, text)

    def _write_and_flush(self, text: str) -> None:
        self._file.write(text)
        self._file.flush()


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's ``stdio_server`` streams, its stdout written one hop a message."""
    from mcp.server import stdio as sdk_stdio

    buffer, release = sdk_stdio._claim_fd(1, sys.stdout, "wb", sdk_stdio._open_stdout_diversion)
    try:
        text = sdk_stdio._UnownedTextWrapper(buffer, encoding="utf-8")
        async with sdk_stdio.stdio_server(stdout=_OneHopStdout(text)) as streams:  # type: ignore[arg-type]
            yield streams
    finally:
        if release is not None:
            release()
