"""stdio with fewer worker-thread hops: lines read on the event loop, each message written in one hop.

The SDK's stdio transport reads and writes through ``anyio.wrap_file``: every line read is a hop
to a worker thread and back (a thread wake-up, a future, the event loop's self-pipe), and every
message written two (``write``, then ``flush``); each hop costs about as much CPU as the rest of a
small tools/call's wire work. :func:`stdio_streams` hands the SDK's ``stdio_server`` its own two
files instead, and the SDK does everything else (parsing, the memory streams, the JSON dump):

- stdin: :class:`bridge.server.stdio_reader.LineReader`, which reads a pipe or a terminal when the
  event loop's selector says it is readable (the same lines as the SDK's text wrapper);
- stdout: ``write`` keeps the line, ``flush`` writes and flushes it in a single hop; the bytes,
  their order and the blocking write in a worker thread (a client slow to read never stalls the
  event loop) are as before.

``stdio_server`` claims only the streams it opens itself, so fd 0 and fd 1 are claimed here with
the SDK's own function first: while serving, fd 0 reads the null device and fd 1 points at stderr
(stray output from a hook or a library misses the wire; children read EOF), the wire is read and
written through private duplicates, and both descriptors are put back on exit. (The claim's helpers
are private to ``mcp.server.stdio``: :mod:`bridge.server.sdk_seams` holds them, with why and the
versions checked; ``tests/e2e`` checks a stray print stays off the wire.)
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TextIO

import anyio

from bridge.server.sdk_seams import claim_stdin, claim_stdout, unowned_text
from bridge.server.stdio_reader import LineReader

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
    """The SDK's ``stdio_server`` streams over this process's stdin and stdout (see the module docstring)."""
    from mcp.server import stdio as sdk_stdio

    async with AsyncExitStack() as stack:
        out_buffer, release_out = claim_stdout()
        if release_out is not None:
            stack.callback(release_out)
        in_buffer, release_in = claim_stdin()
        if release_in is not None:
            stack.callback(release_in)
        stdin: Any
        if in_buffer is sys.stdin.buffer:  # served in place (no private duplicate): the SDK's own reader
            stdin = anyio.wrap_file(unowned_text(in_buffer, encoding="utf-8", errors="replace"))
        else:
            stdin = LineReader(in_buffer.fileno())
        stdout = _OneHopStdout(unowned_text(out_buffer, encoding="utf-8"))
        # Duck-typed AsyncFiles: the SDK's reader only iterates stdin, its writer awaits write and flush.
        async with sdk_stdio.stdio_server(stdin=stdin, stdout=stdout) as streams:  # type: ignore[arg-type]
            yield streams
