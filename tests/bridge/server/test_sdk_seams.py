"""The MCP SDK's private names that bridge.server.sdk_seams uses still exist as used, and the hook stays scoped."""

from __future__ import annotations

import inspect
import io

import anyio
import pytest
from mcp.server import stdio as sdk_stdio
from mcp.server.streamable_http import StreamableHTTPServerTransport

from bridge.server import sdk_seams

pytestmark = pytest.mark.anyio


def test_the_stdio_claim_helpers_exist_with_the_signatures_used() -> None:
    assert list(inspect.signature(sdk_stdio._claim_fd).parameters)[:4] == ["fd", "stream", "mode", "open_diversion"]
    assert callable(sdk_stdio._open_stdout_diversion) and callable(sdk_stdio._open_stdin_diversion)
    assert issubclass(sdk_stdio._UnownedTextWrapper, io.TextIOWrapper)


def test_the_transport_still_calls_the_unanswered_request_hook_by_that_name() -> None:
    source = inspect.getsource(StreamableHTTPServerTransport)
    assert "partial(self._terminate_unanswered_request, message.id)" in source
    hook = StreamableHTTPServerTransport._terminate_unanswered_request
    assert inspect.iscoroutinefunction(hook)
    assert list(inspect.signature(hook).parameters) == ["self", "request_id"]


class _StandIn:
    """What the hook touches on a transport: its write stream (the SDK's answer) and ``close_sse_stream``."""

    def __init__(self) -> None:
        self._write_stream, self.reader = anyio.create_memory_object_stream[object](1)
        self.closed: list[str] = []

    def close_sse_stream(self, request_id: str) -> None:
        self.closed.append(request_id)


async def test_a_transport_outside_a_bridge_app_keeps_the_sdks_answer_to_a_cancelled_request() -> None:
    sdk_seams.no_answer_to_a_cancelled_request()
    outside = _StandIn()
    await StreamableHTTPServerTransport._terminate_unanswered_request(outside, 7)  # type: ignore[arg-type]
    answer = outside.reader.receive_nowait()
    assert "-32800" in repr(answer) or "Request cancelled" in repr(answer)
    assert outside.closed == []

    inside = _StandIn()

    async def app(scope: object, receive: object, send: object) -> None:
        await StreamableHTTPServerTransport._terminate_unanswered_request(inside, 7)  # type: ignore[arg-type]

    await sdk_seams.bridge_requests(app)({}, None, None)  # type: ignore[arg-type]
    assert inside.closed == ["7"]
    with pytest.raises(anyio.WouldBlock):
        inside.reader.receive_nowait()
