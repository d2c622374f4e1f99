"""stdio: stdin's lines read on the event loop when the descriptor can be polled, not in a worker thread.

The SDK's stdio reader iterates an ``anyio.wrap_file`` over stdin: every line is a hop to a worker
thread and back, about as much CPU as a small tools/call's own wire work. A pipe or a terminal can
be polled: :class:`LineReader` waits until the descriptor is readable (the event loop's selector)
and then ``os.read`` returns at once with what is there, without the descriptor ever being made
non-blocking (that flag would be shared with every other holder of the pipe). A descriptor the
selector refuses (a regular file: ``serve < requests.jsonl``) is read in a worker thread, as before.

The lines are the ones the SDK's text wrapper gives: UTF-8 with bad bytes replaced, universal
newlines (``\\r\\n`` and a lone ``\\r`` end a line too and read as ``\\n``), each line with its
``\\n``, the last one without when the input ends without one
(``tests/bridge/server/test_stdio_reader.py`` compares the two on random inputs and chunkings).
"""

from __future__ import annotations

import codecs
import io
import os
from collections import deque

import anyio

__all__ = ["LineReader"]

_CHUNK = 64 * 1024


class LineReader:
    """An async iterator of the text lines of a readable descriptor (see the module docstring)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._decoder = io.IncrementalNewlineDecoder(codecs.getincrementaldecoder("utf-8")("replace"), translate=True)
        self._lines: deque[str] = deque()  # complete lines not yet taken
        self._partial: list[str] = []  # the text of a line not yet ended
        self._eof = False
        self._pollable = True

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        while not self._lines:
            if self._eof:
                raise StopAsyncIteration
            self._take(await self._read())
        return self._lines.popleft()

    async def _read(self) -> bytes:
        if self._pollable:
            try:
                await anyio.wait_readable(self._fd)
            except (OSError, ValueError, NotImplementedError):
                self._pollable = False  # not a descriptor the selector takes: a worker thread, as the SDK does
            else:
                return os.read(self._fd, _CHUNK)
        return await anyio.to_thread.run_sync(os.read, self._fd, _CHUNK)

    def _take(self, data: bytes) -> None:
        """Split what was read into lines (``b""``: the input ended)."""
        final = not data
        pieces = self._decoder.decode(data, final=final).split("\n")
        for piece in pieces[:-1]:  # each ends a line
            self._partial.append(piece)
            self._lines.append("".join(self._partial) + "\n")
            self._partial = []
        self._partial.append(pieces[-1])
        if final:
            self._eof = True
            rest = "".join(self._partial)
            self._partial = []
            if rest:
                self._lines.append(rest)
