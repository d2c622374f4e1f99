"""Telemetry observes through the parts' own hooks: no attribute of a live upstream, client or exchanger is replaced."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from bridge.ops.instrument import observe_exchanger, observe_upstream
from bridge.upstream.client import Upstream
from tests.bridge.identity.test_token_exchange import TokenEndpoint, exchanger
from tests.bridge.upstream.test_upstream import API, get

pytestmark = pytest.mark.anyio


class _Counting:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.lookups: list[str] = []

    def upstream(self, operation: str, status: str, seconds: float) -> None:
        self.calls.append((operation, status))

    def rejected(self, scope: str, kind: str) -> None:
        pass

    def exchange_cache(self, result: str) -> None:
        self.lookups.append(result)


class _Tracer:
    """Enough of an OpenTelemetry tracer for one client span."""

    def start_span(self, name: str, **_: Any) -> Any:
        from opentelemetry import trace

        return trace.NonRecordingSpan(
            trace.SpanContext(0x1234, 0x5678, is_remote=False, trace_flags=trace.TraceFlags(1))
        )


async def test_an_observed_upstream_keeps_its_own_send_and_transport_and_still_records() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"content-type": "application/json"}, stream=httpx.ByteStream(b"{}"))

    recorder = _Counting()
    mock = httpx.MockTransport(answer)
    async with Upstream(API, transport=mock) as upstream:
        before = dict(vars(upstream))
        observe_upstream(upstream, tracer=_Tracer(), recorder=recorder)  # type: ignore[arg-type]
        response = await upstream.send(get())
        assert "send" not in vars(upstream)
        assert {k for k, v in vars(upstream).items() if before.get(k) is not v} == {"_wrapped"}
        client = before["_client"]
        assert [v for v in vars(client).values() if isinstance(v, httpx.AsyncBaseTransport)] == [mock]
    assert response.status == 200
    assert [status for _, status in recorder.calls] == ["200"]
    assert seen[0].headers["traceparent"].startswith("00-")


async def test_an_observed_exchanger_keeps_its_methods_and_counts_hits_and_misses() -> None:
    made = exchanger(TokenEndpoint())
    recorder = _Counting()
    observe_exchanger(made, recorder)  # type: ignore[arg-type]
    assert not {"token_for", "_exchange"} & vars(made).keys()
    await made.token_for("alice", "tok-a-0123456789", ("pets:read",))
    await made.token_for("alice", "tok-a-0123456789", ("pets:read",))
    assert recorder.lookups == ["miss", "hit"]
