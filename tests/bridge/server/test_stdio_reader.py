"""stdin's lines read on the event loop (bridge.server.stdio_reader) are the lines the SDK's text wrapper gives.

The SDK reads stdin through ``TextIOWrapper(buffer, encoding="utf-8", errors="replace")``; Hypothesis
makes inputs with every line ending (``\\n``, ``\\r\\n``, a lone ``\\r``), bytes that are not UTF-8,
characters of several bytes, and no final newline, read in chunks of every size so that a
character or a ``\\r\\n`` falls across two reads.
"""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import anyio
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bridge.server import stdio_reader
from bridge.server.stdio_reader import LineReader

_pieces = st.sampled_from(
    [b"\n", b"\r\n", b"\r", b"{}", b'{"a":"\xc3\xa9"}', b"\xe2\x82", b"\xac", b"\xff", b"x", b" "]
)
inputs = st.lists(_pieces, max_size=30).map(b"".join)


def _sdk_lines(data: bytes) -> list[str]:
    return list(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace"))


async def _read_all(fd: int) -> list[str]:
    with anyio.fail_after(30):
        return [line async for line in LineReader(fd)]


def _through_a_pipe(data: bytes, step: int) -> list[str]:
    """What the reader reads of ``data`` written ``step`` bytes a write by another thread."""
    read_end, write_end = os.pipe()

    def feed() -> None:
        with os.fdopen(write_end, "wb") as pipe:
            for i in range(0, len(data), step):
                pipe.write(data[i : i + step])
                pipe.flush()

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        return anyio.run(_read_all, read_end)
    finally:
        feeder.join(timeout=30)
        os.close(read_end)


@settings(max_examples=300, deadline=None)
@given(inputs, st.integers(1, 8))
@example(b'{"a":1}\r\n{"b":2}\r', 1)
@example(b"\xe2\x82\xac\n", 2)
@example(b"no final newline", 3)
def test_the_lines_are_the_sdk_text_wrappers_lines(data: bytes, chunk: int) -> None:
    previous = stdio_reader._CHUNK
    stdio_reader._CHUNK = chunk
    try:
        read_end, write_end = os.pipe()
        os.write(write_end, data)  # small inputs: the pipe holds them whole
        os.close(write_end)
        try:
            got = anyio.run(_read_all, read_end)
        finally:
            os.close(read_end)
    finally:
        stdio_reader._CHUNK = previous
    assert got == _sdk_lines(data)


def test_lines_written_a_byte_at_a_time_arrive_whole() -> None:
    data = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"x":"\xc3\xa9"}\r\nlast'
    assert _through_a_pipe(data, 1) == _sdk_lines(data)  # a byte a write: the reader meets every boundary


def test_a_regular_file_the_selector_refuses_is_read_in_a_worker_thread(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    data = b'{"id":1}\n{"id":2}\n'
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        got = anyio.run(_read_all, fd)
    finally:
        os.close(fd)
    assert got == _sdk_lines(data)


@pytest.mark.parametrize("size", [70_000, 300_000])
def test_a_line_longer_than_a_read_is_one_line(size: int) -> None:
    data = b'{"a":"' + b"x" * size + b'"}\n{}\n'
    assert _through_a_pipe(data, 4096) == _sdk_lines(data)
