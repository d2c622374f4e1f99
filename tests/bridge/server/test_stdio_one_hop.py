"""The one-hop stdout of bridge/server/stdio_wire.py writes, through the SDK's own stdio writer, the
bytes the SDK's ``anyio.wrap_file`` stdout writes (hypothesis over messages of any text)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from io import BytesIO, TextIOWrapper
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCNotification

from bridge.server.stdio_wire import _OneHopStdout

_data = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text()),
    lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=5), kids, max_size=3)),
    max_leaves=8,
)


async def _no_input() -> AsyncIterator[str]:
    return
    yield  # an async generator that ends at once: the SDK's reader finds end of input


async def _written(make_stdout: Callable[[TextIOWrapper], Any], messages: list[Any]) -> bytes:
    buffer = BytesIO()
    wrapper = TextIOWrapper(buffer, encoding="utf-8")
    async with stdio_server(stdin=_no_input(), stdout=make_stdout(wrapper)) as (read, write):  # type: ignore[arg-type]
        async with read, write:
            for data in messages:
                note = JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"data": data})
                await write.send(SessionMessage(note))
    wrapper.flush()
    return buffer.getvalue()


@settings(max_examples=60, deadline=None)
@given(st.lists(_data, max_size=6))
def test_one_hop_stdout_writes_the_bytes_the_sdks_writer_writes(messages: list[Any]) -> None:
    async def both() -> tuple[bytes, bytes]:
        return await _written(_OneHopStdout, messages), await _written(anyio.wrap_file, messages)

    ours, sdks = anyio.run(both)
    assert ours == sdks
    assert ours.count(b"\n") == len(messages)
