"""OpenTelemetry traces: a span per tools/call whose parent is the caller's W3C context, a child span
per upstream request, and that context on the wire to the API (never the caller's baggage)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from bridge.ops.settings import OpsSettings
from tests.ops.conftest import Gated, bridge_on, gated_upstream, observed_server
from tests.services.otlp_sink import running_sink

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{CALLER_SPAN}-01"
TRACED = OpsSettings(traces=True)


def by_name(spans: Any, name: str) -> Any:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


async def test_a_call_is_a_server_span_under_the_callers_meta_context_with_a_client_child() -> None:
    exporter = InMemorySpanExporter()
    state = Gated()
    async with observed_server(TRACED, state, span_processor=SimpleSpanProcessor(exporter)) as (server, _):
        async with Client(server) as client:
            meta = {"traceparent": TRACEPARENT, "tracestate": "vendor=1", "baggage": "user=alice"}
            result = await client.call_tool("getPet", {"petId": 7}, meta=meta)  # type: ignore[arg-type]
    assert result.is_error is False
    spans = exporter.get_finished_spans()
    call = by_name(spans, "tools/call getPet")
    upstream = by_name(spans, "GET /pets/{petId}")
    assert call.kind == SpanKind.SERVER and upstream.kind == SpanKind.CLIENT
    assert format(call.context.trace_id, "032x") == TRACE_ID
    assert call.parent is not None and format(call.parent.span_id, "016x") == CALLER_SPAN
    assert upstream.parent is not None and upstream.parent.span_id == call.context.span_id
    assert call.attributes["gen_ai.tool.name"] == "getPet"
    assert call.attributes["mcp_bridge.outcome"] == "ok"
    assert call.attributes["mcp_bridge.operation"] == "GET /pets/{petId}"
    assert call.attributes["http.response.status_code"] == 200
    assert upstream.attributes["http.response.status_code"] == 200
    sent = state.headers[0]  # the API got the bridge's client span as parent, in the caller's trace
    assert sent["traceparent"] == f"00-{TRACE_ID}-{format(upstream.context.span_id, '016x')}-01"
    assert sent["tracestate"] == "vendor=1"
    assert "baggage" not in sent


async def test_without_a_caller_context_a_call_starts_its_own_trace_and_errors_are_marked() -> None:
    exporter = InMemorySpanExporter()
    async with observed_server(TRACED, Gated(), span_processor=SimpleSpanProcessor(exporter)) as (server, _):
        async with Client(server) as client:
            invalid = await client.call_tool("getPet", {"petId": "seven"})
            fine = await client.call_tool("getPet", {"petId": 2})
    assert invalid.is_error is True and fine.is_error is False
    spans = [s for s in exporter.get_finished_spans() if s.name == "tools/call getPet"]
    assert [s.attributes["mcp_bridge.outcome"] for s in spans] == ["tool_error", "ok"]
    assert spans[0].status.status_code == StatusCode.ERROR and spans[0].parent is None
    assert spans[0].context.trace_id != spans[1].context.trace_id


async def test_telemetry_off_adds_no_middleware_and_no_wrapper() -> None:
    async with observed_server(OpsSettings(), Gated()) as (server, operations):
        # Only the bridge's own wire paths (tools/list cache, tools/call structured content): no tracing layer.
        assert [type(m).__name__ for m in server.middleware] == ["_ListToolsWireCache", "CallResultWire"]
        assert operations.telemetry is None and operations.recorder is None


async def test_end_to_end_the_http_headers_context_reaches_the_api_and_the_spans_the_collector(
    tmp_path: Path,
) -> None:
    with running_sink() as (sink, endpoint):
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
        os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "100"
        try:
            async with gated_upstream() as upstream, bridge_on(upstream, tmp_path, "--otel", "traces") as bridge:
                http = create_mcp_http_client(headers={"traceparent": TRACEPARENT})
                with anyio.fail_after(20):
                    async with http, Client(streamable_http_client(bridge.url, http_client=http)) as client:
                        result = await client.call_tool("getPet", {"petId": 5})
                    assert result.is_error is False
                    while not any(s.name == "tools/call getPet" for s in sink.spans()):
                        await anyio.sleep(0.05)
        finally:
            del os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"], os.environ["OTEL_BSP_SCHEDULE_DELAY"]
        spans = sink.spans()
    sent = [h for h in upstream.headers if "traceparent" in h]
    assert len(sent) == 1 and sent[0]["traceparent"].split("-")[1] == TRACE_ID
    call = next(s for s in spans if s.name == "tools/call getPet")
    client_span = next(s for s in spans if s.name == "GET /pets/{petId}")
    assert call.trace_id.hex() == TRACE_ID and call.parent_span_id.hex() == CALLER_SPAN
    assert client_span.parent_span_id == call.span_id
    assert sent[0]["traceparent"].split("-")[2] == client_span.span_id.hex()
